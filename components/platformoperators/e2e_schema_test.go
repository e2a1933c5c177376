//go:build e2e

package platformoperators_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/components/platformoperators"
	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// TestRealSchemas runs the step against the CRDs real clusters install:
// the real payload's PlatformOperator CRD (openshift/api's, with its
// unanchored package-name pattern), rukpak v0.17.0's v1alpha2 BundleDeployment CRD and
// OpenShift 4.12's v1alpha1 one, so that what a real API server rejects is
// rejected here too. It leaves no BundleDeployment CRD behind: setup
// installs the plan's again.
func TestRealSchemas(t *testing.T) {
	e, step, _ := setup(t)
	ctx := t.Context()
	// The real payload's own PlatformOperator CRD, not the embedded copy
	// (payload/crdfidelity_test.go holds the two to the same validation).
	e.installCRD(e.readCRD(filepath.Join(realpayload.Dir(t), "release-manifests", "0000_50_cluster-platform-operators-manager_00-platformoperator.crd.yaml")))

	t.Run("package names: the API server takes what the unanchored pattern lets in, the step refuses it", func(t *testing.T) {
		e := e.with(t)
		names := map[string]string{
			"pkg-ok":         "local-storage-operator",
			"pkg-upper":      "Cert-Manager",
			"pkg-dot":        "cert.manager",
			"pkg-dash":       "-cert",
			"pkg-underscore": "cert_manager",
			"pkg-caps":       "CERT",
			"pkg-long":       strings.Repeat("a", 57),
		}
		accepted := map[string]bool{}
		for po, pkg := range names {
			err := e.createPlatformOperator(po, pkg)
			if err != nil && !apierrors.IsInvalid(err) {
				t.Fatalf("%s: %v", po, err)
			}
			accepted[po] = err == nil
			if accepted[po] != platformoperators.CRDAcceptsPackageName(pkg) {
				t.Errorf("%s %q: the API server accepts it: %v; CRDAcceptsPackageName says %v (%v)", po, pkg, accepted[po], !accepted[po], err)
			}
		}
		want := map[string]bool{"pkg-ok": true, "pkg-upper": true, "pkg-dot": true, "pkg-dash": true, "pkg-underscore": true}
		if diff := cmp.Diff(want, trueOnly(accepted)); diff != "" {
			t.Errorf("accepted by the API server (-want +got):\n%s", diff)
		}
		e.reconcile(step)
		for po := range want {
			c := meta.FindStatusCondition(e.platformOperator(po).Status.Conditions, platformoperators.ConditionInstalled)
			switch {
			case po == "pkg-ok":
				if c.Reason != platformoperators.ReasonUnpackPending {
					t.Errorf("%s: %s %s", po, c.Reason, c.Message)
				}
			case c.Reason != platformoperators.ReasonSourceFailed || !strings.Contains(c.Message, "the CRD's pattern is unanchored"):
				t.Errorf("%s: %s %s, want SourceFailed saying why", po, c.Reason, c.Message)
			}
		}
	})

	bdV2 := platformoperators.ShapeV1Alpha2.GroupVersionKind()
	t.Run("v1alpha2: rukpak's CRD rejects what rukpak rejects", func(t *testing.T) {
		e := e.with(t)
		bds := e.client(bdV2, "")
		bd := func(name string, edit func(spec map[string]any)) *unstructured.Unstructured {
			spec := map[string]any{"provisionerClassName": platformoperators.RegistryProvisioner,
				"source": map[string]any{"type": "image", "image": map[string]any{"ref": "registry.example.com/b:1"}}}
			if edit != nil {
				edit(spec)
			}
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.rukpak.io/v1alpha2", "kind": "BundleDeployment",
				"metadata": map[string]any{"name": name}, "spec": spec}}
		}
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		for name, c := range map[string]struct {
			obj   *unstructured.Unstructured
			field string // "" when the server accepts it
		}{
			"as the step writes it":        {bd("ok", nil), ""},
			"52 characters":                {bd(strings.Repeat("n", 52), nil), ""},
			"53 characters":                {bd(strings.Repeat("n", 53), nil), "metadata.name"},
			"the enhancement's class name": {bd("dotted", func(s map[string]any) { s["provisionerClassName"] = "core.rukpak.io/registry" }), "spec.provisionerClassName"},
			"no source":                    {bd("nosource", func(s map[string]any) { delete(s, "source") }), "spec.source"},
			"two sources": {bd("two", func(s map[string]any) {
				s["source"].(map[string]any)["http"] = map[string]any{"url": "https://example.com/b.tgz"}
			}), "spec.source"},
		} {
			_, err := bds.Create(ctx, c.obj, dry)
			switch {
			case c.field == "" && err != nil:
				t.Errorf("%s: rejected: %v", name, err)
			case c.field != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.field)):
				t.Errorf("%s: %v, want invalid %s", name, err, c.field)
			}
		}
		// The step refuses a PlatformOperator whose name is too long before
		// the server would.
		if err := e.createPlatformOperator(strings.Repeat("p", 53), "openshift-cert-manager-operator"); err != nil {
			t.Fatal(err)
		}
		e.reconcile(step)
		c := meta.FindStatusCondition(e.platformOperator(strings.Repeat("p", 53)).Status.Conditions, platformoperators.ConditionInstalled)
		if c.Reason != platformoperators.ReasonInstallFailed || !strings.Contains(c.Message, "longer than 52 characters (53)") {
			t.Errorf("53-character PlatformOperator: %s %s", c.Reason, c.Message)
		}
	})

	t.Run("rukpak's UnpackFailed is carried onto the PlatformOperator and the aggregate", func(t *testing.T) {
		e := e.with(t)
		e.setBundleDeploymentConditions("pkg-ok", platformoperators.ShapeV1Alpha2,
			metav1.Condition{Type: "HasValidBundle", Status: "False", Reason: "UnpackFailed",
				Message: "convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled"})
		e.reconcile(step)
		c := meta.FindStatusCondition(e.platformOperator("pkg-ok").Status.Conditions, platformoperators.ConditionInstalled)
		if want := "BundleDeployment pkg-ok: HasValidBundle=False: UnpackFailed: convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled"; c.Reason != platformoperators.ReasonInstallFailed || c.Message != want {
			t.Errorf("Installed %s %q, want InstallFailed %q", c.Reason, c.Message, want)
		}
		for _, cond := range e.clusterOperator(platformoperators.AggregateClusterOperator).Status.Conditions {
			if cond.Type == configv1.OperatorAvailable && (!strings.HasPrefix(cond.Message, "6 of 6 platform operators are not installed: ") ||
				!strings.Contains(cond.Message, "PlatformOperator pkg-ok: InstallFailed: BundleDeployment pkg-ok: HasValidBundle=False: UnpackFailed: convert")) {
				t.Errorf("Available message: %s", cond.Message)
			}
			if cond.Type == configv1.OperatorProgressing && (cond.Status != configv1.ConditionFalse || cond.Message != "no platform operator is installing: 6 of 6 failed") {
				t.Errorf("Progressing %s %s", cond.Status, cond.Message)
			}
		}
	})

	t.Run("v1alpha1 as OpenShift 4.12 served it", func(t *testing.T) {
		e := e.with(t)
		e.installCRD(e.readCRD("testdata/crds/rukpak-v0.9.0-bundledeployments.crd.yaml"))
		bdV1 := platformoperators.ShapeV1Alpha1.GroupVersionKind()
		// What we used to write, with the enhancement's class names, is
		// what a 4.12 cluster rejects.
		po := &platformoperators.PlatformOperator{}
		po.Name, po.UID = "old", "0c6f6c7e-0000-4000-8000-000000000000"
		b := &platformoperators.Bundle{Name: "b.v1", Package: "p", Image: "registry.example.com/b:1"}
		old := &unstructured.Unstructured{Object: platformoperators.BundleDeployment(po, b, platformoperators.ShapeV1Alpha1)}
		if _, err := e.client(bdV1, "").Create(ctx, old, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("the v1alpha1 shape is rejected: %v", err)
		}
		_ = unstructured.SetNestedField(old.Object, "core.rukpak.io/plain", "spec", "provisionerClassName")
		_ = unstructured.SetNestedField(old.Object, "core.rukpak.io/registry", "spec", "template", "spec", "provisionerClassName")
		_, err := e.client(bdV1, "").Create(ctx, old, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.provisionerClassName") || !strings.Contains(err.Error(), "spec.template.spec.provisionerClassName") {
			t.Errorf("the enhancement's class names: %v, want both rejected", err)
		}

		v1 := &platformoperators.Step{Catalog: step.Catalog, ReleaseVersion: step.ReleaseVersion, Shape: platformoperators.ShapeV1Alpha1}
		if err := e.client(platformoperators.GroupVersionKind, "").Delete(ctx, strings.Repeat("p", 53), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := e.createPlatformOperator(strings.Repeat("q", 46), "openshift-cert-manager-operator"); err != nil {
			t.Fatal(err)
		}
		res := e.reconcile(v1)
		// The CRD swap deleted pkg-ok's v1alpha2 BundleDeployment: the
		// step makes it again, in v1alpha1.
		if diff := cmp.Diff([]string{"pkg-ok"}, res.Created); diff != "" {
			t.Errorf("created (-want +got):\n%s", diff)
		}
		bd := e.get(bdV1, "", "pkg-ok")
		for path, want := range map[string]string{
			"spec.provisionerClassName":                          platformoperators.PlainProvisioner,
			"spec.template.spec.provisionerClassName":            platformoperators.RegistryProvisioner,
			"spec.template.spec.source.image.ref":                "registry.example.com/lso/local-storage-operator-bundle@sha256:2222222222222222222222222222222222222222222222222222222222222222",
			"metadata.ownerReferences.0.kind":                    "PlatformOperator",
			"metadata.annotations.platform.openshift.io/package": "local-storage-operator",
		} {
			if got := lookup(bd.Object, path); got != want {
				t.Errorf("BundleDeployment pkg-ok %s = %q, want %q", path, got, want)
			}
		}
		c := meta.FindStatusCondition(e.platformOperator(strings.Repeat("q", 46)).Status.Conditions, platformoperators.ConditionInstalled)
		if c.Reason != platformoperators.ReasonInstallFailed || !strings.Contains(c.Message, "longer than 45 characters (46)") {
			t.Errorf("46-character PlatformOperator: %s %s", c.Reason, c.Message)
		}
		e.setBundleDeploymentConditions("pkg-ok", platformoperators.ShapeV1Alpha1,
			cond("HasValidBundle", "True", "UnpackSuccessful"), cond("Installed", "True", "InstallationSucceeded"))
		e.reconcile(v1)
		if got := e.installed("pkg-ok"); got != "True InstallSuccessful active=pkg-ok" {
			t.Errorf("Installed %s", got)
		}
		related := e.clusterOperator(platformoperators.AggregateClusterOperator).Status.RelatedObjects
		if diff := cmp.Diff(platformoperators.ShapeV1Alpha1.RelatedObjects(), related); diff != "" {
			t.Errorf("relatedObjects (-want +got):\n%s", diff)
		}
	})

	t.Run("no BundleDeployment API: every PlatformOperator and the aggregate say so", func(t *testing.T) {
		e := e.with(t)
		e.deleteCRD(platformoperators.BundleDeploymentCRD)
		_, err := step.Reconcile(ctx, e.cluster)
		const missing = "the cluster does not serve BundleDeployment core.rukpak.io/v1alpha2: rukpak's CRD bundledeployments.core.rukpak.io is missing or serves another version"
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("error %v, want %q", err, missing)
		}
		c := meta.FindStatusCondition(e.platformOperator("pkg-ok").Status.Conditions, platformoperators.ConditionInstalled)
		if c.Reason != platformoperators.ReasonInstallFailed || !strings.Contains(c.Message, missing) || e.platformOperator("pkg-ok").Status.ActiveBundleDeployment != nil {
			t.Errorf("Installed %s %s", c.Reason, c.Message)
		}
		for _, cond := range e.clusterOperator(platformoperators.AggregateClusterOperator).Status.Conditions {
			if cond.Type == configv1.OperatorAvailable && !strings.Contains(cond.Message, "PlatformOperator pkg-ok: InstallFailed: "+missing) {
				t.Errorf("Available message: %s", cond.Message)
			}
		}
	})
}

// trueOnly returns the keys of m whose value is true.
func trueOnly(m map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k, v := range m {
		if v {
			out[k] = true
		}
	}
	return out
}

// lookup returns the string at a dotted path of obj; a segment that is a
// number indexes a list, and the last segments may hold dots (an
// annotation key).
func lookup(obj map[string]any, path string) string {
	var cur any = obj
	parts := strings.Split(path, ".")
	for i := 0; i < len(parts); i++ {
		switch v := cur.(type) {
		case map[string]any:
			key := parts[i]
			if _, ok := v[key]; !ok {
				key = strings.Join(parts[i:], ".")
				i = len(parts)
			}
			cur = v[key]
		case []any:
			n := 0
			for _, r := range parts[i] {
				n = n*10 + int(r-'0')
			}
			if n >= len(v) {
				return ""
			}
			cur = v[n]
		default:
			return ""
		}
	}
	s, _ := cur.(string)
	return s
}
