//go:build e2e

package operator

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/internal/clusterplay"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// fleetEnv turns TestFleet on: make test-fleet sets it. It starts four API
// servers, more than make test's budget allows beside the other tests.
const fleetEnv = "PAYLOAD_APPLY_FLEET"

// fleetResync is the fleet's resync: short, so that the measurement
// covers several passes in a minute.
const fleetResync = 10 * time.Second

// TestFleet keeps three clusters (three API servers) at their release
// with three operators, one per cluster, whose Leases live in a fourth
// server, one namespace per cluster: HyperShift's shape (a hosted control
// plane's namespace in the management cluster). Each installs its
// cluster, then reconciles it with no writes; `status --kubeconfig` of
// each says Available (the test plays the operators). It measures, per
// operator, the requests, CPU and memory of its steady passes and of its
// Lease, for docs/operator.md.
func TestFleet(t *testing.T) {
	if os.Getenv(fleetEnv) != "1" {
		t.Skipf("the fleet test runs with make test-fleet (%s=1): it starts four API servers", fleetEnv)
	}
	servers := startServers(t, 4)
	mgmt, clusters := servers[3], servers[:3]
	payload := realpayload.Dir(t)
	ops := make([]*replica, len(clusters))
	for i, s := range clusters {
		name := fmt.Sprintf("cluster-%d", i+1)
		applyPlatform(t, s)
		kubectl(t, mgmt, "create", "namespace", name)
		playOperators(t, s, payload)
		ops[i] = startReplica(t, name, "--kubeconfig="+s.Kubeconfig, "--lease-kubeconfig="+mgmt.Kubeconfig, "--lease-namespace="+name,
			"--payload="+payload, "--resync="+fleetResync.String(), "--lease-duration=15s", "--renew-deadline=10s", "--retry-period=2s", "--pass-timeout=5m")
	}
	start := time.Now()
	for _, op := range ops {
		waitFor(t, 5*time.Minute, op.name+" reconciling", func() bool {
			return op.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= 1
		})
	}
	t.Logf("three clusters installed at once in %s", time.Since(start).Round(time.Second))
	leases := kubectl(t, mgmt, "get", "leases", "-A", "-o", "custom-columns=NS:.metadata.namespace,HOLDER:.spec.holderIdentity", "--no-headers")
	for i := range clusters {
		name := fmt.Sprintf("cluster-%d", i+1)
		if !strings.Contains(leases, name+" ") || !strings.Contains(leases, " "+name) {
			t.Errorf("the management server's Leases lack %s held by %s:\n%s", name, name, leases)
		}
	}
	for i, s := range clusters {
		if out, err := s.Kubectl(t.Context(), "get", "leases", "-A", "--no-headers").CombinedOutput(); err == nil && strings.Contains(string(out), "payload-apply-operator") {
			t.Errorf("cluster %d holds an operator Lease; they belong to the management server:\n%s", i+1, out)
		}
	}

	// Steady: measure about three passes of each, scraping only before and
	// after (a scrape costs CPU too).
	before := make([]metrics, len(ops))
	for i, op := range ops {
		before[i] = op.scrape(t)
	}
	t0 := time.Now()
	time.Sleep(fleetResync*7/2 + fleetResync/10)
	elapsed := time.Since(t0)
	t.Logf("steady, over %s (resync %s; lease retry period 2s):", elapsed.Round(time.Second), fleetResync)
	t.Logf("%-10s %6s %8s %8s %8s %9s %9s %8s %8s", "operator", "passes", "req/pass", "writes", "cpu/pass", "watch/min", "lease/min", "rss MiB", "pass ms")
	for i, op := range ops {
		after := op.scrape(t)
		d := func(name string, labels ...string) float64 {
			return after.value(name, labels...) - before[i].value(name, labels...)
		}
		passes := d("payload_apply_operator_passes_total", "mode", "reconcile")
		if passes < 2 {
			t.Errorf("%s passed %v times in %s, want about three", op.name, passes, elapsed)
			continue
		}
		reqs := d("payload_apply_operator_api_requests_total", "client", "apply")
		var wr float64
		for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			wr += d("payload_apply_operator_api_requests_total", "client", "apply", "verb", verb)
		}
		if wr != 0 {
			t.Errorf("%s wrote %v times on a steady cluster", op.name, wr)
		}
		minutes := elapsed.Minutes()
		t.Logf("%-10s %6.0f %8.1f %8.0f %6.0fms %9.2f %9.1f %8.1f %8.0f", op.name, passes, reqs/passes, wr,
			1000*d("process_cpu_seconds_total")/passes,
			d("payload_apply_operator_api_requests_total", "client", "watch")/minutes,
			d("payload_apply_operator_api_requests_total", "client", "lease")/minutes,
			after.value("process_resident_memory_bytes")/(1<<20),
			1000*d("payload_apply_operator_pass_duration_seconds_sum", "mode", "reconcile")/passes)
	}

	// Each cluster's status, as an admin reads it.
	for i, s := range clusters {
		cmd := exec.Command(binary, "status", "--kubeconfig", s.Kubeconfig, "--payload", payload)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Available") {
			t.Errorf("status of cluster %d: %v\n%s", i+1, err, out)
			continue
		}
		t.Logf("status --kubeconfig cluster-%d:\n%s", i+1, tail(string(out), 4))
	}
}

// startServers starts n API servers at once, stopped when the test ends.
func startServers(t *testing.T, n int) []*apiserver.Server {
	t.Helper()
	out := make([]*apiserver.Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), apiserver.StartTimeout)
			defer cancel()
			out[i], errs[i] = apiserver.Start(ctx, apiserver.Options{})
		})
	}
	wg.Wait()
	for i, s := range out {
		if s != nil {
			t.Cleanup(func() { _ = s.Stop() })
		}
		if errs[i] != nil {
			if apiserver.CI() {
				t.Fatalf("API server %d: %v", i, errs[i])
			}
			t.Skipf("API server %d unavailable: %v", i, errs[i])
		}
	}
	return out
}

// playOperators plays the operators of s (internal/clusterplay) at the
// release of the payload directory dir until the test ends.
func playOperators(t *testing.T, s *apiserver.Server, dir string) {
	t.Helper()
	dc, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := clusterplay.NewPlayer(dc)
	t.Cleanup(p.Stop)
	if err := p.Release(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
}
