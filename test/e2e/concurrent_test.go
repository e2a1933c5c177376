//go:build e2e

package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// TestConcurrentApplies starts two applies of the real payload at the same
// moment, as two processes, against one fresh server: both must end as an
// uninterrupted apply does (the same exit code, exactly its failures: no
// object may fail because the other writer got there first), and the
// server must hold what one apply leaves.
func TestConcurrentApplies(t *testing.T) {
	objs, want, wantFailures, wantCode := referenceState(t)
	for round := range 2 {
		s := apiserver.New(t, apiserver.Options{})
		args := []string{"apply", "--kubeconfig=" + s.Kubeconfig, "--payload=" + realpayload.Dir(t), "-o", "json"}
		var wg sync.WaitGroup
		results := make([]result, 2)
		start := time.Now()
		// Each round is bounded: two applies alone take about 15 s.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		for i := range results {
			wg.Go(func() { results[i] = cli(t, ctx, args...) })
		}
		wg.Wait()
		if ctx.Err() != nil {
			t.Fatalf("round %d: the applies did not end within 5 minutes", round)
		}
		cancel()
		t.Logf("round %d: both applies ended in %s", round, time.Since(start).Round(100*time.Millisecond))
		for i, r := range results {
			if r.Code != wantCode {
				t.Errorf("round %d, apply %d: exit %d, want %d as one apply alone", round, i, r.Code, wantCode)
			}
			if diff := cmp.Diff(wantFailures, failures(parseEvents(t, r.Stdout))); diff != "" {
				t.Errorf("round %d, apply %d: failures differ from one apply alone (-alone +concurrent):\n%s", round, i, diff)
			}
		}
		if diff := cmp.Diff(want, newCluster(t, s.RESTConfig()).state(t, objs)); diff != "" {
			t.Errorf("round %d: state differs from one apply alone (-alone +concurrent):\n%s", round, diff)
		}
		s.Stop()
	}
}
