//go:build e2e

package operator

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/internal/updatefixture"
	"github.com/payload-apply/payload-apply/lib/registry"
	"github.com/payload-apply/payload-apply/test/apiserver"
	testprom "github.com/payload-apply/payload-apply/test/prometheus"
	testregistry "github.com/payload-apply/payload-apply/test/registry"
)

// The risks of the graph-data of TestUpdateService, with rules written
// against the operator's own series, which Prometheus scrapes: the leader
// gauge is 1 (so LeaderMatches applies), never 0 (NeverMatches does not),
// and no series of the third rule exists (CannotEvaluate fails).
const updatesGraphData = `to: 4.22.19
from: ^4[.]22[.]0[+]
url: https://bugs.example.com/leader
name: LeaderMatches
message: Clusters whose operator leads are hurt.
matchingRules:
- type: PromQL
  promql:
    promql: max(payload_apply_operator_leader) == bool 1
---
to: 4.22.18
from: .*
url: https://bugs.example.com/never
name: NeverMatches
message: Clusters without a leader are hurt.
matchingRules:
- type: PromQL
  promql:
    promql: max(payload_apply_operator_leader) == bool 0
---
to: 4.22.17
from: .*
url: https://bugs.example.com/unknown
name: CannotEvaluate
message: Nobody can tell.
matchingRules:
- type: PromQL
  promql:
    promql: max(payload_apply_no_such_series)
`

// graphServer is `payload-apply update-graph --serve`.
type graphServer struct {
	cmd  *exec.Cmd
	done chan struct{}
	url  string
}

// serveGraph runs update-graph over repo and the graph-data in dir, and
// waits until it serves.
func serveGraph(t *testing.T, r *testregistry.Registry, repo, dir string) *graphServer {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "update-graph.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	g := &graphServer{done: make(chan struct{})}
	g.cmd = exec.Command(binary, "update-graph", "--repository", repo, "--graph-data", dir, "--serve", "127.0.0.1:0", "--registry-config", r.AuthFile)
	g.cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+r.CABundle)
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.cmd.Wait(); logf.Close(); close(g.done) }()
	t.Cleanup(func() {
		g.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("log of update-graph:\n%s", tail(string(b), 30))
		}
	})
	re := regexp.MustCompile(`"Serving the update graph" address="([^"]+)"`)
	waitFor(t, 60*time.Second, "update-graph serving", func() bool {
		b, _ := os.ReadFile(logPath)
		if m := re.FindStringSubmatch(string(b)); m != nil {
			g.url = "http://" + m[1] + "/api/upgrades_info/v1/graph"
			return true
		}
		select {
		case <-g.done:
			t.Fatalf("update-graph exited:\n%s", b)
		default:
		}
		return false
	})
	return g
}

func (g *graphServer) stop() {
	select {
	case <-g.done:
		return
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// recommended returns the Recommended condition of the conditional update
// to version, nil when there is none.
func recommended(cv *configv1.ClusterVersion, version string) *metav1.Condition {
	for _, c := range cv.Status.ConditionalUpdates {
		if c.Release.Version == version {
			for i := range c.Conditions {
				if c.Conditions[i].Type == "Recommended" {
					return &c.Conditions[i]
				}
			}
		}
	}
	return nil
}

// TestUpdateService: an operator on its own cluster (the built-in payload,
// 4.22.0), the ClusterVersion's spec.upstream naming `update-graph
// --serve` over 22 releases in the real registry and the graph-data above,
// Debian's Prometheus scraping the operator's /metrics:
//   - spec.channel stable-4.22: availableUpdates and conditionalUpdates
//     filled; the risk whose rule matches makes 4.22.19 not recommended
//     (its name the reason), the one whose rule does not match leaves
//     4.22.18 recommended, the one that cannot be evaluated makes 4.22.17
//     EvaluationFailed; 4.22.5 blocked; nothing written while steady; the
//     count as the CVO's metric, through Prometheus;
//   - a channel without 4.22.0: RetrievedUpdates=False VersionNotFound,
//     no updates;
//   - back, then the update service stopped: RetrievedUpdates=False
//     RemoteFailed, the updates already known kept.
func TestUpdateService(t *testing.T) {
	start := time.Now()
	r := testregistry.Shared(t)
	p := testprom.Shared(t)
	s := apiserver.New(t, apiserver.Options{})
	ctx := t.Context()

	// The releases, in the registry; the graph-data.
	c := registry.New(registry.Options{Keychain: registry.DefaultKeychain(r.AuthFile, nil), RootCAs: r.CertPool})
	repo := r.Host + "/ocp/updates"
	root, err := realpayload.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := updatefixture.Write(filepath.Join(root, "payload"), filepath.Join(t.TempDir(), "releases"))
	if err != nil {
		t.Fatal(err)
	}
	if err := updatefixture.Push(ctx, c, repo, dirs); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	files := map[string]string{"channels/stable-4.22.yaml": "name: stable-4.22\nversions:\n", "channels/fast-4.23.yaml": "name: fast-4.23\nversions: [4.22.19, 4.23.0, 4.23.1]\n",
		"blocked-edges/4.22.5.yaml": "to: 4.22.5\nfrom: .*\n"}
	for i := 0; i < 20; i++ {
		files["channels/stable-4.22.yaml"] += fmt.Sprintf("- 4.22.%d\n", i)
	}
	for i, doc := range strings.Split(updatesGraphData, "---\n") {
		files[fmt.Sprintf("blocked-edges/risk-%d.yaml", i)] = doc
	}
	for name, content := range files {
		path := filepath.Join(data, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	graph := serveGraph(t, r, repo, data)
	setup := time.Since(start)

	// The operator, and Prometheus scraping it.
	kubectl(t, s, "create", "namespace", leaseNS)
	op := startReplica(t, "updates", "--kubeconfig="+s.Kubeconfig, "--lease-namespace="+leaseNS,
		"--lease-duration="+leaseDuration.String(), "--renew-deadline="+renewDeadline.String(), "--retry-period="+retryPeriod.String(),
		"--resync="+resync.String(), "--pass-timeout=30s", "--prometheus-url="+p.URL)
	if err := p.SetTargets(op.metrics); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the record", func() bool {
		_, err := s.Kubectl(ctx, "get", "clusterversion", "version").CombinedOutput()
		return err == nil
	})
	kubectl(t, s, "patch", "clusterversion", "version", "--type=merge", "-p",
		fmt.Sprintf(`{"spec":{"upstream":%q,"channel":"stable-4.22"}}`, graph.url))
	asked := time.Now()

	var cv *configv1.ClusterVersion
	took := waitFor(t, 2*time.Minute, "the updates of stable-4.22, their risks judged", func() bool {
		cv = readRecord(t, s)
		c := condition(cv, configv1.RetrievedUpdates)
		l, n, u := recommended(cv, "4.22.19"), recommended(cv, "4.22.18"), recommended(cv, "4.22.17")
		return c != nil && c.Status == configv1.ConditionTrue && l != nil && l.Status == metav1.ConditionFalse &&
			n != nil && n.Status == metav1.ConditionTrue && u != nil && u.Status == metav1.ConditionUnknown
	})
	t.Logf("updates judged %s after spec.upstream and spec.channel were set", took.Round(100*time.Millisecond))
	var available []string
	for _, a := range cv.Status.AvailableUpdates {
		available = append(available, a.Version)
		if !strings.HasPrefix(a.Image, repo+"@sha256:") || string(a.URL) != "https://errata.example.com/"+a.Version || len(a.Channels) != 1 || a.Channels[0] != "stable-4.22" {
			t.Errorf("available update %+v: want the image by digest, its errata URL, its channel", a)
		}
	}
	want := "4.22.18 4.22.16 4.22.15 4.22.14 4.22.13 4.22.12 4.22.11 4.22.10 4.22.9 4.22.8 4.22.7 4.22.6 4.22.4 4.22.3 4.22.2 4.22.1"
	if got := strings.Join(available, " "); got != want {
		t.Errorf("availableUpdates %s\nwant %s (4.22.5 blocked, 4.22.17 and 4.22.19 not recommended)", got, want)
	}
	if n := len(cv.Status.ConditionalUpdates); n != 3 {
		t.Errorf("%d conditional updates, want 3", n)
	}
	for _, tc := range []struct {
		version, reason, message string
	}{
		{"4.22.19", "LeaderMatches", "Clusters whose operator leads are hurt. https://bugs.example.com/leader"},
		{"4.22.18", "NotExposedToRisks", "none of its risks apply to this cluster"},
		{"4.22.17", "EvaluationFailed", `Could not tell whether risk CannotEvaluate applies to this cluster: rule 0 (PromQL): query "max(payload_apply_no_such_series)": 0 samples, want one`},
	} {
		if c := recommended(cv, tc.version); c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
			t.Errorf("%s: Recommended=%s %s %q, want %s with %q", tc.version, c.Status, c.Reason, c.Message, tc.reason, tc.message)
		}
	}
	for _, u := range cv.Status.ConditionalUpdates {
		if len(u.Risks) != 1 || len(u.Risks[0].MatchingRules) != 1 || u.Risks[0].MatchingRules[0].PromQL == nil {
			t.Errorf("conditional update to %s: risks %+v, want one with its PromQL rule", u.Release.Version, u.Risks)
		}
	}
	// Prometheus has the CVO's metric of the count.
	waitFor(t, 30*time.Second, "cluster_version_available_updates in Prometheus", func() bool {
		n, v, err := p.Query(ctx, `cluster_version_available_updates{channel="stable-4.22"}`)
		return err == nil && n == 1 && v == "16"
	})

	// Steady: no write of the updates over three questions.
	patches := func() float64 {
		return op.scrape(t).value("payload_apply_operator_api_requests_total", "client", "updates", "verb", "PATCH")
	}
	before := patches()
	if before < 1 {
		t.Errorf("%v status patches of the updates, want at least one", before)
	}
	time.Sleep(3 * resync)
	if after := patches(); after != before {
		t.Errorf("a steady cluster's updates were written %v times over three intervals", after-before)
	}

	// A channel without 4.22.0.
	kubectl(t, s, "patch", "clusterversion", "version", "--type=merge", "-p", `{"spec":{"channel":"fast-4.23"}}`)
	waitFor(t, 30*time.Second, "VersionNotFound", func() bool {
		cv = readRecord(t, s)
		c := condition(cv, configv1.RetrievedUpdates)
		return c != nil && c.Status == configv1.ConditionFalse && c.Reason == "VersionNotFound"
	})
	if c := condition(cv, configv1.RetrievedUpdates); !strings.Contains(c.Message, `4.22.0, is not in the "fast-4.23" channel`) || len(cv.Status.AvailableUpdates) != 0 || len(cv.Status.ConditionalUpdates) != 0 {
		t.Errorf("RetrievedUpdates %q, %d available, %d conditional; want the version named, no updates", c.Message, len(cv.Status.AvailableUpdates), len(cv.Status.ConditionalUpdates))
	}

	// Back; then the update service stops.
	kubectl(t, s, "patch", "clusterversion", "version", "--type=merge", "-p", `{"spec":{"channel":"stable-4.22"}}`)
	waitFor(t, 30*time.Second, "the updates again", func() bool {
		cv = readRecord(t, s)
		c := condition(cv, configv1.RetrievedUpdates)
		return c != nil && c.Status == configv1.ConditionTrue && len(cv.Status.AvailableUpdates) == 16
	})
	graph.stop()
	stopped := time.Now()
	waitFor(t, 3*resync+30*time.Second, "RemoteFailed", func() bool {
		cv = readRecord(t, s)
		c := condition(cv, configv1.RetrievedUpdates)
		return c != nil && c.Status == configv1.ConditionFalse && c.Reason == "RemoteFailed"
	})
	t.Logf("RemoteFailed %s after the update service stopped", time.Since(stopped).Round(100*time.Millisecond))
	if c := condition(cv, configv1.RetrievedUpdates); !strings.Contains(c.Message, "connection refused") || strings.Contains(c.Message, "id=") {
		t.Errorf("RetrievedUpdates message %q, want the refused connection, without the cluster's id", c.Message)
	}
	if len(cv.Status.AvailableUpdates) != 16 || len(cv.Status.ConditionalUpdates) != 3 {
		t.Errorf("%d available and %d conditional updates after the service stopped, want the 16 and 3 known", len(cv.Status.AvailableUpdates), len(cv.Status.ConditionalUpdates))
	}
	if !strings.Contains(op.log(), `"Cannot retrieve the cluster's updates"`) {
		t.Error("the log does not say the updates cannot be retrieved")
	}
	t.Logf("setup (22 releases pushed, update-graph serving) %s; the whole test %s (since the spec was set: %s)",
		setup.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond), time.Since(asked).Round(100*time.Millisecond))
}
