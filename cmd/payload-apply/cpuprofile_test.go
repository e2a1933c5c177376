package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Both profiles are written when their variables name files, as gzipped
// protocol buffers (what go tool pprof reads); neither without them.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	t.Setenv(cpuProfileEnv, cpu)
	t.Setenv(memProfileEnv, mem)
	stop := startProfile()
	sink := make([][]byte, 0, 64)
	for i := 0; i < 64; i++ {
		sink = append(sink, make([]byte, 64<<10))
	}
	_ = sink
	stop()
	for _, name := range []string{cpu, mem} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Errorf("%s: not a gzipped profile (%d bytes)", filepath.Base(name), len(data))
		}
	}

	t.Setenv(cpuProfileEnv, "")
	t.Setenv(memProfileEnv, "")
	other := filepath.Join(dir, "none")
	startProfile()()
	if _, err := os.Stat(other); err == nil {
		t.Errorf("a profile was written without the variables")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files in the directory, want the 2 profiles", len(entries))
	}
}
