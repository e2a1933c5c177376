//go:build e2e

package operator

import (
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// Timings of the tests' operators: short, so that a takeover and a resync
// take seconds.
const (
	leaseDuration = 6 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = 1 * time.Second
	resync        = 5 * time.Second
	leaseNS       = "payload-apply-operator"
)

// operatorArgs are the flags of an operator of s, its Lease in s too.
func operatorArgs(t *testing.T, s *apiserver.Server) []string {
	return []string{
		"--kubeconfig=" + s.Kubeconfig, "--payload=" + realpayload.Dir(t),
		"--lease-namespace=" + leaseNS, "--lease-duration=" + leaseDuration.String(),
		"--renew-deadline=" + renewDeadline.String(), "--retry-period=" + retryPeriod.String(),
		"--resync=" + resync.String(), "--pass-timeout=3m",
	}
}

// leaseHolder returns the holder of the Lease in s ("" when none).
func leaseHolder(t *testing.T, s *apiserver.Server) string {
	out, err := s.Kubectl(t.Context(), "get", "lease", "-n", leaseNS, "payload-apply-operator", "-o", "jsonpath={.spec.holderIdentity}").CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// ensureLeaseNamespace creates the Lease's namespace once.
func ensureLeaseNamespace(t *testing.T, s *apiserver.Server) {
	t.Helper()
	if _, err := s.Kubectl(t.Context(), "get", "namespace", leaseNS).CombinedOutput(); err != nil {
		kubectl(t, s, "create", "namespace", leaseNS)
	}
}

// survivor is the replica left running by the failover test, which the
// later tests of the shared server reuse (steady: the cluster installed).
var survivor *replica

// TestOperator runs the tests of the shared server in order: the
// failover needs a cluster nothing was installed on; the others reuse
// the replica it leaves (or, run alone, install the cluster first).
func TestOperator(t *testing.T) {
	owner = t
	t.Cleanup(func() { owner, survivor = nil, nil })
	t.Run("failover", testFailover)
	t.Run("drift", testDrift)
	t.Run("shutdown", testShutdown)
	t.Run("manifests", testManifests)
	t.Run("upgrade", testUpgrade)
}

// testFailover runs two replicas on a fresh cluster: exactly one leads
// (the Lease and both replicas' metrics agree; the follower sends the
// managed cluster nothing); killed with SIGKILL in the middle of the
// install, the leader is replaced within the lease duration (plus the
// retry period in which the follower looks), the new leader finishes the
// install and then reconciles with no writes, and no object of the
// payload was written twice (the API server's audit log).
func testFailover(t *testing.T) {
	s := apiserver.Shared(t)
	applyPlatform(t, s)
	ensureLeaseNamespace(t, s)
	start := time.Now()
	args := operatorArgs(t, s)
	a := startReplica(t, "replica-a", args...)
	b := startReplica(t, "replica-b", args...)
	byName := map[string]*replica{"replica-a": a, "replica-b": b}

	var leader, follower *replica
	waitFor(t, 30*time.Second, "a leader", func() bool {
		h := leaseHolder(t, s)
		leader = byName[h]
		return leader != nil
	})
	follower = a
	if leader == a {
		follower = b
	}
	waitFor(t, 10*time.Second, "the leader's metric", func() bool { return leader.scrape(t).value("payload_apply_operator_leader") == 1 })
	if v := follower.scrape(t).value("payload_apply_operator_leader"); v != 0 {
		t.Errorf("%s (following) reports leader %v", follower.name, v)
	}

	// Mid-install: the leader has written part of the payload.
	waitFor(t, 90*time.Second, "the leader writing", func() bool {
		return len(writes(t, sharedAuditLog(), "operator/"+leader.name, start)) >= 150
	})
	if m := follower.scrape(t); m.value("payload_apply_operator_api_requests_total", "client", "apply") != 0 {
		t.Errorf("%s (following) sent the managed cluster requests: %v", follower.name, m.value("payload_apply_operator_api_requests_total", "client", "apply"))
	}
	before := len(writes(t, sharedAuditLog(), "operator/"+leader.name, start))
	leader.signal(t, syscall.SIGKILL)
	killed := time.Now()
	leader.wait(t, 10*time.Second)
	t.Logf("killed %s after %d writes", leader.name, before)

	waitFor(t, 2*leaseDuration, "a takeover", func() bool { return leaseHolder(t, s) == follower.name })
	takeover := time.Since(killed)
	// The follower sees the Lease expire a lease duration after the last
	// renewal it observed (which it observes within a try), and tries
	// again a retry period (with jitter) later.
	// client-go spreads the follower's tries over 1 to 2.2 retry periods.
	if bound := leaseDuration + 2*retryPeriod*22/10 + time.Second; takeover > bound {
		t.Errorf("takeover took %s, want at most %s (lease duration %s plus two retry periods with jitter)", takeover, bound, leaseDuration)
	}
	t.Logf("takeover %s after SIGKILL (lease duration %s, retry period %s)", takeover.Round(10*time.Millisecond), leaseDuration, retryPeriod)

	// Converged: the install finished without a failure, then a
	// reconcile pass wrote nothing.
	waitFor(t, 3*time.Minute, "the new leader's install", func() bool {
		return follower.scrape(t).value("payload_apply_operator_passes_total", "result", "success") >= 1
	})
	waitFor(t, 30*time.Second, "a reconcile pass", func() bool {
		return follower.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= 1
	})
	m := follower.scrape(t)
	if w := m.value("payload_apply_operator_last_pass_writes"); w != 0 {
		t.Errorf("a reconcile pass after the install wrote %v times, want 0", w)
	}
	if f := m.value("payload_apply_operator_passes_total", "mode", "install", "result", "failure"); f != 0 {
		t.Logf("%v install passes failed before one succeeded", f)
	}

	// Nothing written twice: every object was written by one of the two,
	// once. The record is the exception: its status follows the install's
	// progress, written by whoever leads; its history has one entry, the
	// install both worked on, Completed.
	count := map[string][]string{}
	for _, e := range writes(t, sharedAuditLog(), "operator/replica-", start) {
		if strings.HasPrefix(e.object(), "config.openshift.io/clusterversions//version") {
			continue
		}
		agent := "replica-a"
		if strings.Contains(e.UserAgent, "replica-b") {
			agent = "replica-b"
		}
		count[e.object()] = append(count[e.object()], agent+" "+e.Verb)
	}
	var twice []string
	for obj, ws := range count {
		if len(ws) > 1 {
			twice = append(twice, obj+": "+strings.Join(ws, ", "))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("%d objects written more than once:\n%s", len(twice), strings.Join(twice, "\n"))
	}
	t.Logf("%d objects written, %d by %s before it was killed", len(count), before, leader.name)
	if h := readRecord(t, s).Status.History; len(h) != 1 || h[0].State != "Completed" || h[0].Image != recordedImage(t, realpayload.Dir(t)) {
		t.Errorf("the record's history %+v, want one entry: the real payload's install, Completed", h)
	}
	survivor = follower
}
