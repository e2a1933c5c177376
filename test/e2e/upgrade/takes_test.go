//go:build e2e

package upgrade_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

// takesRelease writes a small release of version whose objects are files
// (file name -> YAML, each included for the default profile).
func takesRelease(t *testing.T, version string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), version)
	rm := filepath.Join(dir, "release-manifests")
	if err := os.MkdirAll(rm, 0o755); err != nil {
		t.Fatal(err)
	}
	files["release-metadata"] = fmt.Sprintf(`{"kind":"cincinnati-metadata-v0","version":%q}`, version)
	files["image-references"] = fmt.Sprintf(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":%q},"spec":{"tags":[]}}`, version)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(rm, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const takesInclude = "  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n"

func takesObj(kind, apiVersion, ns, name string, del bool, rest string) string {
	meta := "metadata:\n  name: " + name + "\n"
	if ns != "" {
		meta += "  namespace: " + ns + "\n"
	}
	meta += takesInclude
	if del {
		meta += "    release.openshift.io/delete: \"true\"\n"
	}
	return "apiVersion: " + apiVersion + "\nkind: " + kind + "\n" + meta + rest
}

const widgetCRD = "spec:\n  group: takes.payload-apply.test\n  scope: Namespaced\n  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n" +
	"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n"

// TestDeletesTakeObjects: a release that deletes a Namespace or a
// CustomResourceDefinition takes with it what is in it, as the namespace
// and garbage-collector controllers delete it. Deleting what the release
// itself applies blocks the update, with no force; deleting what the
// running release leaves behind or what others put there blocks it
// unless forced, and the dry run lists those objects as taken, not as
// orphans left on the cluster. Against a server of its own running both
// controllers.
func TestDeletesTakeObjects(t *testing.T) {
	s := apiserver.New(t, apiserver.Options{Controllers: []string{"namespace", "garbage-collector"}})
	kc := "--kubeconfig=" + s.Kubeconfig
	ctx := t.Context()
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := s.Kubectl(ctx, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	ns := takesObj("Namespace", "v1", "", "takes", false, "")
	nsDeleted := takesObj("Namespace", "v1", "", "takes", true, "")
	crd := takesObj("CustomResourceDefinition", "apiextensions.k8s.io/v1", "", "widgets.takes.payload-apply.test", false, widgetCRD)
	crdDeleted := takesObj("CustomResourceDefinition", "apiextensions.k8s.io/v1", "", "widgets.takes.payload-apply.test", true, widgetCRD)
	kept := takesObj("ConfigMap", "v1", "takes", "kept", false, "data: {k: v}\n")
	dropped := takesObj("ConfigMap", "v1", "takes", "dropped", false, "data: {k: v}\n")
	other := takesObj("Namespace", "v1", "", "takes-other", false, "")
	widget := takesObj("Widget", "takes.payload-apply.test/v1", "takes-other", "w1", false, "spec: {size: 1}\n")

	a := takesRelease(t, "4.22.0", map[string]string{"0000_10_t_00_ns.yaml": ns, "0000_10_t_01_kept.yaml": kept, "0000_10_t_02_dropped.yaml": dropped,
		"0000_10_t_03_crd.yaml": crd, "0000_10_t_04_other.yaml": other, "0000_20_t_05_widget.yaml": widget})
	kubectl("create", "namespace", "openshift-config") // the cluster profile's, as on a real cluster
	if r := cli(t, ctx, "apply", kc, "--payload", a); r.Code != 0 {
		t.Fatalf("apply A: exit %d\n%s", r.Code, r.Stderr)
	}
	kubectl("-n", "takes", "create", "secret", "generic", "users", "--from-literal=k=v")

	step := func(name string, f func(t *testing.T)) {
		start := time.Now()
		t.Run(name, f)
		t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond))
	}
	step("deleting a Namespace it applies objects in: blocked, even forced", func(t *testing.T) {
		b := takesRelease(t, "4.22.1", map[string]string{"0000_10_t_00_ns.yaml": nsDeleted, "0000_10_t_01_kept.yaml": kept,
			"0000_10_t_03_crd.yaml": crd, "0000_10_t_04_other.yaml": other, "0000_20_t_05_widget.yaml": widget})
		pl, r := dryRun(t, kc, b, "--force")
		if r.Code != 1 || !pl.Blocked || !strings.Contains(strings.Join(pl.blockedBy(), ","), "ReleaseDeletesWhatItApplies DeleteTakesWhatItApplies") {
			t.Errorf("exit %d, blocked by %v\n%s", r.Code, pl.blockedBy(), r.Stderr)
		}
		text := cli(t, ctx, "upgrade", kc, "--to", b, "--dry-run")
		for _, w := range []string{
			"Namespace/takes (release-manifests/0000_10_t_00_ns.yaml#0) deletes Namespace/takes (every object in it):",
			"objects this release applies, deleted with it (the release contradicts itself): 1",
			"release-manifests/0000_10_t_01_kept.yaml#0  ConfigMap/takes/kept",
			"objects of the running release this one drops, deleted with it (not left on the cluster): 1",
			"objects on the cluster no release applies, deleted with it: 1\n      Secret/takes/users",
			"orphans (dropped without a delete manifest: left on the cluster, unmanaged, as the CVO leaves them): 0",
		} {
			if !strings.Contains(text.Stdout, w) {
				t.Errorf("dry run lacks %q:\n%s", w, text.Stdout)
			}
		}
		if r := cli(t, ctx, "upgrade", kc, "--to", b, "--force"); r.Code != 1 || !strings.Contains(r.Stderr, "The release deletes what it applies") {
			t.Errorf("upgrade --force: exit %d, want 1 saying the release deletes what it applies\n%s", r.Code, r.Stderr)
		}
		kubectl("get", "namespace", "takes")
	})
	step("deleting a CRD whose objects it keeps: blocked", func(t *testing.T) {
		b := takesRelease(t, "4.22.1", map[string]string{"0000_10_t_00_ns.yaml": ns, "0000_10_t_01_kept.yaml": kept, "0000_10_t_02_dropped.yaml": dropped,
			"0000_10_t_03_crd.yaml": crdDeleted, "0000_10_t_04_other.yaml": other, "0000_20_t_05_widget.yaml": widget})
		pl, r := dryRun(t, kc, b)
		if r.Code != 1 || !strings.Contains(strings.Join(pl.blockedBy(), ","), "ReleaseDeletesWhatItApplies") {
			t.Errorf("exit %d, blocked by %v\n%s", r.Code, pl.blockedBy(), r.Stderr)
		}
		for _, p := range pl.Preconditions {
			if p.Name == "ReleaseDeletesWhatItApplies" && !strings.Contains(p.Message, "deletes CustomResourceDefinition/widgets.takes.payload-apply.test (every object of kind Widget.takes.payload-apply.test), and applies 1 object: Widget/takes-other/w1") {
				t.Errorf("message %q", p.Message)
			}
		}
		kubectl("get", "widgets.takes.payload-apply.test", "-n", "takes-other", "w1")
	})
	step("deleting a Namespace with others' objects: blocked unless forced, then they go", func(t *testing.T) {
		b := takesRelease(t, "4.22.1", map[string]string{"0000_10_t_00_ns.yaml": nsDeleted,
			"0000_10_t_03_crd.yaml": crd, "0000_10_t_04_other.yaml": other, "0000_20_t_05_widget.yaml": widget})
		pl, r := dryRun(t, kc, b)
		if diff := cmp.Diff([]string{"ReleaseDeletesOthersObjects DeleteTakesOtherObjects"}, pl.blockedBy()); r.Code != 1 || diff != "" {
			t.Errorf("exit %d, blocked by (-want +got):\n%s", r.Code, diff)
		}
		if len(pl.Orphans) != 0 {
			t.Errorf("orphans %v: what the delete takes is not left on the cluster", objects(pl.Orphans))
		}
		start := time.Now()
		if r := cli(t, ctx, "upgrade", kc, "--to", b, "--force=ReleaseDeletesOthersObjects"); r.Code != 0 {
			t.Fatalf("forced: exit %d\n%s", r.Code, r.Stderr)
		}
		t.Logf("forced update, the Namespace gone: %s", time.Since(start).Round(time.Millisecond))
		if out, err := s.Kubectl(ctx, "get", "namespace", "takes").CombinedOutput(); err == nil || !strings.Contains(string(out), "NotFound") {
			t.Errorf("Namespace takes still there: %s", out)
		}
		dc, err := dynamic.NewForConfig(s.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		if h := history(t, record(t, dc)); len(h) != 2 || h[0] != "4.22.1 Completed" {
			t.Errorf("history %v, want 4.22.1 Completed", h)
		}
	})
}
