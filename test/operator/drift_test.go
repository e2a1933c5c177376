//go:build e2e

package operator

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

// steady returns a replica leading on the shared server's installed
// cluster: TestFailover's survivor, or a new one that installs it.
func steady(t *testing.T) (*apiserver.Server, *replica) {
	t.Helper()
	s := apiserver.Shared(t)
	if survivor == nil {
		applyPlatform(t, s)
		ensureLeaseNamespace(t, s)
		survivor = startReplica(t, "replica-c", operatorArgs(t, s)...)
	}
	select {
	case <-survivor.done:
		t.Fatalf("%s exited with %d", survivor.name, survivor.code)
	default:
	}
	r := survivor
	waitFor(t, 3*time.Minute, "a reconcile pass", func() bool {
		return r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= 1
	})
	return s, r
}

// The objects testDrift changes: a Deployment and a ConfigMap of the
// real payload.
const (
	driftNS         = "openshift-cluster-version"
	driftDeployment = "cluster-version-operator"
	driftConfigMap  = "openshift-config-managed/admin-gates"
)

// testDrift: a steady cluster gets no write over several passes (the
// API server's audit log), the metrics scraped over HTTP show the passes
// and their writes; a Deployment edited and a ConfigMap deleted are both
// repaired within one resync, and reported (log and metrics).
func testDrift(t *testing.T) {
	s, r := steady(t)
	agent := "operator/" + r.name

	// Steady: three passes, no write.
	m := r.scrape(t)
	passes := m.value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success")
	since := time.Now()
	waitFor(t, 4*resync, "three more passes", func() bool {
		return r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= passes+3
	})
	if w := writes(t, sharedAuditLog(), agent, since); len(w) != 0 {
		t.Errorf("a steady cluster got %d writes over three passes, want none: first %s %s", len(w), w[0].Verb, w[0].object())
	}
	m = r.scrape(t)
	for _, want := range []struct {
		series string
		labels []string
	}{
		{"payload_apply_operator_pass_duration_seconds_count", []string{"mode", "reconcile"}},
		{"payload_apply_operator_pass_writes_count", []string{"mode", "reconcile"}},
		{"payload_apply_operator_last_pass_requests", []string{"verb", "LIST"}},
		{"payload_apply_operator_api_requests_total", []string{"client", "apply", "verb", "PATCH"}},
		{"cluster_version_payload", []string{"type", "applied"}},
		{"cluster_operator_up", []string{"name", "service-ca"}},
		{"payload_apply_operator_leader", nil},
		{"process_resident_memory_bytes", nil},
	} {
		if _, ok := m.get(want.series, want.labels...); !ok {
			t.Errorf("metrics lack %s%v", want.series, want.labels)
		}
	}
	if w := m.value("payload_apply_operator_last_pass_writes"); w != 0 {
		t.Errorf("payload_apply_operator_last_pass_writes %v, want 0", w)
	}
	if got := m.value("payload_apply_operator_pass_writes_sum", "mode", "reconcile"); got != 0 {
		t.Errorf("reconcile passes wrote %v times in all, want 0", got)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := r.get(t, p); code != http.StatusOK || body != "ok" {
			t.Errorf("%s: %d %q", p, code, body)
		}
	}

	// Drift: an admin edits the Deployment and deletes the ConfigMap.
	kubectl(t, s, "-n", driftNS, "patch", "deployment", driftDeployment, "--type=json",
		`-p=[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"example.com/edited:latest"}]`)
	cm := strings.SplitN(driftConfigMap, "/", 2)
	kubectl(t, s, "-n", cm[0], "delete", "configmap", cm[1])
	edited := time.Now()
	repaired := waitFor(t, 2*resync+30*time.Second, "both repaired", func() bool {
		img := kubectl(t, s, "-n", driftNS, "get", "deployment", driftDeployment, "-o", "jsonpath={.spec.template.spec.containers[0].image}")
		if strings.Contains(img, "example.com/edited") {
			return false
		}
		_, err := s.Kubectl(t.Context(), "-n", cm[0], "get", "configmap", cm[1]).CombinedOutput()
		return err == nil
	})
	// One resync with its jitter, plus the pass.
	if bound := resync + resync/5 + 10*time.Second; repaired > bound {
		t.Errorf("repaired after %s, want within one resync (%s with jitter) and a pass", repaired, resync+resync/5)
	}
	t.Logf("drift repaired %s after the edit (resync %s)", repaired.Round(10*time.Millisecond), resync)

	// The record's status may follow too: the CVO reports the admin
	// gates' ConfigMap missing (Upgradeable) until it is back.
	w := writes(t, sharedAuditLog(), agent, edited)
	objs := map[string]bool{}
	for _, e := range w {
		if e.object() != "config.openshift.io/clusterversions//version/status" {
			objs[e.object()] = true
		}
	}
	if !objs["apps/deployments/"+driftNS+"/"+driftDeployment] || !objs["/configmaps/"+driftConfigMap] || len(objs) != 2 {
		t.Errorf("the repair wrote %v, want the Deployment and the ConfigMap", objs)
	}
	waitFor(t, 10*time.Second, "the drift in the metrics", func() bool {
		m := r.scrape(t)
		return m.value("payload_apply_operator_drift_repaired_total", "kind", "Deployment", "action", "Configured") >= 1 &&
			m.value("payload_apply_operator_drift_repaired_total", "kind", "ConfigMap", "action", "Created") >= 1
	})
	log := r.log()
	for _, want := range []string{`"Drift repaired"`, "Deployment.apps/" + driftNS + "/" + driftDeployment, "ConfigMap/" + driftConfigMap} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %s", want)
		}
	}
	testMergeDrift(t, s, r)
}

// testMergeDrift: drift the CVO's merge repairs and server-side apply
// alone would keep (an environment variable kubectl set env adds, a
// label's and an annotation's value, a rule another manager adds to a
// Role) is repaired by one pass, one write per object; what the CVO
// leaves alone (a restart annotation on the pod template, a new label)
// stays; then three passes write nothing.
func testMergeDrift(t *testing.T, s *apiserver.Server, r *replica) {
	agent := "operator/" + r.name
	const ns = "openshift-dns-operator"
	edited := time.Now()
	kubectl(t, s, "-n", ns, "set", "env", "deployment/dns-operator", "FOO=bar")
	kubectl(t, s, "label", "--overwrite", "namespace", ns, "openshift.io/cluster-monitoring=false", "team=dns")
	kubectl(t, s, "-n", ns, "annotate", "--overwrite", "service", "metrics", "service.beta.openshift.io/serving-cert-secret-name=other")
	kubectl(t, s, "-n", ns, "patch", "role", "dns-operator", "--type=json", `-p=[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}}]`)
	kubectl(t, s, "-n", ns, "rollout", "restart", "deployment/dns-operator")
	get := func(args ...string) string { return kubectl(t, s, append([]string{"-n", ns, "get"}, args...)...) }
	repaired := waitFor(t, 2*resync+30*time.Second, "the merge's drift repaired", func() bool {
		return !strings.Contains(get("deployment", "dns-operator", "-o", "jsonpath={.spec.template.spec.containers[0].env[*].name}"), "FOO") &&
			get("namespace", ns, "-o", `jsonpath={.metadata.labels.openshift\.io/cluster-monitoring}`) == "true" &&
			get("service", "metrics", "-o", `jsonpath={.metadata.annotations.service\.beta\.openshift\.io/serving-cert-secret-name}`) == "metrics-tls" &&
			len(strings.Fields(get("role", "dns-operator", "-o", "jsonpath={.rules[*].apiGroups}"))) == 2
	})
	t.Logf("the merge's drift repaired %s after the edits", repaired.Round(10*time.Millisecond))
	if bound := resync + resync/5 + 10*time.Second; repaired > bound {
		t.Errorf("repaired after %s, want within one resync and a pass (%s)", repaired, bound)
	}
	if get("namespace", ns, "-o", "jsonpath={.metadata.labels.team}") != "dns" ||
		get("deployment", "dns-operator", "-o", `jsonpath={.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}`) == "" {
		t.Error("the repair removed the new label or the restart annotation, which the CVO leaves")
	}
	// One write per object, by one pass.
	count := map[string]int{}
	waitFor(t, 2*resync+30*time.Second, "the repairing pass's writes in the audit log", func() bool {
		count = map[string]int{}
		for _, e := range writes(t, sharedAuditLog(), agent, edited) {
			if e.object() != "config.openshift.io/clusterversions//version/status" {
				count[e.object()]++
			}
		}
		return len(count) >= 4
	})
	want := map[string]int{"apps/deployments/" + ns + "/dns-operator": 1, "/namespaces/" + ns + "/" + ns: 1,
		"/services/" + ns + "/metrics": 1, "rbac.authorization.k8s.io/roles/" + ns + "/dns-operator": 1}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("the repair's writes (-want +got):\n%s", diff)
	}
	// Steady again: three passes, no write.
	passes := r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success")
	quiet := time.Now()
	waitFor(t, 4*resync+30*time.Second, "three more passes", func() bool {
		return r.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= passes+3
	})
	if w := writes(t, sharedAuditLog(), agent, quiet); len(w) != 0 {
		t.Errorf("after the repair, %d writes over three passes, want none: first %s %s", len(w), w[0].Verb, w[0].object())
	}
}

// testShutdown: with a second replica following, SIGTERM makes the
// leader stop, release its Lease and exit 0; the follower takes over at
// once (well within the lease duration) and finds nothing to write.
func testShutdown(t *testing.T) {
	s, leader := steady(t)
	follower := startReplica(t, "replica-d", operatorArgs(t, s)...)
	waitFor(t, 10*time.Second, "the follower ready", func() bool {
		code, _ := follower.get(t, "/readyz")
		return code == http.StatusOK
	})
	if h := leaseHolder(t, s); h != leader.name {
		t.Fatalf("the Lease is held by %q, want %s", h, leader.name)
	}
	leader.signal(t, syscall.SIGTERM)
	stopped := time.Now()
	if code := leader.wait(t, 30*time.Second); code != 0 {
		t.Errorf("%s exited with %d after SIGTERM, want 0", leader.name, code)
	}
	waitFor(t, leaseDuration, "the follower leading", func() bool { return leaseHolder(t, s) == follower.name })
	takeover := time.Since(stopped)
	if takeover > leaseDuration {
		t.Errorf("the follower took over %s after SIGTERM, want well within the lease duration %s (the Lease is released)", takeover, leaseDuration)
	}
	t.Logf("takeover %s after SIGTERM (lease duration %s)", takeover.Round(10*time.Millisecond), leaseDuration)
	if !strings.Contains(leader.log(), `"Stopped leading"`) {
		t.Errorf("%s's log does not say it stopped leading", leader.name)
	}
	waitFor(t, 3*resync, "the follower's reconcile pass", func() bool {
		return follower.scrape(t).value("payload_apply_operator_passes_total", "result", "success") >= 1
	})
	if w := writes(t, sharedAuditLog(), "operator/"+follower.name, stopped); len(w) != 0 {
		t.Errorf("the new leader wrote %d times on a steady cluster, first %s %s", len(w), w[0].Verb, w[0].object())
	}
	survivor = follower
}
