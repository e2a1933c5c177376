//go:build e2e

package operator

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/internal/clusterplay"
	"github.com/payload-apply/payload-apply/internal/genupgrade"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// recordedImage is how the record names the payload directory dir, as
// the operator and apply name it: its absolute path and its digest.
func recordedImage(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := payload.Digest(t.Context(), os.DirFS(abs))
	if err != nil {
		t.Fatal(err)
	}
	return abs + "@" + d
}

// readRecord returns the shared server's ClusterVersion "version".
func readRecord(t *testing.T, s *apiserver.Server) *configv1.ClusterVersion {
	t.Helper()
	out, err := s.Kubectl(t.Context(), "get", "clusterversion", "version", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get clusterversion version: %v\n%s", err, out)
	}
	cv := &configv1.ClusterVersion{}
	if err := json.Unmarshal(out, cv); err != nil {
		t.Fatal(err)
	}
	return cv
}

// requestUpdate sets spec.desiredUpdate, as an admin does (oc adm upgrade).
func requestUpdate(t *testing.T, s *apiserver.Server, version, image string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"desiredUpdate":{"version":%q,"image":%q,"force":false}}}`, version, image)
	kubectl(t, s, "patch", "clusterversion", "version", "--type=merge", "-p", patch)
}

func condition(cv *configv1.ClusterVersion, t configv1.ClusterStatusConditionType) *configv1.ClusterOperatorStatusCondition {
	for i := range cv.Status.Conditions {
		if cv.Status.Conditions[i].Type == t {
			return &cv.Status.Conditions[i]
		}
	}
	return nil
}

// runCode runs payload-apply with args and returns its stdout and stderr
// and its exit code.
func runCode(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("payload-apply %s: %v", strings.Join(args, " "), err)
	}
	if exit != nil {
		return string(out), exit.ExitCode()
	}
	return string(out), 0
}

// testUpgrade: an admin sets spec.desiredUpdate on the installed cluster
// (release A, the real payload) while the test plays the operators.
// First a minor release (4.23.0) while an operator says Upgradeable=False:
// the request is rejected, ReleaseAccepted=False names the precondition,
// and nothing but the record's status is written (history, desired and
// every object as they were). Then a z-stream one (4.22.1), which
// Upgradeable=False does not block: the upgrade runs to Completed (history
// B then A, both Completed; ReleaseAccepted=True; B's changes on the
// cluster: a Deployment's image, a delete, a new CRD and its custom
// resource), the metrics show the update pass. Then the minor release
// again with force: it runs to Completed with ClusterVersionUpgradeable
// among its accepted risks, and the next passes reconcile it without
// writing. Before the z-stream, the Deployment B changes is made
// unmanaged (spec.overrides) and edited: a CLI apply, three passes and the
// update leave it untouched (nobody writes it: the audit log), status
// lists it; the override removed, the next pass gives it B's image.
func testUpgrade(t *testing.T) {
	s, r := steady(t)
	agent := "operator/" + r.name
	a := realpayload.Dir(t)
	dir := owner.TempDir()
	minorB, zB := filepath.Join(dir, "4.23.0"), filepath.Join(dir, "4.22.1")
	if _, err := genupgrade.Write(a, minorB, "4.23.0"); err != nil {
		t.Fatal(err)
	}
	v, err := genupgrade.Write(a, zB, "4.22.1")
	if err != nil {
		t.Fatal(err)
	}
	before := readRecord(t, s)
	if h := before.Status.History; len(h) != 1 || h[0].State != configv1.CompletedUpdate || h[0].Image != recordedImage(t, a) {
		t.Fatalf("the record before: history %+v, want A Completed (%s)", h, recordedImage(t, a))
	}

	dc, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := clusterplay.NewPlayer(dc)
	t.Cleanup(p.Stop)
	ctx := t.Context()
	if err := p.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	p.SetUpgradeable("kube-apiserver", "APIRemovedInNextRelease", "an API in use goes away in the next minor")

	// Blocked.
	m0 := r.scrape(t)
	passes := m0.value("payload_apply_operator_passes_total", "mode", "update", "result", "rejected")
	reconciles := m0.value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success")
	since := time.Now()
	requestUpdate(t, s, "4.23.0", recordedImage(t, minorB))
	var rejected *configv1.ClusterVersion
	waitFor(t, 2*resync+30*time.Second, "ReleaseAccepted=False", func() bool {
		cv := readRecord(t, s)
		if c := condition(cv, "ReleaseAccepted"); c != nil && c.Status == configv1.ConditionFalse {
			rejected = cv
			return true
		}
		return false
	})
	c := condition(rejected, "ReleaseAccepted")
	if c.Reason != "PreconditionChecks" || !strings.Contains(c.Message, `"ClusterVersionUpgradeable"`) || !strings.Contains(c.Message, "4.23.0") {
		t.Errorf("ReleaseAccepted=False %s: %q, want PreconditionChecks naming ClusterVersionUpgradeable and 4.23.0", c.Reason, c.Message)
	}
	// The rejection holds over the passes that reconcile A meanwhile.
	waitFor(t, 3*resync+30*time.Second, "another rejection and a reconcile pass of A", func() bool {
		m := r.scrape(t)
		return m.value("payload_apply_operator_passes_total", "mode", "update", "result", "rejected") >= passes+2 &&
			m.value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= reconciles+2
	})
	after := readRecord(t, s)
	if c := condition(after, "ReleaseAccepted"); c == nil || c.Status != configv1.ConditionFalse {
		t.Errorf("ReleaseAccepted after the reconcile passes: %+v, want False still", c)
	}
	if h := after.Status.History; len(h) != 1 || h[0].Image != before.Status.History[0].Image || after.Status.Desired.Image != before.Status.Desired.Image {
		t.Errorf("a rejected request changed the history or desired: %+v, %+v", h, after.Status.Desired)
	}
	for _, e := range writes(t, sharedAuditLog(), agent, since) {
		if e.object() != "config.openshift.io/clusterversions//version/status" {
			t.Errorf("a rejected request wrote %s %s, want nothing but the record's status", e.Verb, e.object())
		}
	}
	if !strings.Contains(r.log(), `"Update rejected"`) {
		t.Error("the log does not say the update was rejected")
	}

	// A request of a mebibyte is refused in a message the API server
	// takes (its values clipped), and A is reconciled meanwhile: quoting
	// it whole made every pass fail while recording the rejection.
	huge := "example.com/release:" + strings.Repeat("x", 1<<20)
	cvs := dc.Resource(configv1.GroupVersion.WithResource("clusterversions"))
	patch := fmt.Sprintf(`{"spec":{"desiredUpdate":{"version":"4.99.0","image":%q,"force":false}}}`, huge)
	if _, err := cvs.Patch(ctx, "version", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	reconciles = r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success")
	waitFor(t, 3*resync+30*time.Second, "ReleaseAccepted=False RetrievePayload and two reconcile passes of A", func() bool {
		c := condition(readRecord(t, s), "ReleaseAccepted")
		return c != nil && c.Reason == "RetrievePayload" &&
			r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= reconciles+2
	})
	if c := condition(readRecord(t, s), "ReleaseAccepted"); len(c.Message) > 8192 || !strings.Contains(c.Message, fmt.Sprintf("... (%d bytes)", len(huge))) {
		t.Errorf("ReleaseAccepted's message is %d bytes (%.300q...): want the image clipped", len(c.Message), c.Message)
	}

	// An admin takes the Deployment B changes over (spec.overrides,
	// unmanaged) and edits it: a CLI apply and three passes leave it as it
	// is, and so does the update below.
	override := fmt.Sprintf(`{"spec":{"overrides":[{"kind":"Deployment","group":"apps","namespace":%q,"name":%q,"unmanaged":true}]}}`, v.Image.Namespace, v.Image.Name)
	kubectl(t, s, "patch", "clusterversion", "version", "--type=merge", "-p", override)
	kubectl(t, s, "-n", v.Image.Namespace, "set", "env", "deployment/"+v.Image.Name, "UNMANAGED=yes")
	unmanagedSince := time.Now()
	deployment := "apps/deployments/" + v.Image.Namespace + "/" + v.Image.Name
	unmanagedState := func() string {
		return kubectl(t, s, "-n", v.Image.Namespace, "get", "deployment", v.Image.Name, "-o", "jsonpath={.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[*].name}")
	}
	aState := unmanagedState()
	if !strings.Contains(aState, "UNMANAGED") {
		t.Fatalf("the edit did not happen: %s", aState)
	}
	if out, code := runCode(t, "apply", "--kubeconfig="+s.Kubeconfig, "--payload="+a); code != 0 {
		t.Errorf("apply: exit %d:\n%s", code, out)
	}
	reconciles = r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success")
	waitFor(t, 4*resync+30*time.Second, "three passes with the override", func() bool {
		return r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= reconciles+3
	})
	if got := unmanagedState(); got != aState {
		t.Errorf("the unmanaged Deployment changed: %q, was %q", got, aState)
	}
	for _, e := range writes(t, sharedAuditLog(), "", unmanagedSince) {
		if e.object() == deployment {
			t.Errorf("%s wrote the unmanaged Deployment (%s)", e.UserAgent, e.Verb)
		}
	}
	if st, _ := runCode(t, "status", "--kubeconfig="+s.Kubeconfig, "--payload="+a); !strings.Contains(st, "unmanaged (spec.overrides): Deployment.apps/"+v.Image.Namespace+"/"+v.Image.Name) {
		t.Errorf("status does not show the Deployment unmanaged:\n%s", st)
	}

	// A z-stream is not blocked by Upgradeable=False: it runs. The
	// operator's ClusterRole (when it runs as the ServiceAccount of
	// `operator manifests`, as after testManifests) covers the release it
	// was made for: an admin applies B's before the request, for what B
	// adds (the custom resources of its new CRD).
	roles := filepath.Join(t.TempDir(), "operator-b.yaml")
	out := run(t, "operator", "manifests", "--payload", zB, "--namespace", leaseNS, "--image", "example.com/payload-apply:test")
	if err := os.WriteFile(roles, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, s, "apply", "--server-side", "-f", roles)
	if err := p.Release(ctx, zB); err != nil {
		t.Fatal(err)
	}
	zImage := recordedImage(t, zB)
	requestUpdate(t, s, "4.22.1", zImage)
	var done *configv1.ClusterVersion
	took := waitFor(t, 3*time.Minute, "4.22.1 Completed", func() bool {
		cv := readRecord(t, s)
		if h := cv.Status.History; len(h) >= 2 && h[0].Image == zImage && h[0].State == configv1.CompletedUpdate {
			done = cv
			return true
		}
		return false
	})
	t.Logf("update to 4.22.1 Completed %s after the request", took.Round(10*time.Millisecond))
	h := done.Status.History
	if len(h) != 2 || h[0].Version != "4.22.1" || h[1].Image != before.Status.History[0].Image || h[1].State != configv1.CompletedUpdate {
		t.Errorf("history %+v, want 4.22.1 Completed then A Completed", h)
	}
	// A z-stream passes Upgradeable=False; what the override leaves
	// unmanaged is a risk accepted (the CVO's warning).
	if r := h[0].AcceptedRisks; !strings.Contains(r, "ClusterVersionOverridesSet") || strings.Contains(r, "APIRemovedInNextRelease") {
		t.Errorf("accepted risks %q, want only the overrides' warning", r)
	}
	if done.Status.Desired.Image != zImage {
		t.Errorf("status.desired %+v, want %s", done.Status.Desired, zImage)
	}
	if c := condition(done, "ReleaseAccepted"); c == nil || c.Status != configv1.ConditionTrue {
		t.Errorf("ReleaseAccepted %+v, want True", c)
	}
	// The unmanaged Deployment went through the update untouched; once the
	// override is gone, the next pass gives it B's image (and drops the
	// edit).
	if got := unmanagedState(); got != aState {
		t.Errorf("the update changed the unmanaged Deployment: %q, was %q", got, aState)
	}
	for _, e := range writes(t, sharedAuditLog(), "", unmanagedSince) {
		if e.object() == deployment {
			t.Errorf("%s wrote the unmanaged Deployment (%s)", e.UserAgent, e.Verb)
		}
	}
	kubectl(t, s, "patch", "clusterversion", "version", "--type=json", `-p=[{"op":"remove","path":"/spec/overrides"}]`)
	waitFor(t, 3*resync+30*time.Second, "B's image, and the edit gone, once managed again", func() bool {
		st := unmanagedState()
		return strings.HasPrefix(st, v.NewImage) && !strings.Contains(st, "UNMANAGED")
	})
	if out, err := s.Kubectl(ctx, "-n", v.Deleted.Namespace, "get", "rolebinding", v.Deleted.Name).CombinedOutput(); err == nil || !strings.Contains(string(out), "NotFound") {
		t.Errorf("RoleBinding %s/%s still there after B deletes it: %s", v.Deleted.Namespace, v.Deleted.Name, out)
	}
	kubectl(t, s, "get", "crd", v.CRD.Name)
	kubectl(t, s, "get", "widgets.upgrade.payload-apply.test", v.CR.Name)

	// Reconciling B: the update's pass counted, then passes without writes.
	m := r.scrape(t)
	if m.value("payload_apply_operator_passes_total", "mode", "update", "result", "success") < 1 {
		t.Error("the metrics count no successful update pass")
	}
	waitFor(t, 10*time.Second, "cluster_version{type=current} of 4.22.1", func() bool {
		_, ok := r.scrape(t).get("cluster_version", "type", "current", "version", "4.22.1")
		return ok
	})
	reconciled := m.value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success")
	waitFor(t, 3*resync+30*time.Second, "a reconcile pass of B", func() bool {
		return r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= reconciled+1
	})
	// Forced: the blocked minor release goes through, the failed
	// precondition recorded as an accepted risk.
	if err := p.Release(ctx, minorB); err != nil {
		t.Fatal(err)
	}
	minorImage := recordedImage(t, minorB)
	patch = fmt.Sprintf(`{"spec":{"desiredUpdate":{"version":"4.23.0","image":%q,"force":true}}}`, minorImage)
	kubectl(t, s, "patch", "clusterversion", "version", "--type=merge", "-p", patch)
	waitFor(t, 3*time.Minute, "4.23.0 Completed", func() bool {
		cv := readRecord(t, s)
		if h := cv.Status.History; len(h) >= 3 && h[0].Image == minorImage && h[0].State == configv1.CompletedUpdate {
			done = cv
			return true
		}
		return false
	})
	if h := done.Status.History; len(h) != 3 || h[1].Image != zImage || !strings.Contains(h[0].AcceptedRisks, `"ClusterVersionUpgradeable"`) {
		t.Errorf("history after the forced update %+v, want 4.23.0 (accepting ClusterVersionUpgradeable), 4.22.1, A", h)
	}
	reconciled = r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success")
	waitFor(t, 3*resync+30*time.Second, "a reconcile pass of 4.23.0", func() bool {
		return r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= reconciled+1
	})
	quiet := time.Now()
	waitFor(t, 3*resync+30*time.Second, "another reconcile pass", func() bool {
		return r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= reconciled+2
	})
	if w := writes(t, sharedAuditLog(), agent, quiet); len(w) != 0 {
		t.Errorf("reconciling B wrote %d times, first %s %s", len(w), w[0].Verb, w[0].object())
	}
}
