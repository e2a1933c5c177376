// Package clitest runs the payload-apply command the way end-to-end tests
// do: built once per test binary into a temporary directory, run to
// completion (stdout, stderr and the exit code), run under a deadline of
// its own with its time and peak memory measured (RunBounded, through a
// helper process: PeakHelper), or run in the background with its `-o
// json` event stream read line by line into an event type the test
// chooses.
//
// May import: internal/gobuild, internal/realpayload.
package clitest

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
	"testing"

	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// Build builds ./cmd/payload-apply of this module into dir and returns the
// binary's path; the go command's output goes to the test binary's stderr.
func Build(dir string) (string, error) {
	root, err := realpayload.ModuleRoot()
	if err != nil {
		return "", err
	}
	binary := filepath.Join(dir, "payload-apply")
	build := gobuild.Command(binary, "./cmd/payload-apply")
	build.Dir = root
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/payload-apply: %w\n%s", err, out.String())
	}
	return binary, nil
}

// Result is how a run of the command ended.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs binary with args to completion. An exit code other than 0 is a
// Result; a command that cannot be started fails the test.
func Run(t testing.TB, ctx context.Context, binary string, args ...string) Result {
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
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// maxLine bounds one line of the event stream.
const maxLine = 16 << 20

// Background is a run of the command whose stdout is a stream of JSON
// events of type E, one a line. Lines that are not E are skipped.
type Background[E any] struct {
	// Cmd is the running command (send it signals).
	Cmd *exec.Cmd
	// Events delivers each event as it is read; it is closed when stdout
	// ends. A test that stops reading must still call Wait.
	Events chan E
	// Stderr holds what the command wrote on stderr so far; read it only
	// after Wait or once Events is closed.
	Stderr bytes.Buffer

	done chan struct{}
	all  []E
}

// Start starts binary with args in the background.
func Start[E any](t testing.TB, ctx context.Context, binary string, args ...string) *Background[E] {
	t.Helper()
	b := &Background[E]{Cmd: exec.CommandContext(ctx, binary, args...), Events: make(chan E, 4096), done: make(chan struct{})}
	b.Cmd.Stderr = &b.Stderr
	out, err := b.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		defer close(b.Events)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), maxLine)
		for sc.Scan() {
			var e E
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				b.all = append(b.all, e)
				b.Events <- e
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return b
}

// Done is closed once the command's stdout has ended (it exited, or
// closed it): a test can see the command end while it does something
// else, such as keeping a server down.
func (b *Background[E]) Done() <-chan struct{} { return b.done }

// Until reads events until ok says one is the one awaited; it fails the
// test when the stream ends first.
func (b *Background[E]) Until(t testing.TB, what string, ok func(E) bool) {
	t.Helper()
	for e := range b.Events {
		if ok(e) {
			return
		}
	}
	<-b.done
	t.Fatalf("the command ended before %s; stderr:\n%s", what, b.Stderr.String())
}

// Wait drains the events, waits for the command to end and returns its
// exit code and every event it printed.
func (b *Background[E]) Wait(t testing.TB) (int, []E) {
	t.Helper()
	for range b.Events {
	}
	<-b.done
	err := b.Cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), b.all
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, b.all
}

// ParseEvents decodes stdout, one JSON event of type E a line; a line that
// is not one fails the test.
func ParseEvents[E any](t testing.TB, stdout string) []E {
	t.Helper()
	var out []E
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), maxLine)
	for sc.Scan() {
		var e E
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON event: %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}
