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
		// The user's: named as the cache names its files, without its magic.
		{"users.entry", 10, 10 * time.Minute},
		{TempPrefix + "users", 5, 2 * time.Hour},
	}
	for _, tc := range []struct {
		name string
		lim  Limits
		want []string
	}{
		{"within limits", Limits{MaxEntries: 10, MaxBytes: 1000}, []string{TempPrefix + "users", TempPrefix + "writing", "a.entry", "b.entry", "big.entry", "c.entry", "other.txt", "users.entry"}},
		{"by count, least recently used first", Limits{MaxEntries: 2, MaxBytes: 1000}, []string{TempPrefix + "users", TempPrefix + "writing", "a.entry", "big.entry", "other.txt", "users.entry"}},
		{"by bytes", Limits{MaxEntries: 10, MaxBytes: 115}, []string{TempPrefix + "users", TempPrefix + "writing", "a.entry", "big.entry", "other.txt", "users.entry"}},
		{"the newest kept whatever its size", Limits{MaxEntries: 10, MaxBytes: 50}, []string{TempPrefix + "users", TempPrefix + "writing", "big.entry", "other.txt", "users.entry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range files {
				p := filepath.Join(dir, f.name)
				data := make([]byte, f.size)
				if !strings.HasPrefix(f.name, "users") && !strings.HasPrefix(f.name, TempPrefix+"users") {
					copy(data, "MAGIC")
				}
				if err := os.WriteFile(p, data, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
					t.Fatal(err)
				}
			}
			err := Evict(dir, tc.lim, Entries{
				Owned: func(_ string, head []byte) bool { return strings.HasPrefix(string(head), "MAGIC") },
				Size: func(_, name string, info fs.FileInfo) (int64, bool) {
					return info.Size(), strings.HasSuffix(name, ".entry")
				},
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
