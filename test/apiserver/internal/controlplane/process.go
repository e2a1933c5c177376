package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errPortInUse marks a component that exited because its port was taken.
var errPortInUse = errors.New("address already in use")

// process is one started component.
type process struct {
	cmd      *exec.Cmd
	done     chan struct{} // closed when the process has exited
	err      error         // from Wait; read only after done is closed
	logStart int64         // size of the log file before this start
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (cp *ControlPlane) logPath(c Component) string {
	return filepath.Join(cp.cfg.Dir, string(c)+".log")
}

func pidPath(dir string, c Component) string {
	return filepath.Join(dir, string(c)+".pid")
}

// start runs c and waits until it is ready. The caller holds no lock.
func (cp *ControlPlane) start(ctx context.Context, c Component) error {
	log, err := os.OpenFile(cp.logPath(c), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("controlplane: %s: %w", c, err)
	}
	defer log.Close() // the child has its own descriptor
	st, err := log.Stat()
	if err != nil {
		return fmt.Errorf("controlplane: %s: %w", c, err)
	}
	fmt.Fprintf(log, "=== %s: starting %s\n", time.Now().Format(time.RFC3339Nano), c)

	cmd := exec.Command(filepath.Join(cp.cfg.BinDir, string(c)), cp.args(c)...)
	cmd.Dir = cp.cfg.Dir
	cmd.Stdout, cmd.Stderr = log, log
	if cp.cfg.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		// Pdeathsig ends the child when the thread that started it dies,
		// which for Go means the whole process: a panicking or killed test
		// binary leaves no orphans.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("controlplane: %s: %w", c, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logStart: st.Size()}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	cp.mu.Lock()
	cp.procs[c] = p
	cp.mu.Unlock()
	if err := os.WriteFile(pidPath(cp.cfg.Dir, c), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		return fmt.Errorf("controlplane: %s: %w", c, err)
	}
	return cp.waitReady(ctx, c, p)
}

func (cp *ControlPlane) waitReady(ctx context.Context, c Component, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, cp.cfg.ReadyTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if p.exited() {
			tail := cp.logTail(c, p.logStart)
			err := fmt.Errorf("controlplane: %s exited before it was ready: %v; log %s ends:\n%s", c, p.err, cp.logPath(c), tail)
			if strings.Contains(tail, "address already in use") {
				err = fmt.Errorf("%w: %w", err, errPortInUse)
			}
			return err
		}
		if last = cp.ready(ctx, c); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controlplane: %s not ready after %s: %v; log %s ends:\n%s",
				c, cp.cfg.ReadyTimeout, last, cp.logPath(c), cp.logTail(c, p.logStart))
		case <-tick.C:
		}
	}
}

// logTail returns the last lines that c logged since offset.
func (cp *ControlPlane) logTail(c Component, offset int64) string {
	f, err := os.Open(cp.logPath(c))
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err.Error()
	}
	b, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Running reports whether c was started by this ControlPlane and has not exited.
func (cp *ControlPlane) Running(c Component) bool {
	cp.mu.Lock()
	p := cp.procs[c]
	cp.mu.Unlock()
	return p != nil && !p.exited()
}

// Pid returns the process id of c, or 0 when it is not running.
func (cp *ControlPlane) Pid(c Component) int {
	cp.mu.Lock()
	p := cp.procs[c]
	cp.mu.Unlock()
	if p == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Kill sends SIGKILL to c's process group, as a crash would end it, and waits
// for it to exit. Killing a component that is not running is not an error.
func (cp *ControlPlane) Kill(c Component) error {
	cp.op.Lock()
	defer cp.op.Unlock()
	return cp.terminate(c, syscall.SIGKILL, 10*time.Second)
}

// Restart starts c again with the same ports, flags, certificates and data,
// killing it first if it still runs, and waits until it is ready.
func (cp *ControlPlane) Restart(ctx context.Context, c Component) error {
	if c == ControllerManager && len(cp.cfg.Controllers) == 0 {
		return fmt.Errorf("controlplane: %s: no controllers configured", c)
	}
	cp.op.Lock()
	defer cp.op.Unlock()
	if err := cp.terminate(c, syscall.SIGKILL, 10*time.Second); err != nil {
		return err
	}
	return cp.start(ctx, c)
}

// Stop ends every component, last started first: SIGTERM, then SIGKILL after
// a grace period. It returns the errors of all components joined.
func (cp *ControlPlane) Stop() error {
	cp.op.Lock()
	defer cp.op.Unlock()
	var errs []error
	for _, c := range []Component{ControllerManager, APIServer, Etcd} {
		errs = append(errs, cp.terminate(c, syscall.SIGTERM, 15*time.Second))
	}
	return errors.Join(errs...)
}

// terminate signals c's process group and waits up to grace for the exit,
// then kills it.
func (cp *ControlPlane) terminate(c Component, sig syscall.Signal, grace time.Duration) error {
	cp.mu.Lock()
	p := cp.procs[c]
	cp.mu.Unlock()
	if p == nil {
		return nil
	}
	defer os.Remove(pidPath(cp.cfg.Dir, c))
	if p.exited() {
		return nil
	}
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, sig)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("controlplane: %s (pid %d) did not exit after SIGKILL", c, pid)
	}
}

// RSS returns the resident memory of each running component, in bytes.
func (cp *ControlPlane) RSS() map[Component]int64 {
	out := map[Component]int64{}
	for _, c := range []Component{Etcd, APIServer, ControllerManager} {
		pid := cp.Pid(c)
		if pid == 0 {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				out[c] = kb * 1024
			}
		}
	}
	return out
}

// readPid returns the pid in dir's pid file of c when that process is alive
// and its command line names dir, so that a reused pid is never mistaken for
// ours.
func readPid(dir string, c Component) (int, bool) {
	b, err := os.ReadFile(pidPath(dir, c))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte(dir+string(filepath.Separator))) {
		return 0, false
	}
	return pid, true
}

// StopDir stops the components whose pid files are in dir, for processes
// started with Config.Detach by an earlier process: SIGTERM, then SIGKILL
// after a grace period. Only a live process whose command line names dir is
// signalled; pid files are removed.
func StopDir(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	var errs []error
	for _, c := range []Component{ControllerManager, APIServer, Etcd} {
		pid, ok := readPid(dir, c)
		if ok {
			errs = append(errs, stopPid(c, pid))
		}
		if err := os.Remove(pidPath(dir, c)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("controlplane: %w", err))
		}
	}
	return errors.Join(errs...)
}

func stopPid(c Component, pid int) error {
	alive := func() bool {
		// A process reparented to init is reaped by it; until then it is a
		// zombie, which counts as gone.
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		_, rest, _ := strings.Cut(string(b), ") ")
		return !strings.HasPrefix(rest, "Z")
	}
	for _, s := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGTERM, 15 * time.Second}, {syscall.SIGKILL, 10 * time.Second}} {
		// Detached components lead their own session and process group.
		_ = syscall.Kill(-pid, s.sig)
		for deadline := time.Now().Add(s.wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if !alive() {
				return nil
			}
		}
	}
	return fmt.Errorf("controlplane: %s (pid %d) did not exit", c, pid)
}
