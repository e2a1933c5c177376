package benchstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Memory is what WatchMemory saw of a process, in KiB.
type Memory struct {
	// Peak is the process's own peak resident set (VmHWM).
	Peak int64
	// PeakAnon is the largest anonymous resident set sampled (RssAnon:
	// what the process allocated, without the pages of its binary); a
	// sample can miss a short spike, so it is a lower bound.
	PeakAnon int64
}

// WatchMemory reads /proc/PID/status of a child process every millisecond
// until the function it returns is called (after the process ended),
// which returns what it saw.
//
// The peak resident set is taken from VmHWM, the high-water mark of the
// process's own memory, and not from the child's rusage: Go starts a child
// with vfork (CLONE_VM), and Linux, when the child calls exec, counts the
// peak of the memory it shared until then, the parent's, into the child's
// ru_maxrss. A benchmark that holds a payload of 2 GiB saw every child it
// ran peak at 2 GiB. VmHWM only grows, so the last read before the process
// ended is its peak but for that last millisecond.
func WatchMemory(pid int) func() Memory {
	stop := make(chan struct{})
	seen := make(chan Memory, 1)
	go func() {
		var m Memory
		status := fmt.Sprintf("/proc/%d/status", pid)
		for {
			if data, err := os.ReadFile(status); err == nil {
				m.Peak = max(m.Peak, statusKiB(data, "VmHWM:"))
				m.PeakAnon = max(m.PeakAnon, statusKiB(data, "RssAnon:"))
			}
			select {
			case <-stop:
				seen <- m
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() Memory { close(stop); return <-seen }
}

// statusKiB returns the value in kB of field (with its colon) in the text
// of /proc/PID/status, 0 when absent.
func statusKiB(status []byte, field string) int64 {
	i := bytes.Index(status, []byte("\n"+field))
	if i < 0 {
		return 0
	}
	rest := status[i+1+len(field):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
