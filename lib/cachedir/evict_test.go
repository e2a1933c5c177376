package cachedir

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEvict(t *testing.T) {
	now := time.Now()
	type file struct {
		name string
		size int
		age  time.Duration
	}
	files := []file{
		{"a.entry", 10, 1 * time.Minute},
		{"b.entry", 10, 2 * time.Minute},
		{"c.entry", 10, 3 * time.Minute},
		{"big.entry", 100, 30 * time.Second},
		{"other.txt", 5, 4 * time.Minute},
		{TempPrefix + "dead", 5, 2 * time.Hour},
		{TempPrefix + "writing", 5, time.Minute},
	}
	for _, tc := range []struct {
		name string
		lim  Limits
		want []string
	}{
		{"within limits", Limits{MaxEntries: 10, MaxBytes: 1000}, []string{TempPrefix + "writing", "a.entry", "b.entry", "big.entry", "c.entry", "other.txt"}},
		{"by count, least recently used first", Limits{MaxEntries: 2, MaxBytes: 1000}, []string{TempPrefix + "writing", "a.entry", "big.entry", "other.txt"}},
		{"by bytes", Limits{MaxEntries: 10, MaxBytes: 115}, []string{TempPrefix + "writing", "a.entry", "big.entry", "other.txt"}},
		{"the newest kept whatever its size", Limits{MaxEntries: 10, MaxBytes: 50}, []string{TempPrefix + "writing", "big.entry", "other.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range files {
				p := filepath.Join(dir, f.name)
				if err := os.WriteFile(p, make([]byte, f.size), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
					t.Fatal(err)
				}
			}
			err := Evict(dir, tc.lim, Entries{
				Size: func(_, name string, info fs.FileInfo) (int64, bool) {
					return info.Size(), strings.HasSuffix(name, ".entry")
				},
				Remove: func(p string) { os.Remove(p) },
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != ".lock" {
					got = append(got, e.Name())
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("left (-want +got):\n%s", diff)
			}
		})
	}
}
