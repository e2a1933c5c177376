package golden_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/golden"
)

// recorder is a testing.TB that records failures instead of reporting them.
type recorder struct {
	testing.TB
	fatal, errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) { r.fatal = append(r.fatal, fmt.Sprint(args...)) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestAssert(t *testing.T) {
	setUpdate(t, false)
	dir := t.TempDir()
	path := filepath.Join(dir, "want.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		path      string
		got       string
		wantFatal string
		wantErr   string
	}{
		{name: "same", path: path, got: "a\nb\n"},
		{name: "differs", path: path, got: "a\nc\n", wantErr: "differs (-want +got)"},
		{name: "missing", path: filepath.Join(dir, "none.txt"), got: "a\n", wantFatal: "run go test -update to create it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			golden.Assert(r, tc.path, tc.got)
			check(t, "Fatalf", r.fatal, tc.wantFatal)
			check(t, "Errorf", r.errs, tc.wantErr)
			golden.Assert(r, tc.path, []byte(tc.got))
		})
	}
}

// check wants exactly one message containing want, or none when want is "".
func check(t *testing.T, what string, got []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) != 0:
		t.Errorf("%s: %q, want none", what, got)
	case want != "" && (len(got) != 1 || !strings.Contains(got[0], want)):
		t.Errorf("%s: %q, want one containing %q", what, got, want)
	}
}

func TestAssertUpdateWrites(t *testing.T) {
	setUpdate(t, true)
	if !golden.Update() {
		t.Fatal("Update() is false after -update")
	}
	path := filepath.Join(t.TempDir(), "new", "file.txt")
	r := &recorder{TB: t}
	golden.Assert(r, path, "written\n")
	check(t, "Fatalf", r.fatal, "")
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "written\n" {
		t.Errorf("file: %q, %v; want %q", data, err, "written\n")
	}
}

// setUpdate sets -update for the test and restores it afterwards, so that
// these tests mean the same whether go test was given -update or not.
func setUpdate(t *testing.T, on bool) {
	t.Helper()
	was := golden.Update()
	if err := flag.Set("update", fmt.Sprint(on)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("update", fmt.Sprint(was)) })
}
