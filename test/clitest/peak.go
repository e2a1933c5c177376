package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// peakHelperEnv, set in its environment, makes the test binary a helper
// (PeakHelper, from TestMain) that runs its arguments as a child and
// writes the child's peak resident memory, in KiB, to file descriptor 3.
//
// The helper is needed because Linux counts in a process's peak the
// resident memory of the process it was started from: Go starts a child
// with vfork semantics (the child shares its parent's memory until exec),
// and exec keeps the larger of the old and the new high-water mark. A
// command started straight from the test process (hundreds of MB after
// building and parsing payloads) would seem to use at least that. The
// helper is a fresh process of a few MB: its child's peak is the
// command's own.
const peakHelperEnv = "PAYLOAD_APPLY_E2E_PEAK_HELPER"

// PeakHelper makes the test binary the helper RunBounded starts, when it
// is: call it first in TestMain. It exits with the child's exit code (128
// plus the signal's number when a signal ended it); the child dies with
// the helper (SIGKILL when a test's deadline kills the helper). Otherwise
// it returns at once.
func PeakHelper() {
	if os.Getenv(peakHelperEnv) == "" {
		return
	}
	runtime.LockOSThread() // Pdeathsig follows the thread that started the child
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "peak helper:", err)
		os.Exit(125)
	}
	// A signal to the helper (a test's SIGINT) goes to the command.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	st := cmd.ProcessState
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		report := os.NewFile(3, "peak")
		fmt.Fprintf(report, "%d\n", ru.Maxrss)
		report.Close()
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(st.ExitCode())
}

// Bounded is how a run of the command ended, with what it cost.
type Bounded struct {
	Result
	Took   time.Duration
	PeakMB int64 // peak resident memory, -1 when unknown
}

// RunOptions are what RunBounded runs the command with besides its
// arguments.
type RunOptions struct {
	// Env is the command's environment; nil: the test's.
	Env []string
	// Signal, when set, is sent to the command After it started.
	Signal os.Signal
	After  time.Duration
}

// RunBounded runs binary with args through the helper (PeakHelper, which
// the test binary's TestMain must call) with a deadline of its own, and
// measures its time and peak memory; a run that does not end by the
// deadline fails the test (it is killed).
func RunBounded(t testing.TB, deadline time.Duration, opts RunOptions, binary string, args ...string) Bounded {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, self, append([]string{binary}, args...)...)
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string{}, env...), peakHelperEnv+"=1")
	cmd.ExtraFiles = []*os.File{w}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatal(err)
	}
	w.Close()
	if opts.Signal != nil {
		timer := time.AfterFunc(opts.After, func() { _ = cmd.Process.Signal(opts.Signal) })
		defer timer.Stop()
	}
	err = cmd.Wait()
	b := Bounded{Result: Result{Stdout: out.String(), Stderr: errOut.String()}, Took: time.Since(start), PeakMB: -1}
	if ctx.Err() != nil {
		t.Fatalf("%v: did not end within %s (killed); stderr:\n%.2000s", args, deadline, b.Stderr)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		b.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if kb, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64); err == nil {
		b.PeakMB = kb >> 10
	}
	return b
}
