package plancache

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestNewKey(t *testing.T) {
	if NewKey("ab", "c") == NewKey("a", "bc") || NewKey("a") == NewKey("a", "") {
		t.Error("different parts give the same key")
	}
	if NewKey("a", "b") != NewKey("a", "b") {
		t.Error("not stable")
	}
}

func TestStoreGetPut(t *testing.T) {
	s := &Store{Dir: filepath.Join(t.TempDir(), "plans")}
	k := NewKey("x")
	if b, err := s.Get(k); b != nil || err != nil || s.Has(k) {
		t.Fatalf("empty store: %q %v", b, err)
	}
	if err := s.Put(k, []byte("body")); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(k); string(b) != "body" || err != nil || !s.Has(k) {
		t.Fatalf("got %q %v", b, err)
	}
	if b, _ := s.Get(NewKey("y")); b != nil {
		t.Error("another key hit")
	}
	st, err := os.Stat(s.Dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v %v", st.Mode(), err)
	}
	var nilStore *Store
	if b, err := nilStore.Get(k); b != nil || err != nil {
		t.Error("nil store hit")
	}
}

// A damaged entry is a miss, reported, and removed; a file that does not
// begin as an entry does is a miss, reported, and left alone.
func TestStoreCorruption(t *testing.T) {
	k := NewKey("x")
	for name, damage := range map[string]func(p string, b []byte) []byte{
		"flipped body byte": func(_ string, b []byte) []byte { b[len(b)-3] ^= 1; return b },
		"truncated":         func(_ string, b []byte) []byte { return b[:len(b)-5] },
		"extended":          func(_ string, b []byte) []byte { return append(b, 'x') },
		"empty":             func(string, []byte) []byte { return nil },
		"other magic":       func(_ string, b []byte) []byte { b[0] = 'X'; return b },
		"other format":      func(_ string, b []byte) []byte { b[len(entryMagic)] = formatVersion + 1; return b },
		"other key":         func(_ string, b []byte) []byte { b[len(entryMagic)+2] ^= 1; return b },
		"entry of another key renamed": func(string, []byte) []byte {
			o := &Store{Dir: t.TempDir()}
			o.Put(NewKey("other"), []byte("a body of some length"))
			b, _ := os.ReadFile(o.path(NewKey("other")))
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := &Store{Dir: t.TempDir()}
			if err := s.Put(k, []byte("a body of some length")); err != nil {
				t.Fatal(err)
			}
			p := s.path(k)
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, damage(p, b), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(k)
			if got != nil || err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("got %q, %v; want a miss with an error naming the file", got, err)
			}
			notOurs := name == "empty" || name == "other magic"
			if s.Has(k) != notOurs {
				t.Errorf("kept: %v, want %v", s.Has(k), notOurs)
			}
		})
	}
}

func TestStoreEviction(t *testing.T) {
	s := &Store{Dir: t.TempDir(), MaxEntries: 10, MaxBytes: 1 << 20}
	past := time.Now().Add(-time.Hour)
	for i := range 5 {
		k := NewKey(strconv.Itoa(i))
		if err := s.Put(k, []byte("body")); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(s.path(k), past.Add(time.Duration(i)*time.Minute), past.Add(time.Duration(i)*time.Minute))
	}
	// Using 1 makes it recent: 0 and 2 go (least recently used), 1, 3, 4 stay.
	s.Get(NewKey("1"))
	s.MaxEntries = 3
	s.Put(NewKey("5"), []byte("body")) // evicts down to 3: 5, 1, 4
	var kept []string
	for i := range 6 {
		if s.Has(NewKey(strconv.Itoa(i))) {
			kept = append(kept, strconv.Itoa(i))
		}
	}
	if got := strings.Join(kept, ","); got != "1,4,5" {
		t.Errorf("kept %s, want 1,4,5", got)
	}

	// Bytes: entries beyond MaxBytes go, but the newest always stays.
	s = &Store{Dir: t.TempDir(), MaxBytes: 100}
	s.Put(NewKey("a"), bytes.Repeat([]byte("a"), 60))
	os.Chtimes(s.path(NewKey("a")), past, past)
	s.Put(NewKey("b"), bytes.Repeat([]byte("b"), 60))
	if s.Has(NewKey("a")) || !s.Has(NewKey("b")) {
		t.Error("MaxBytes: want only the newest entry")
	}
	s.Put(NewKey("c"), bytes.Repeat([]byte("c"), 200))
	if !s.Has(NewKey("c")) {
		t.Error("an entry above MaxBytes alone is kept")
	}

	// Temporary files of dead writers go after an hour; one that does not
	// begin as an entry is not the cache's.
	old := filepath.Join(s.Dir, ".tmp-dead")
	os.WriteFile(old, append(entryMagic, 'x'), 0o600)
	os.Chtimes(old, past, past)
	users := filepath.Join(s.Dir, ".tmp-users")
	os.WriteFile(users, []byte("x"), 0o600)
	os.Chtimes(users, past, past)
	fresh := filepath.Join(s.Dir, ".tmp-writing")
	os.WriteFile(fresh, []byte("x"), 0o600)
	s.Put(NewKey("d"), []byte("d"))
	if _, err := os.Stat(old); err == nil {
		t.Error("stale temporary file kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a writer's temporary file removed")
	}
	if _, err := os.Stat(users); err != nil {
		t.Error("a temporary file the cache did not write removed")
	}
}

// Concurrent writers and readers of the same keys, in goroutines and in
// processes, never see part of an entry.
func TestStoreConcurrent(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir, MaxEntries: 4}
	body := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%8)}, 64<<10+i) }
	check := func(s *Store) error {
		for i := range 40 {
			k := NewKey(strconv.Itoa(i % 8))
			if err := s.Put(k, body(i%8)); err != nil {
				return err
			}
			got, err := s.Get(k)
			if err != nil {
				return err
			}
			if got != nil && !bytes.Equal(got, body(i%8)) {
				return fmt.Errorf("key %d: wrong body of %d bytes", i%8, len(got))
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() { errs <- check(s) })
	}
	// Other processes: this test binary again, in TestStoreConcurrentChild.
	for range 2 {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStoreConcurrentChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PLANCACHE_CHILD="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("child: %v: %s", err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// A writer whose eviction found the lock held leaves its entry over
	// the bound until the next Put (eviction is skipped, not waited for):
	// one more, uncontended, brings the store back within it.
	if err := s.Put(NewKey("last"), body(0)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".entry") {
			n++
		}
	}
	if n > 4 {
		t.Errorf("%d entries, want at most 4", n)
	}
}

func TestStoreConcurrentChild(t *testing.T) {
	dir := os.Getenv("PLANCACHE_CHILD")
	if dir == "" {
		t.Skip("run by TestStoreConcurrent")
	}
	s := &Store{Dir: dir, MaxEntries: 4}
	for i := range 40 {
		k := NewKey(strconv.Itoa(i % 8))
		want := bytes.Repeat([]byte{byte('a' + i%8)}, 64<<10+i%8)
		if err := s.Put(k, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if got != nil && !bytes.Equal(got, want) {
			t.Fatalf("key %d: wrong body", i%8)
		}
	}
}

// TestStoreHostileFiles: a named pipe at an entry's place is refused
// without blocking, a sparse file of gigabytes without reading it, and a
// directory others may write is not read.
func TestStoreHostileFiles(t *testing.T) {
	k := NewKey("x")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, s *Store)
		want  string
	}{
		{"a named pipe", func(t *testing.T, s *Store) {
			os.Remove(s.path(k))
			if err := syscall.Mkfifo(s.path(k), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file: a named pipe (FIFO)"},
		{"2 GiB of holes after a good header", func(t *testing.T, s *Store) {
			if err := os.Truncate(s.path(k), 2<<30); err != nil {
				t.Fatal(err)
			}
		}, "truncated or damaged: the header says 21 bytes of body, the file has 2147483648 in all"},
		{"2 GiB of holes", func(t *testing.T, s *Store) {
			os.Truncate(s.path(k), 0)
			if err := os.Truncate(s.path(k), 2<<30); err != nil {
				t.Fatal(err)
			}
		}, "not a cache entry"},
		{"a directory others may write", func(t *testing.T, s *Store) { os.Chmod(s.Dir, 0o777) }, "writable by others (mode 0777)"},
		{"a link to a user's directory", func(t *testing.T, s *Store) {
			user := filepath.Join(filepath.Dir(s.Dir), "documents")
			os.Rename(s.Dir, user)
			os.Symlink(user, s.Dir)
		}, "a symbolic link, not the cache's own directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{Dir: filepath.Join(t.TempDir(), "plans")}
			if err := s.Put(k, []byte("a body of some length")); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, s)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			done := make(chan struct{})
			var got []byte
			var err error
			go func() { defer close(done); got, err = s.Get(k) }()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				t.Fatal("Get blocked")
			}
			runtime.ReadMemStats(&after)
			if got != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Get = %q, %v; want a miss with %q", got, err, tc.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("%d MiB allocated", grew>>20)
			}
		})
	}
}
