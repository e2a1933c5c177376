package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ (never on failure)")

// pkgDir is the directory go test starts the test binary in, the package's
// own; it is read once, so relative golden paths survive t.Chdir.
var pkgDir, pkgDirErr = os.Getwd()

// Update reports whether the test binary was started with -update. It is
// false until the testing package has parsed the flags.
func Update() bool {
	return *update
}

// Assert compares got with the golden file at path, or, with -update,
// writes got there (creating its directories); a failed comparison never
// writes the file. A relative path is taken from the package directory, even
// after t.Chdir. A missing file fails the test with a hint to run
// go test -update; a difference is reported with cmp.Diff as (-want +got).
func Assert[T ~string | ~[]byte](t testing.TB, path string, got T) {
	t.Helper()
	file := path
	if !filepath.IsAbs(file) {
		if pkgDirErr != nil {
			t.Fatalf("golden %s: package directory: %v", path, pkgDirErr)
			return
		}
		file = filepath.Join(pkgDir, file)
	}
	if Update() {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
			return
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// AssertTestdata is Assert for testdata/<test name>/<file>, the layout the
// project keeps golden files in: one directory per test and subtest (a
// subtest's name is a subdirectory of its parent's).
func AssertTestdata[T ~string | ~[]byte](t testing.TB, file string, got T) {
	t.Helper()
	Assert(t, filepath.Join("testdata", filepath.FromSlash(t.Name()), file), got)
}
