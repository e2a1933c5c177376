//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// peakHelperEnv, set in its environment, makes the test binary a helper
// (TestMain) that runs its arguments as a child and writes the child's
// peak resident memory, in KiB, to file descriptor 3.
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

// peakHelper is the helper's main: the child's exit code (128 plus the
// signal's number when a signal ended it) is the helper's; the child dies
// with the helper (SIGKILL when a test's deadline kills the helper).
func peakHelper() int {
	runtime.LockOSThread() // Pdeathsig follows the thread that started the child
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "peak helper:", err)
		return 125
	}
	_ = cmd.Wait()
	st := cmd.ProcessState
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		report := os.NewFile(3, "peak")
		fmt.Fprintf(report, "%d\n", ru.Maxrss)
		report.Close()
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// peakCommand makes cmd run through the helper, and returns a function
// that gives the command's peak resident memory in MiB once cmd has ended
// (-1 when unknown), and one that releases what it made.
func peakCommand(cmd *exec.Cmd) (peakMB func() int64, cleanup func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() int64 { return -1 }, func() {}
	}
	self, _ := os.Executable()
	cmd.Args = append([]string{self}, cmd.Args...)
	cmd.Path = self
	cmd.Env = append(os.Environ(), peakHelperEnv+"=1")
	cmd.ExtraFiles = []*os.File{w}
	read := make(chan int64, 1)
	go func() {
		b := make([]byte, 64)
		n, _ := r.Read(b)
		kb, err := strconv.ParseInt(strings.TrimSpace(string(b[:n])), 10, 64)
		if err != nil {
			kb = -1 << 10
		}
		read <- kb >> 10
	}()
	return func() int64 {
			w.Close()
			return <-read
		}, func() {
			w.Close()
			r.Close()
		}
}
