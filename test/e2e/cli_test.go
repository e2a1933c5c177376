//go:build e2e

package e2e

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestApplyCLI: how apply ends, against a real API server: a failure no
// waiting fixes ends --wait at once (unless --wait-on-failure), the end
// groups failures by reason and prints the summary last, warnings name
// their object, and with the operators played (hack/play-operators)
// --wait ends ready.
func TestApplyCLI(t *testing.T) {
	s := apiserver.New(t, apiserver.Options{})
	ctx := t.Context()
	kc := "--kubeconfig=" + s.Kubeconfig
	extra := filepath.Join("testdata", "TestApplyCLI", "extra")

	t.Run("a failure no waiting fixes: --wait does not start", func(t *testing.T) {
		start := time.Now()
		r := cli(t, ctx, "apply", kc, "--wait", "--timeout=5m", "--extra-manifests", extra)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Code, r.Stderr)
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("took %s with a failure known at once", d)
		}
		for _, want := range []string{
			"1 failure by reason: 1 resource type missing\n",
			"resource type missing (1): the server has no API for the kind, and the payload no CustomResourceDefinition for it\n",
			"error: " + filepath.Join(extra, "0000_50_monitoring_00_servicemonitor.yaml") + "#0: ServiceMonitor.monitoring.coreos.com/openshift-ingress-operator/ingress-operator: apply: resource type missing",
			"wait: not started: 1 object failed to apply, which no waiting fixes (--wait-on-failure waits anyway)\n",
		} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
			}
		}
		// Server warnings name the object they came with: two
		// Deployments get the same one, in either order (they apply in
		// parallel); the first is named, the second counted.
		warned := regexp.MustCompile(`warning: Deployment\.apps/(openshift-cluster-version/cluster-version-operator|openshift-ingress-operator/ingress-operator): spec\.template\.spec\.nodeSelector\[node-role\.kubernetes\.io/master\]: use "node-role\.kubernetes\.io/control-plane" instead\n`)
		if !warned.MatchString(r.Stderr) || !strings.Contains(r.Stderr, "warning: the same for 1 more object: spec.template.spec.nodeSelector[node-role.kubernetes.io/master]") {
			t.Errorf("stderr lacks the nodeSelector warning naming one Deployment and counting the other:\n%s", r.Stderr)
		}
		if last := lastLine(r.Stderr); !strings.HasPrefix(last, "applied ") || !strings.Contains(last, "1 failed") {
			t.Errorf("the summary is not last: %q\n%s", last, r.Stderr)
		}
	})

	t.Run("--wait-on-failure waits for the rest until --timeout", func(t *testing.T) {
		start := time.Now()
		r := cli(t, ctx, "apply", kc, "--wait", "--wait-on-failure", "--timeout=12s", "--extra-manifests", extra)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Code, r.Stderr)
		}
		if d := time.Since(start); d < 10*time.Second {
			t.Errorf("took %s: --wait-on-failure must wait until the timeout", d)
		}
		for _, want := range []string{"elapsed, gives up in ", "2 not Available: ClusterOperator.config.openshift.io/ingress, ClusterOperator.config.openshift.io/node-tuning",
			"wait: gave up after ", "timeout (2): not ready, or no answer, before --timeout"} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
			}
		}
	})

	t.Run("-o json: schema version, warnings with their object, the end in the summary", func(t *testing.T) {
		// Written again, the Deployment gets its warning again.
		c, err := dynamic.NewForConfig(s.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Resource(deployments).Namespace("openshift-cluster-version").Delete(ctx, "cluster-version-operator", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		r := cli(t, ctx, "apply", kc, "-o", "json", "--wait", "--timeout=5m", "--extra-manifests", extra)
		events := parseEvents(t, r.Stdout)
		sawWarning := false
		for _, e := range events {
			if e.SchemaVersion != 1 {
				t.Fatalf("event without schemaVersion 1: %+v", e)
			}
			sawWarning = sawWarning || e.Event == "warning" && e.Kind == "Deployment" && e.Name == "cluster-version-operator"
		}
		if !sawWarning {
			t.Error("no warning event naming the Deployment")
		}
		sum := summaryOf(t, events)
		if sum.ErrorsByReason["ResourceTypeMissing"] != 1 || sum.Wait == nil || !sum.Wait.Skipped || sum.Skipped["ClusterOperator exists: created once, never overwritten"] != 2 {
			t.Errorf("summary: %+v, wait %+v", sum, sum.Wait)
		}
		if !strings.Contains(r.Stderr, "error: "+filepath.Join(extra, "0000_50_monitoring_00_servicemonitor.yaml")+"#0: ") {
			t.Errorf("stderr lacks the failure:\n%s", r.Stderr)
		}
	})

	t.Run("with the operators played, --wait ends ready", func(t *testing.T) {
		play := exec.CommandContext(ctx, playOperators(t), kc, "--timeout=2m")
		play.Stderr = os.Stderr
		if err := play.Start(); err != nil {
			t.Fatal(err)
		}
		r := cli(t, ctx, "apply", kc, "--wait", "--timeout=2m")
		if err := play.Wait(); err != nil {
			t.Errorf("play-operators: %v", err)
		}
		if r.Code != 0 || !strings.Contains(r.Stderr, "wait: applied objects: all ") {
			t.Errorf("exit %d:\n%s", r.Code, r.Stderr)
		}
	})
}

// playOperators builds hack/play-operators for the test.
func playOperators(t *testing.T) string {
	t.Helper()
	root, err := realpayload.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "play-operators")
	build := exec.Command("go", "build", "-o", bin, "./hack/play-operators")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./hack/play-operators: %v\n%s", err, out)
	}
	return bin
}

// TestApplyStdoutClosed: 'apply -o json | head -1' stops the apply as an
// interrupt does, says so on stderr, exits 130 and never dies half-way of
// SIGPIPE; the same apply again finishes.
func TestApplyStdoutClosed(t *testing.T) {
	payload := realpayload.Dir(t)
	s := apiserver.New(t, apiserver.Options{})
	ctx := t.Context()
	args := []string{"apply", "--kubeconfig=" + s.Kubeconfig, "--payload", payload, "-o", "json"}
	cmd := exec.CommandContext(ctx, binary, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// head -1
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("first event: %v", err)
	}
	out.Close()
	t.Logf("read %q, closed stdout", strings.TrimSpace(line))
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v (%v), want 130:\n%s", ee, err, stderr.String())
	}
	for _, want := range []string{"stdout closed by its reader: stopping as on an interrupt: starting nothing new", "interrupted: ", "run the same command again to finish"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	r := cli(t, ctx, args...)
	if r.Code != 1 || summaryOf(t, parseEvents(t, r.Stdout)).Interrupted != nil {
		// 1: the real payload has kinds without CRDs (TestApplyRealPayload).
		t.Errorf("the second apply: exit %d:\n%.3000s", r.Code, r.Stderr)
	}
}
