//go:build e2e

package operator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/platform"
	"github.com/payload-apply/payload-apply/test/apiserver"
	"github.com/payload-apply/payload-apply/test/clitest"
	testprom "github.com/payload-apply/payload-apply/test/prometheus"
	testregistry "github.com/payload-apply/payload-apply/test/registry"
)

// binary is the payload-apply command built for this test binary; work
// holds the audit policy and logs.
var binary, work string

// auditPolicy records every write but the Leases' renewals and Events, by
// whom (user agent) and to what.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
  - group: ""
    resources: ["events"]
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	var err error
	if work, err = os.MkdirTemp("", "payload-apply-operator-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	if binary, err = clitest.Build(work); err != nil {
		fmt.Fprintln(os.Stderr, "operator e2e:", err)
		return 1
	}
	policy := filepath.Join(work, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// One registry and one Prometheus for the package (TestUpdateService).
	return testregistry.Wrap(func() int {
		return testprom.Wrap(func() int {
			return apiserver.Run(m, apiserver.Options{APIServerFlags: auditFlags(policy, filepath.Join(work, "audit.log"))})
		}, testprom.Options{ScrapeInterval: time.Second})
	})
}

// auditFlags turn on kube-apiserver's audit log.
func auditFlags(policy, log string) []string {
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + log, "--audit-log-maxsize=0", "--audit-log-format=json"}
}

// sharedAuditLog is the audit log of the shared server.
func sharedAuditLog() string { return filepath.Join(work, "audit.log") }

// replica is one operator process.
type replica struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	// code is the exit code once done is closed (-1: killed by a signal).
	code int
	// metrics is the address of /metrics, /healthz and /readyz.
	metrics string
}

// owner, when set, is the test whose end kills the replicas (a test whose
// subtests hand replicas on to one another); else each replica's own test.
var owner *testing.T

// startReplica runs `payload-apply operator` with identity name and args
// (the kubeconfig, payload and timings), its log in a file, and waits
// until it serves its metrics. It is killed when the test (or owner)
// ends.
func startReplica(t *testing.T, name string, args ...string) *replica {
	t.Helper()
	life := t
	if owner != nil {
		life = owner
	}
	r := &replica{name: name, logPath: filepath.Join(life.TempDir(), name+".log"), done: make(chan struct{})}
	logf, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	all := append([]string{"operator", "--lease-identity=" + name, "--metrics-bind-address=127.0.0.1:0"}, args...)
	r.cmd = exec.Command(binary, all...)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		logf.Close()
		r.code = r.cmd.ProcessState.ExitCode()
		_ = err
		close(r.done)
	}()
	life.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		if life.Failed() {
			b, _ := os.ReadFile(r.logPath)
			life.Logf("log of %s:\n%s", name, tail(string(b), 60))
		}
	})
	re := regexp.MustCompile(`"Serving /healthz, /readyz and /metrics" address="([^"]+)"`)
	waitFor(t, 60*time.Second, name+" serving its metrics", func() bool {
		if m := re.FindStringSubmatch(r.log()); m != nil {
			r.metrics = m[1]
			return true
		}
		select {
		case <-r.done:
			t.Fatalf("%s exited with %d:\n%s", name, r.code, tail(r.log(), 40))
		default:
		}
		return false
	})
	return r
}

func (r *replica) log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// signal sends sig; wait returns the exit code within d.
func (r *replica) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

func (r *replica) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(d):
		t.Fatalf("%s did not exit within %s", r.name, d)
	}
	return 0
}

// get fetches a path of the replica's HTTP server.
func (r *replica) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + path)
	if err != nil {
		t.Fatalf("%s: GET %s: %v", r.name, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads the replica's metrics.
func (r *replica) scrape(t *testing.T) metrics {
	t.Helper()
	code, body := r.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("%s: /metrics: %d", r.name, code)
	}
	return parseMetrics(body)
}

// metrics are Prometheus text-format samples: series ("name{a="b"}", as
// the server prints them) to value.
type metrics map[string]float64

func parseMetrics(body string) metrics {
	out := metrics{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// get returns the value of the series of name whose labels include the
// given ones ("k", "v", ...), summed over the matching series; ok is
// false when none matches.
func (m metrics) get(name string, labels ...string) (float64, bool) {
	sum, found := 0.0, false
	for series, v := range m {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !strings.Contains(series, labels[i]+`="`+labels[i+1]+`"`) {
				match = false
				break
			}
		}
		if match {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

func (m metrics) value(name string, labels ...string) float64 {
	v, _ := m.get(name, labels...)
	return v
}

// auditEvent is what the tests read of an audit log line.
type auditEvent struct {
	Verb       string `json:"verb"`
	Stage      string `json:"stage"`
	UserAgent  string `json:"userAgent"`
	RequestURI string `json:"requestURI"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// object names the event's object "group/resource/namespace/name".
func (e auditEvent) object() string {
	if e.ObjectRef == nil {
		return ""
	}
	o := e.ObjectRef
	s := o.APIGroup + "/" + o.Resource + "/" + o.Namespace + "/" + o.Name
	if o.Subresource != "" {
		s += "/" + o.Subresource
	}
	return s
}

// writes returns the successful, not dry-run, writes of the audit log at
// path sent by user agents containing agent, after since.
func writes(t *testing.T, path, agent string, since time.Time) []auditEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Stage != "ResponseComplete" {
			continue
		}
		if !strings.Contains(e.UserAgent, agent) || strings.Contains(e.RequestURI, "dryRun=") || e.StageTimestamp.Before(since) {
			continue
		}
		if e.ResponseStatus == nil || e.ResponseStatus.Code >= 300 {
			continue
		}
		out = append(out, e)
	}
	return out
}

// waitFor polls cond every 100 ms until it holds, failing after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if cond() {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// kubectl runs kubectl against s.
func kubectl(t *testing.T, s *apiserver.Server, args ...string) string {
	t.Helper()
	out, err := s.Kubectl(context.Background(), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// applyPlatform applies to s what the rest of OpenShift contributes and
// the payload needs (internal/platform): without it the payload's objects
// of those kinds fail on a bare API server, every pass. Applying again
// changes nothing.
func applyPlatform(t *testing.T, s *apiserver.Server) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "platform.yaml")
	if err := os.WriteFile(path, []byte(platform.YAML()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := s.Kubectl(context.Background(), "apply", "--server-side", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply the platform: %v\n%s", err, out)
	}
	out, err = s.Kubectl(context.Background(), "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
}
