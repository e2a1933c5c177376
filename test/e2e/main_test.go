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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// binary is the payload-apply command built for this test binary.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "payload-apply-e2e-")
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
		fmt.Fprintln(os.Stderr, "e2e: go build ./cmd/payload-apply:", err)
		return 1
	}
	return apiserver.Run(m, apiserver.Options{})
}

// result is how a run of the command ended.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the command to completion.
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

// event is one line of `apply -o json`.
type event struct {
	SchemaVersion int    `json:"schemaVersion"`
	Event         string `json:"event"`
	File          string `json:"file"`
	Doc           *int   `json:"doc"`
	APIVersion    string `json:"apiVersion"`
	Kind          string `json:"kind"`
	Namespace     string `json:"namespace"`
	Name          string `json:"name"`
	Step          string `json:"step"`
	Staged        bool   `json:"staged"`
	Action        string `json:"action"`
	Message       string `json:"message"`
	Reason        string `json:"reason"`
	Error         string `json:"error"`
	RunLevel      *int   `json:"runLevel"`
	Done          *int   `json:"done"`
	Total         int    `json:"total"`
	Ready         *int   `json:"ready"`
	Pending       []struct {
		Object  string `json:"object"`
		Message string `json:"message"`
	} `json:"pending"`
	Success     *bool          `json:"success"`
	Interrupted *bool          `json:"interrupted"`
	Changes     map[string]int `json:"changes"`
	// StepChanges counts the steps' outcomes by action.
	StepChanges map[string]int `json:"stepChanges"`
	Requests    *struct {
		Reads  int64            `json:"reads"`
		Writes int64            `json:"writes"`
		ByVerb map[string]int64 `json:"byVerb"`
	} `json:"requests"`
	Errors         []string       `json:"errors"`
	ErrorsByReason map[string]int `json:"errorsByReason"`
	Skipped        map[string]int `json:"skipped"`
	Wait           *struct {
		Skipped, EndedAtFailure bool
		Ready, Total, Pending   int
	} `json:"wait"`
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

func summaryOf(t testing.TB, events []event) event {
	t.Helper()
	if len(events) == 0 || events[len(events)-1].Event != "summary" {
		t.Fatalf("the event stream does not end with a summary")
	}
	return events[len(events)-1]
}

// background runs the command and streams its JSON events; wait returns
// how it ended.
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
