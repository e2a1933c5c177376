// Package prometheus gives tests a real Prometheus server: Debian's
// prometheus (installed by hack/install-test-deps.sh) on a free port of
// 127.0.0.1, scraping the /metrics endpoints a test names (SetTargets,
// through a file the server watches, so targets can be set after it
// started) every Options.ScrapeInterval.
//
// A test package starts one server in TestMain with Run (or Wrap) and
// reaches it with Shared; New starts one for a single test. Locally, when
// prometheus is not installed, tests skip with the reason; with CI=true
// that is a failure. The process never outlives the test binary.
//
// The package imports the standard library only.
//
// May import: nothing.
package prometheus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is the server hack/install-test-deps.sh installs.
const Binary = "prometheus"

// Options configure Start.
type Options struct {
	// ScrapeInterval is how often targets are scraped (and rules
	// evaluated); zero: one second.
	ScrapeInterval time.Duration
}

// Server is a running Prometheus. Its fields are read-only.
type Server struct {
	// URL is its base URL, "http://127.0.0.1:PORT".
	URL string
	// Dir holds its configuration, targets file, data and log.
	Dir string

	cmd      *exec.Cmd
	done     chan struct{}
	stopOnce sync.Once
}

// Start runs a server in a new temporary directory (removed by Stop) with
// no targets, and waits until it is ready.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := exec.LookPath(Binary)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %s not installed (hack/install-test-deps.sh installs Debian's prometheus): %w", Binary, err)
	}
	if opts.ScrapeInterval <= 0 {
		opts.ScrapeInterval = time.Second
	}
	dir, err := os.MkdirTemp("", "test-prometheus-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, done: make(chan struct{})}
	if err := s.start(ctx, bin, opts); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, bin string, opts Options) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	s.URL = "http://" + addr
	config := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
- job_name: test
  file_sd_configs:
  - files: [%[2]q]
`, opts.ScrapeInterval, filepath.Join(s.Dir, "targets.json"))
	if err := os.WriteFile(filepath.Join(s.Dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		return err
	}
	if err := s.SetTargets(); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(s.Dir, "prometheus.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	s.cmd = exec.Command(bin, "--config.file="+filepath.Join(s.Dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(s.Dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	s.cmd.Dir = s.Dir
	s.cmd.Stdout, s.cmd.Stderr = log, log
	// Pdeathsig: the server dies with the test binary.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("prometheus: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		select {
		case <-s.done:
			data, _ := os.ReadFile(filepath.Join(s.Dir, "prometheus.log"))
			return fmt.Errorf("prometheus: exited before it was ready:\n%s", data)
		case <-ctx.Done():
			return fmt.Errorf("prometheus: not ready: %v", last)
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get(s.URL + "/-/ready")
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("GET /-/ready: %s", resp.Status)
	}
}

// SetTargets makes the server scrape http://TARGET/metrics for each
// target ("HOST:PORT"), and no other; it picks the change up within a
// second or so.
func (s *Server) SetTargets(targets ...string) error {
	if targets == nil {
		targets = []string{}
	}
	data, err := json.Marshal([]map[string]any{{"targets": targets}})
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.Dir, "targets.json.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.Dir, "targets.json"))
}

// Query returns how many samples query's instant vector has now, and
// the value of the first.
func (s *Server) Query(ctx context.Context, query string) (samples int, first string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/query?query="+url.QueryEscape(query), nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, "", fmt.Errorf("query %q: %w", query, err)
	}
	if out.Status != "success" {
		return 0, "", fmt.Errorf("query %q: %s", query, out.Error)
	}
	if len(out.Data.Result) > 0 {
		first = fmt.Sprint(out.Data.Result[0].Value[1])
	}
	return len(out.Data.Result), first, nil
}

// WaitFor waits until query returns at least one sample (a target was
// scraped), up to timeout.
func (s *Server) WaitFor(ctx context.Context, query string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		n, _, err := s.Query(ctx, query)
		if err == nil && n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("prometheus: %q has no sample after %s (last error: %v)", query, timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop ends the server (SIGTERM, SIGKILL after 10 s) and removes its
// directory.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.done
			}
		}
		os.RemoveAll(s.Dir)
	})
}

// Log returns the tail of the server's log, for a failing test.
func (s *Server) Log() string {
	data, _ := os.ReadFile(filepath.Join(s.Dir, "prometheus.log"))
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// shared is the server Run started for this test binary.
var shared struct {
	sync.Mutex
	ran bool
	s   *Server
	err error
}

// Run is for TestMain: it starts one server for the test binary, runs the
// tests, stops it and returns the exit code. When the server cannot start,
// the tests run and Shared skips those that need it; under CI=true Run
// fails instead.
func Run(m *testing.M, opts Options) int { return Wrap(m.Run, opts) }

// Wrap is Run for a TestMain that starts more: it starts the server,
// calls run and stops the server.
func Wrap(run func() int, opts Options) int {
	s, err := Start(context.Background(), opts)
	shared.Lock()
	shared.ran, shared.s, shared.err = true, s, err
	shared.Unlock()
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "FAIL: test prometheus (CI=true, so not skipping): %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "test prometheus unavailable, tests that need it will skip: %v\n", err)
		return run()
	}
	defer s.Stop()
	return run()
}

// Shared returns the server Run started; without one it skips the test
// (fails it under CI=true).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.Lock()
	ran, s, err := shared.ran, shared.s, shared.err
	shared.Unlock()
	if !ran {
		tb.Fatal("prometheus.Shared: no server: call prometheus.Run from TestMain")
	}
	if err != nil {
		unavailable(tb, err)
	}
	return s
}

// New starts a server for one test, stopped when it ends.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(context.Background(), opts)
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(s.Stop)
	return s
}

func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true, so not skipping: %v", err)
	}
	tb.Skipf("skipping (under CI=true this fails): %v", err)
}
