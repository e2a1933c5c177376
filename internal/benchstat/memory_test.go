package benchstat

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

func TestStatusKiB(t *testing.T) {
	status := []byte("Name:\tx\nVmPeak:\t  900 kB\nVmHWM:\t    1234 kB\nRssAnon:\t  56 kB\n")
	for field, want := range map[string]int64{"VmHWM:": 1234, "RssAnon:": 56, "VmPeak:": 900, "VmSwap:": 0} {
		if got := statusKiB(status, field); got != want {
			t.Errorf("%s %d, want %d", field, got, want)
		}
	}
}

// TestWatchMemoryNotTheParents: a parent holding 256 MiB starts a small
// child; the child's rusage says it peaked at the parent's size (what the
// benchmarks reported before), WatchMemory says what the child held.
func TestWatchMemoryNotTheParents(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	held := make([]byte, 256<<20)
	for i := range held {
		held[i] = byte(i)
	}
	cmd := exec.Command(sleep, "0.3")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watch := WatchMemory(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	m := watch()
	runtime.KeepAlive(held)
	if m.Peak <= 0 || m.Peak > 64<<10 {
		t.Errorf("sleep peaked at %d KiB by VmHWM, want more than 0 and under 64 MiB", m.Peak)
	}
	if m.PeakAnon > m.Peak {
		t.Errorf("anonymous peak %d KiB over the peak %d KiB", m.PeakAnon, m.Peak)
	}
	// What rusage says, for the record: on Linux it is the parent's.
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.Logf("rusage maxrss %d KiB, VmHWM %d KiB", ru.Maxrss, m.Peak)
	}
}
