//go:build e2e

// Package upgrade_test moves a real API server from the real payload
// (release A) through the releases internal/genupgrade makes of it, with
// the payload-apply command, while the test plays the operators.
package upgrade_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/genupgrade"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// binary is the payload-apply command built for this test binary; work
// holds the releases generated from the real payload, by version.
var (
	binary   string
	releases = map[string]string{}
	variants = map[string]*genupgrade.Variant{}
)

// The releases the test makes of A: a z-stream, a minor, and one two
// minors on.
const (
	zStream  = "4.22.1"
	minor    = "4.23.0"
	twoMinor = "4.24.0"
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "payload-apply-upgrade-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := realpayload.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binary = filepath.Join(dir, "payload-apply")
	build := exec.Command("go", "build", "-o", binary, "./cmd/payload-apply")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "upgrade e2e: go build ./cmd/payload-apply:", err)
		return 1
	}
	if a := filepath.Join(root, "..", "shared", "testdata", "ocp-payload"); dirExists(a) {
		for _, v := range []string{zStream, minor, twoMinor} {
			out := filepath.Join(dir, v)
			if variants[v], err = genupgrade.Write(a, out, v); err != nil {
				fmt.Fprintln(os.Stderr, "upgrade e2e:", err)
				return 1
			}
			releases[v] = out
		}
	}
	return apiserver.Run(m, apiserver.Options{})
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// result is how a run of the command ended.
type result struct {
	stdout, stderr string
	code           int
}

func cli(t testing.TB, ctx context.Context, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// event is one line of -o json; the fields this test reads.
type event struct {
	Event     string `json:"event"`
	File      string `json:"file"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Action    string `json:"action"`
	Message   string `json:"message"`
	Reason    string `json:"reason"`
	Error     string `json:"error"`
	Success   *bool  `json:"success"`
	Completed *bool  `json:"completed"`
	Order     string `json:"order"`
	State     string `json:"state"`
	Interrupt bool   `json:"interrupted"`
	RecordW   *int   `json:"recordWrites"`
	Requests  *struct {
		ByVerb map[string]int64 `json:"byVerb"`
	} `json:"requests"`
	Errors []string        `json:"errors"`
	Plan   json.RawMessage `json:"plan"`
}

func (e event) object() string {
	if e.Namespace == "" {
		return e.Kind + "/" + e.Name
	}
	return e.Kind + "/" + e.Namespace + "/" + e.Name
}

func parseEvents(t testing.TB, stdout string) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON event: %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// background runs the command and streams its JSON events.
type background struct {
	cmd    *exec.Cmd
	events chan event
	stderr bytes.Buffer
	done   chan struct{}
	all    []event
}

func startCLI(t *testing.T, ctx context.Context, args ...string) *background {
	t.Helper()
	b := &background{cmd: exec.CommandContext(ctx, binary, args...), events: make(chan event, 4096), done: make(chan struct{})}
	b.cmd.Stderr = &b.stderr
	out, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		defer close(b.events)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				b.all = append(b.all, e)
				b.events <- e
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return b
}

// until reads events until ok says one is the one awaited; it fails when
// the stream ends first.
func (b *background) until(t *testing.T, what string, ok func(event) bool) {
	t.Helper()
	for e := range b.events {
		if ok(e) {
			return
		}
	}
	t.Fatalf("the command ended before %s; stderr:\n%s", what, b.stderr.String())
}

// wait drains the events and returns the exit code and every event.
func (b *background) wait(t *testing.T) (int, []event) {
	t.Helper()
	for range b.events {
	}
	<-b.done
	err := b.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), b.all
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, b.all
}
