package platformoperators_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
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
	"github.com/payload-apply/payload-apply/payload"
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

// bdCRDFile is the embedded payload's BundleDeployment CRD.
const bdCRDFile = "release-manifests/0000_50_cluster-platform-operators-manager_00-rukpak-bundledeployments.crd.yaml"

// v1alpha1CRD is rukpak's v1alpha1 BundleDeployment CRD as OpenShift 4.12
// served it.
const v1alpha1CRD = "testdata/crds/rukpak-v0.9.0-bundledeployments.crd.yaml"

// payloadWith returns the embedded payload with its BundleDeployment CRD
// replaced by the file crd ("": removed), as a payload of a rukpak that
// serves another version, or none, would be.
func payloadWith(t *testing.T, crd string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(payload.Embedded(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(payload.Embedded(), p)
		out[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(out, bdCRDFile)
	if crd != "" {
		data, err := os.ReadFile(crd)
		if err != nil {
			t.Fatal(err)
		}
		out[bdCRDFile] = &fstest.MapFile{Data: data}
	}
	return out
}

func TestRenderBundleDeployments(t *testing.T) {
	for _, shape := range []string{"v1alpha2", "v1alpha1"} {
		t.Run(shape, func(t *testing.T) {
			opts := plan.Options{
				FeatureSet:     "TechPreviewNoUpgrade",
				ExtraManifests: os.DirFS("testdata/extra"),
				Components: plan.Components{Catalog: os.DirFS("testdata/catalog"),
					BundleDeploymentShape: platformoperators.Shape(shape)},
			}
			if shape == "v1alpha1" {
				// A payload whose rukpak serves v1alpha1, as 4.12's did.
				opts.Payload = payloadWith(t, v1alpha1CRD)
			}
			p, err := plan.Build(context.Background(), opts)
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
	// A bundle in the channel whose version is not semver: passed over, and
	// named.
	cm := catalog["cert-manager/catalog.yaml"]
	cm.Data = append(bytes.Replace(cm.Data, []byte("- name: cert-manager-operator.v1.6.0\n"), []byte("- name: cert-manager-operator.v1.6.0\n- name: cert-manager-operator.v1.9\n"), 1),
		[]byte("---\nschema: olm.bundle\nname: cert-manager-operator.v1.9\npackage: openshift-cert-manager-operator\nimage: registry.example.com/cm:v1.9\n"+
			"properties:\n- type: olm.package\n  value: {packageName: openshift-cert-manager-operator, version: \"1.9\"}\n")...)
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
		`extra/po.yaml#0: warning: PlatformOperator.platform.openshift.io/first: package "openshift-cert-manager-operator": bundle cert-manager-operator.v1.9 (cert-manager/catalog.yaml#5) passed over: version "1.9": not semver: No Major.Minor.Patch elements found; install modes unknown: no olm.csv.metadata and no ClusterServiceVersion in olm.bundle.object; installing cert-manager-operator.v1.7.1 (1.7.1)`,
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
		name     string
		opts     plan.Options
		err      string // "" for success
		steps    int
		findings []string
	}{
		{
			name: "invalid package names",
			opts: techPreview(fstest.MapFS{"po.yaml": {Data: []byte(po("bad", "Cert_Manager") + "---\n" + po("long", strings.Repeat("x", 57)))}}, catalog, ""),
			err: `component platformoperators: extra/po.yaml#0: PlatformOperator.platform.openshift.io/bad: spec.package.name "Cert_Manager": must be a lowercase DNS label: letters, digits and '-', starting and ending with a letter or digit (^[a-z0-9]([-a-z0-9]*[a-z0-9])?$); the API server accepts it only because the CRD's pattern is unanchored` + "\n" +
				`extra/po.yaml#1: PlatformOperator.platform.openshift.io/long: spec.package.name "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": longer than 56 characters (57)`,
		},
		{
			name: "a name too long for the v1alpha2 BundleDeployment",
			opts: techPreview(fstest.MapFS{"po.yaml": {Data: []byte(po(strings.Repeat("n", 52), "openshift-cert-manager-operator") + "---\n" + po(strings.Repeat("n", 53), "other"))}}, catalog, ""),
			err: `component platformoperators: extra/po.yaml#1: PlatformOperator.platform.openshift.io/` + strings.Repeat("n", 53) + `: metadata.name "` + strings.Repeat("n", 53) +
				`": longer than 52 characters (53): rukpak's v1alpha2 BundleDeployment, named after the PlatformOperator, takes at most 52`,
		},
		{
			name: "a name too long for the v1alpha1 BundleDeployment",
			opts: withPayload(techPreview(fstest.MapFS{"po.yaml": {Data: []byte(po(strings.Repeat("n", 46), "openshift-cert-manager-operator"))}}, catalog,
				platformoperators.ShapeV1Alpha1), payloadWith(t, v1alpha1CRD)),
			err: `component platformoperators: extra/po.yaml#0: PlatformOperator.platform.openshift.io/` + strings.Repeat("n", 46) + `: metadata.name "` + strings.Repeat("n", 46) +
				`": longer than 45 characters (46): rukpak's v1alpha1 BundleDeployment, named after the PlatformOperator, takes at most 45`,
		},
		{
			name: "v1alpha1 shape, the payload's rukpak serves v1alpha2",
			opts: techPreview(good, catalog, platformoperators.ShapeV1Alpha1),
			err: `component platformoperators: ` + bdCRDFile + `#0: CustomResourceDefinition.apiextensions.k8s.io/bundledeployments.core.rukpak.io: serves v1alpha2, not v1alpha1: ` +
				`the BundleDeployment shape must be a version the payload's rukpak serves (--bundle-deployment-shape)`,
		},
		{
			name: "v1alpha2 shape, the payload's rukpak serves v1alpha1",
			opts: withPayload(techPreview(good, catalog, ""), payloadWith(t, v1alpha1CRD)),
			err: `component platformoperators: ` + bdCRDFile + `#0: CustomResourceDefinition.apiextensions.k8s.io/bundledeployments.core.rukpak.io: serves v1alpha1, not v1alpha2: ` +
				`the BundleDeployment shape must be a version the payload's rukpak serves (--bundle-deployment-shape)`,
		},
		{
			name:  "no BundleDeployment CRD in the payload: a warning, the cluster may serve it",
			opts:  withPayload(techPreview(good, catalog, ""), payloadWith(t, "")),
			steps: 1,
			findings: []string{`extra/po.yaml#0: warning: PlatformOperator.platform.openshift.io/cert-manager: the plan has no CRD bundledeployments.core.rukpak.io: ` +
				`the cluster must serve BundleDeployment core.rukpak.io/v1alpha2 (rukpak) or every PlatformOperator reports Installed=False InstallFailed`,
				`extra/po.yaml#0: warning: PlatformOperator.platform.openshift.io/cert-manager: package "openshift-cert-manager-operator": has no bundles in the catalog: it will report Installed=False SourceFailed`},
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
			var findings []string
			for _, f := range p.Findings {
				findings = append(findings, f.String())
			}
			if diff := cmp.Diff(tc.findings, findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// withPayload returns opts planning payload p.
func withPayload(opts plan.Options, p fs.FS) plan.Options {
	opts.Payload = p
	return opts
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
