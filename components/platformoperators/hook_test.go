package platformoperators_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/components/platformoperators"
	"github.com/payload-apply/payload-apply/internal/golden"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
)

// techPreview plans the embedded payload with TechPreviewNoUpgrade, the
// given extra manifests and catalog (nil: none) and BundleDeployment shape.
func techPreview(extra, catalog fstest.MapFS, shape platformoperators.Shape) plan.Options {
	opts := plan.Options{FeatureSet: "TechPreviewNoUpgrade", Components: plan.Components{BundleDeploymentShape: shape}}
	if extra != nil {
		opts.ExtraManifests = extra
	}
	if catalog != nil {
		opts.Components.Catalog = catalog
	}
	return opts
}

// previews returns the plan's step previews as render prints them.
func previews(t *testing.T, p *plan.Plan) string {
	t.Helper()
	var b bytes.Buffer
	for _, s := range p.Steps {
		for _, m := range s.Preview {
			data, err := plan.MarshalObject(m)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "---\n# Source: %s\n%s", m.Position(), data)
		}
	}
	return b.String()
}

func TestRenderBundleDeployments(t *testing.T) {
	for _, shape := range []string{"v1alpha2", "v1alpha1"} {
		t.Run(shape, func(t *testing.T) {
			p, err := plan.Build(context.Background(), plan.Options{
				FeatureSet:     "TechPreviewNoUpgrade",
				ExtraManifests: os.DirFS("testdata/extra"),
				Components: plan.Components{Catalog: os.DirFS("testdata/catalog"),
					BundleDeploymentShape: platformoperators.Shape(shape)},
			})
			if err != nil {
				t.Fatal(err)
			}
			golden.AssertTestdata(t, "bundledeployments.yaml", previews(t, p))
			if len(p.Findings) > 0 {
				t.Errorf("findings: %v", p.Findings)
			}
			steps := pomSteps(p)
			if len(steps) != 1 {
				t.Fatalf("%d steps, want 1", len(steps))
			}
			s := steps[0]
			if s.Step.Name() != platformoperators.StepName || s.File != "generated/99_platformoperators_platformoperators.step" {
				t.Errorf("step %s at %s", s.Step.Name(), s.File)
			}
			wantAfter := []manifest.ID{
				{Kind: "Namespace", Name: "openshift-platform-operators"},
				{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "platformoperators.platform.openshift.io"},
				{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "bundledeployments.core.rukpak.io"},
				{Group: "platform.openshift.io", Kind: "PlatformOperator", Name: "cert-manager"},
				{Group: "platform.openshift.io", Kind: "PlatformOperator", Name: "local-storage"},
			}
			if diff := cmp.Diff(wantAfter, s.After); diff != "" {
				t.Errorf("After (-want +got):\n%s", diff)
			}
			// The PlatformOperators stay in the plan; the previews are not
			// objects of the plan (the engine never applies them).
			var pos int
			for _, m := range p.Objects {
				if m.GVK.Kind == "PlatformOperator" {
					pos++
				}
				if m.GVK.Kind == "BundleDeployment" {
					t.Errorf("BundleDeployment %s among the objects to apply", m.Obj.GetName())
				}
			}
			if pos != 2 {
				t.Errorf("%d PlatformOperators in the plan, want 2", pos)
			}
		})
	}
}

func TestRenderPlatformOperatorFindings(t *testing.T) {
	catalog := fstest.MapFS{}
	for _, f := range []string{"cert-manager/catalog.yaml", "local-storage/catalog.json"} {
		data, err := os.ReadFile(filepath.Join("testdata/catalog", f))
		if err != nil {
			t.Fatal(err)
		}
		catalog[f] = &fstest.MapFile{Data: data}
	}
	extra := fstest.MapFS{"po.yaml": {Data: []byte(`apiVersion: platform.openshift.io/v1alpha1
kind: PlatformOperator
metadata: {name: first}
spec: {package: {name: openshift-cert-manager-operator}}
---
apiVersion: platform.openshift.io/v1alpha1
kind: PlatformOperator
metadata: {name: second}
spec: {package: {name: openshift-cert-manager-operator}}
---
apiVersion: platform.openshift.io/v1alpha1
kind: PlatformOperator
metadata: {name: typo}
spec: {package: {name: openshift-cert-manager-operatr}}
`)}}
	p, err := plan.Build(context.Background(), techPreview(extra, catalog, ""))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range p.Findings {
		got = append(got, f.String())
	}
	want := []string{
		`extra/po.yaml#1: warning: PlatformOperator.platform.openshift.io/second: package "openshift-cert-manager-operator" is also named by PlatformOperator.platform.openshift.io/first (extra/po.yaml#0): only the PlatformOperator created first installs it; if that is first, this one reports Installed=False InstallFailed`,
		`extra/po.yaml#2: warning: PlatformOperator.platform.openshift.io/typo: package "openshift-cert-manager-operatr": not in the catalog: it will report Installed=False SourceFailed`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if n := strings.Count(previews(t, p), "kind: BundleDeployment"); n != 1 {
		t.Errorf("%d BundleDeployments previewed, want 1", n)
	}
}

func TestRenderPlatformOperatorErrors(t *testing.T) {
	po := func(name, pkg string) string {
		return fmt.Sprintf("apiVersion: platform.openshift.io/v1alpha1\nkind: PlatformOperator\nmetadata: {name: %s}\nspec: {package: {name: %q}}\n", name, pkg)
	}
	good := fstest.MapFS{"po.yaml": {Data: []byte(po("cert-manager", "openshift-cert-manager-operator"))}}
	catalog := fstest.MapFS{"c.yaml": {Data: []byte("schema: olm.package\nname: openshift-cert-manager-operator\n")}}
	cases := []struct {
		name  string
		opts  plan.Options
		err   string // "" for success
		steps int
	}{
		{
			name: "invalid package names",
			opts: techPreview(fstest.MapFS{"po.yaml": {Data: []byte(po("bad", "Cert_Manager") + "---\n" + po("long", strings.Repeat("x", 57)))}}, catalog, ""),
			err: `component platformoperators: extra/po.yaml#0: PlatformOperator.platform.openshift.io/bad: spec.package.name "Cert_Manager": must match [a-z0-9]([-a-z0-9]*[a-z0-9])? (lowercase letters, digits and '-', starting and ending with a letter or digit)` + "\n" +
				`extra/po.yaml#1: PlatformOperator.platform.openshift.io/long: spec.package.name "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": longer than 56 characters (57)`,
		},
		{
			name: "Default feature set",
			opts: plan.Options{ExtraManifests: good, Components: plan.Components{Catalog: catalog}},
			err:  `component platformoperators: extra/po.yaml#0: PlatformOperator.platform.openshift.io/cert-manager: platform operators need the TechPreviewNoUpgrade feature set and the platform operators manager in the plan (feature set Default, manager not in the plan)`,
		},
		{
			name: "manager excluded by the profile",
			opts: plan.Options{FeatureSet: "TechPreviewNoUpgrade", Profile: "hypershift", ExtraManifests: good, Components: plan.Components{Catalog: catalog}},
			err:  `component platformoperators: extra/po.yaml#0: PlatformOperator.platform.openshift.io/cert-manager: platform operators need the TechPreviewNoUpgrade feature set and the platform operators manager in the plan (feature set TechPreviewNoUpgrade, manager not in the plan)`,
		},
		{
			name: "no catalog",
			opts: techPreview(good, nil, ""),
			err:  `component platformoperators: extra/po.yaml#0: PlatformOperator.platform.openshift.io/cert-manager: spec.package.name "openshift-cert-manager-operator": no catalog to source it from (give --catalog DIR)`,
		},
		{
			name: "bad catalog",
			opts: techPreview(good, fstest.MapFS{"c.yaml": {Data: []byte("schema: olm.bundle\nname: b\npackage: p\n")}}, ""),
			err:  `component platformoperators: catalog: c.yaml#0: olm.bundle "b": package "p" has no olm.package document`,
		},
		{
			name: "bad shape",
			opts: techPreview(good, catalog, "v2"),
			err:  `component platformoperators: bundle deployment shape "v2": want v1alpha2 or v1alpha1`,
		},
		{
			name:  "tech preview without PlatformOperators or catalog: the step still keeps the aggregate ClusterOperator",
			opts:  techPreview(nil, nil, ""),
			steps: 1,
		},
		{
			name: "Default without PlatformOperators: nothing",
			opts: plan.Options{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.Build(context.Background(), tc.opts)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error:\n got %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(pomSteps(p)); n != tc.steps {
				t.Errorf("%d steps, want %d", n, tc.steps)
			}
		})
	}
}

// The hook is a component.Hook usable without plan.
var _ component.Hook = platformoperators.Hook{}

// pomSteps returns the plan's steps that belong to this component (other
// components, such as ingress, add their own).
func pomSteps(p *plan.Plan) []component.StepSpec {
	var out []component.StepSpec
	for _, s := range p.Steps {
		if s.Step.Name() == platformoperators.StepName {
			out = append(out, s)
		}
	}
	return out
}

func TestPlatformOperatorsStepFile(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"platformoperators.yaml"}, "generated/platformoperators_platformoperators.step"},
		{[]string{"b.yaml", "a-b.yml", "b"}, "generated/b_platformoperators.step"},
		{[]string{"x/99_pos.yaml", "pos.json"}, "generated/pos_platformoperators.step"},
	} {
		got := platformoperators.PlatformOperatorsStepFile(tc.files)
		if got != tc.want {
			t.Errorf("PlatformOperatorsStepFile(%q) = %q, want %q", tc.files, got, tc.want)
		}
		// The step sorts after every file it names.
		for _, f := range tc.files {
			if base := path.Base(got); base <= path.Base(f) {
				t.Errorf("%s sorts before %s", base, f)
			}
		}
	}
}
