package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// TestPlanCacheCLI: render --list of a payload directory parses it once,
// then reads its parse from the plan cache, with the same output; --no-cache neither reads nor writes it.
func TestPlanCacheCLI(t *testing.T) {
	dir := realpayload.Dir(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	plans := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "payload-apply", "plans")
	var size int64
	entries := func() int { m, _ := filepath.Glob(filepath.Join(plans, "*.entry")); return len(m) }

	noCache, _, code := runCLI(t, "render", "--list", "--payload", dir, "--no-cache")
	if code != 0 || entries() != 0 {
		t.Fatalf("--no-cache: exit %d, %d entries", code, entries())
	}
	// A hit reads the entry (and marks it used) without writing it.
	past := time.Now().Add(-time.Hour)
	for i := range 3 {
		out, errOut, code := runCLI(t, "render", "--list", "--payload", dir)
		if code != 0 || out != noCache {
			t.Fatalf("run %d: exit %d, same list %v, stderr:\n%s", i, code, out == noCache, errOut)
		}
		m, _ := filepath.Glob(filepath.Join(plans, "*.entry"))
		if len(m) != 1 {
			t.Fatalf("run %d: entries %v, want 1", i, m)
		}
		st, _ := os.Stat(m[0])
		if i > 0 && (!st.ModTime().After(past.Add(time.Minute)) || st.Size() != size) {
			t.Fatalf("run %d: the entry was not used, or rewritten", i)
		}
		size = st.Size()
		os.Chtimes(m[0], past, past)
	}
	// Another selection of the same payload uses the same parse.
	if _, _, code := runCLI(t, "render", "--list", "--payload", dir, "--profile", "hypershift"); code != 0 || entries() != 1 {
		t.Errorf("another profile: exit %d, %d entries", code, entries())
	}
}
