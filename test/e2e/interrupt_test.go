//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/genpayload"
	"github.com/payload-apply/payload-apply/internal/hostile"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// signaled is how a run that got a signal ended.
type signaled struct {
	Code   int
	took   time.Duration // from the signal to the exit
	Stderr string
	Stdout string
	fired  bool // the trigger was seen and the signal sent
}

// signalWhen runs the command, watches its stderr lines and stdout lines
// (JSON events) and sends sig once trigger returns true for one of them;
// it returns how the process ended. The whole run is bounded by deadline.
func signalWhen(t *testing.T, deadline time.Duration, sig syscall.Signal, trigger func(line string) bool, args ...string) signaled {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		sent    time.Time
		out, eo bytes.Buffer
		wg      sync.WaitGroup
		fired   bool
	)
	watch := func(r io.Reader, buf *bytes.Buffer) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			buf.WriteString(line + "\n")
			if !fired && trigger(line) {
				fired = true
				sent = time.Now()
				_ = cmd.Process.Signal(sig)
			}
			mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, r)
	}
	wg.Add(2)
	go watch(stdout, &out)
	go watch(stderr, &eo)
	wg.Wait()
	err = cmd.Wait()
	end := time.Now()
	r := signaled{Stderr: eo.String(), Stdout: out.String(), fired: fired}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within %s (killed); stderr:\n%s", deadline, tail(r.Stderr, 2000))
	}
	if fired {
		r.took = end.Sub(sent)
	}
	return r
}

// phaseLine matches the -v=1 log line of a plan phase.
func phaseLine(phase string) func(string) bool {
	return func(l string) bool { return strings.Contains(l, `"Phase" phase="`+phase+`"`) }
}

// eventLine matches an `apply -o json` event of the kind, the n-th time.
func eventLine(kind string, n int) func(string) bool {
	seen := 0
	return func(l string) bool {
		var e event
		if json.Unmarshal([]byte(l), &e) != nil || e.Event != kind {
			return false
		}
		seen++
		return seen >= n
	}
}

// slowTemplates writes a payload of manifests/ alone whose templates each
// take a few hundred thousand operations (within the budget): rendering
// them takes seconds.
func slowTemplates(t *testing.T, dir string, n int) {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("manifests/0000_00_slow_%03d.yaml", i)] = fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: slow-%d
  namespace: openshift-config
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
data:
  image: {{.ReleaseImage}}{{range 900000}}{{end}}
`, i)
	}
	hostile.WriteTree(t, dir, files)
}

// overlayEverything is a profile whose overlay labels every object, so
// kustomize builds over the whole selection.
func overlayEverything(t *testing.T, dir string) (profilesDir, overlaysDir string) {
	t.Helper()
	hostile.WriteTree(t, dir, map[string]string{
		"profiles/slow.yaml": `apiVersion: payload-apply/v1alpha1
kind: ClusterProfile
metadata:
  name: slow-overlay
spec:
  parent: self-managed-high-availability
  overlays:
  - name: label-all
`,
		"overlays/label-all/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
labels:
- pairs:
    interrupt-test: "true"
`,
	})
	return filepath.Join(dir, "profiles"), filepath.Join(dir, "overlays")
}

// TestSIGTERMInEachPhase sends SIGTERM while each phase of a run is under
// way (seen from its -v=1 phase log or its JSON events) on inputs big
// enough to make the phase last: the process must end within two seconds
// with exit 130 and say it was interrupted, and where.
func TestSIGTERMInEachPhase(t *testing.T) {
	work := t.TempDir()
	big := filepath.Join(work, "big")
	if _, _, _, err := genpayload.Write(big, genpayload.Options{Seed: 1, Scale: 10}); err != nil {
		t.Fatal(err)
	}
	medium := filepath.Join(work, "medium")
	if _, _, _, err := genpayload.Write(medium, genpayload.Options{Seed: 1, Scale: 3}); err != nil {
		t.Fatal(err)
	}
	templates := filepath.Join(work, "templates")
	slowTemplates(t, templates, 60)
	profilesDir, overlaysDir := overlayEverything(t, work)

	offline := []struct {
		phase, words string
		args         []string
	}{
		{"read", "reading the payload", []string{"render", "--list", "--payload", big}},
		{"template", "rendering the manifests/ templates", []string{"render", "--list", "--payload", templates}},
		{"parse", "parsing the payload", []string{"render", "--list", "--payload", big}},
		{"validate", "validating", []string{"validate", "--payload", medium}},
		{"overlay", "running the overlays", []string{"render", "--list", "--payload", medium, "--profile", "slow-overlay",
			"--profiles-dir", profilesDir, "--overlays-dir", overlaysDir}},
	}
	for _, tc := range offline {
		t.Run(tc.phase, func(t *testing.T) {
			r := signalWhen(t, 3*time.Minute, syscall.SIGTERM, phaseLine(tc.phase), append(tc.args, "-v=1")...)
			checkSignaled(t, r, "interrupted while "+tc.words)
		})
	}

	s := apiserver.New(t, apiserver.Options{})
	kc := "--kubeconfig=" + s.Kubeconfig
	t.Run("apply", func(t *testing.T) {
		r := signalWhen(t, 5*time.Minute, syscall.SIGTERM, eventLine("task", 60),
			"apply", kc, "--payload", realpayload.Dir(t), "-o", "json")
		checkSignaled(t, r, "")
		sum := summaryOf(t, parseEvents(t, r.Stdout))
		if sum.Interrupted == nil || !*sum.Interrupted {
			t.Errorf("the JSON summary does not say interrupted")
		}
		if !strings.Contains(r.Stderr, "interrupted: ") || !strings.Contains(r.Stderr, "run the same command again to finish") {
			t.Errorf("no interrupt report on stderr:\n%s", tail(r.Stderr, 2000))
		}
	})
	t.Run("wait", func(t *testing.T) {
		// The real payload's ClusterOperators never become available:
		// nobody plays the operators here. The same payload as above,
		// which the cluster's record now names: this apply finishes the
		// interrupted one, then waits.
		r := signalWhen(t, 5*time.Minute, syscall.SIGTERM, eventLine("wait", 1),
			"apply", kc, "--payload", realpayload.Dir(t), "--wait", "--wait-on-failure", "--timeout=10m", "-o", "json")
		checkSignaled(t, r, "")
		sum := summaryOf(t, parseEvents(t, r.Stdout))
		if sum.Interrupted == nil || !*sum.Interrupted {
			t.Errorf("the JSON summary does not say interrupted")
		}
	})
}

// checkSignaled: the signal was sent, the process ended within two
// seconds of it with exit 130, no panic, and stderr says want.
func checkSignaled(t *testing.T, r signaled, want string) {
	t.Helper()
	if !r.fired {
		t.Fatalf("the phase was never seen (exit %d); stderr:\n%s", r.Code, tail(r.Stderr, 2000))
	}
	t.Logf("exit %d %s after SIGTERM", r.Code, r.took.Round(time.Millisecond))
	if r.Code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", r.Code, tail(r.Stderr, 2000))
	}
	if r.took > 2*time.Second {
		t.Errorf("ended %s after SIGTERM, want within 2s", r.took)
	}
	if strings.Contains(r.Stderr, "panic:") || strings.Contains(r.Stderr, "goroutine ") {
		t.Errorf("panic:\n%s", tail(r.Stderr, 4000))
	}
	if want != "" && !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, tail(r.Stderr, 2000))
	}
}
