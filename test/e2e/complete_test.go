//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/gencomplete"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// completeEnv turns TestCompleteRelease on: make test-complete sets it.
const completeEnv = "PAYLOAD_APPLY_COMPLETE"

// TestCompleteRelease: the real payload made a complete release
// (internal/gencomplete: a CustomResourceDefinition for every kind it uses
// that nothing serves, whose schema requires what its objects set, and a
// Namespace for every namespace nothing creates) validates with no error,
// its delete manifests checked for their identity only (a ServiceMonitor
// to delete has no spec, which its CRD requires); a dry run's preflight
// finds nothing missing; it applies to a bare API server with no failure
// (every object created, or already gone for the deletes); a second apply
// writes nothing. It runs with make test-complete: about 20 s on 2 cores
// (validate 4 s, apply 6 s).
func TestCompleteRelease(t *testing.T) {
	if os.Getenv(completeEnv) != "1" {
		t.Skipf("the complete release's test runs with make test-complete (%s=1): it applies the whole real payload to a server of its own", completeEnv)
	}
	ctx := t.Context()
	dir := t.TempDir()
	added, err := gencomplete.Write(ctx, realpayload.Dir(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(added.Kinds) == 0 || len(added.Namespaces) == 0 {
		t.Fatalf("nothing added (%+v): the real payload is complete, and the test proves nothing", added)
	}
	t.Logf("added CRDs for %d kinds and %d namespaces", len(added.Kinds), len(added.Namespaces))

	start := time.Now()
	r := cli(t, ctx, "validate", "--payload", dir)
	if r.Code != 0 || !strings.HasPrefix(lastLine(r.Stderr), "0 errors") {
		t.Fatalf("validate: exit %d, %s", r.Code, lastLine(r.Stderr))
	}
	t.Logf("validate: %s (%s)", lastLine(r.Stderr), time.Since(start).Round(10*time.Millisecond))

	s := apiserver.New(t, apiserver.Options{})
	kc, payload := "--kubeconfig="+s.Kubeconfig, "--payload="+dir
	r = cli(t, ctx, "apply", kc, payload, "--dry-run=server")
	if r.Code != 0 || strings.Contains(r.Stderr, "missing") {
		t.Fatalf("dry run: exit %d:\n%s", r.Code, tailLines(r.Stderr))
	}
	start = time.Now()
	r = cli(t, ctx, "apply", kc, payload, "-o", "json")
	sum := summaryOf(t, parseEvents(t, r.Stdout))
	if r.Code != 0 || sum.Changes["Failed"] != 0 {
		t.Fatalf("apply: exit %d, changes %v:\n%s", r.Code, sum.Changes, tailLines(r.Stderr))
	}
	t.Logf("apply: %v in %s", sum.Changes, time.Since(start).Round(10*time.Millisecond))
	r = cli(t, ctx, "apply", kc, payload, "-o", "json")
	if sum := summaryOf(t, parseEvents(t, r.Stdout)); r.Code != 0 || sum.Requests.Writes != 0 {
		t.Errorf("apply again: exit %d, %v, want no write", r.Code, sum.Requests.ByVerb)
	}
}
