package realpayload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// startDir is the directory go test starts the test binary in; it is read
// once, so Dir still finds the module after t.Chdir.
var startDir, startDirErr = os.Getwd()

// Dir returns the real payload directory, <module root>/../shared/testdata/ocp-payload,
// where the module root is the nearest directory at or above the test's
// package directory that holds go.mod. When the payload (its
// release-manifests directory) is missing, Dir skips the test with a message
// saying where it looked, or fails it when the environment has CI=true; it
// also fails the test when no go.mod is found.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := locate(tb)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("real payload %s is missing (CI=true): %v", dir, err)
		}
		tb.Skipf("skipping: the real payload is not at %s; it lives in the shared/ checkout beside the module (%v)", dir, err)
	}
	return dir
}

// locate returns where the real payload should be, and an error when it
// is not there.
func locate(tb testing.TB) (string, error) {
	tb.Helper()
	if startDirErr != nil {
		tb.Fatalf("real payload: working directory: %v", startDirErr)
	}
	root, err := moduleRoot(startDir)
	if err != nil {
		tb.Fatalf("real payload: %v", err)
	}
	dir := filepath.Join(root, "..", "shared", "testdata", "ocp-payload")
	_, err = os.Stat(filepath.Join(dir, "release-manifests"))
	return dir, err
}

// ModuleRoot returns the module root of the test running: the nearest
// directory at or above the test's package directory that holds go.mod.
func ModuleRoot() (string, error) {
	if startDirErr != nil {
		return "", startDirErr
	}
	return moduleRoot(startDir)
}

// moduleRoot returns the nearest directory at or above dir that holds go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("find go.mod: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("find go.mod: none in %s or above", dir)
		}
		d = parent
	}
}

// File is one file of the real payload.
type File struct {
	// Path is slash-separated, relative to the payload root, e.g.
	// "release-manifests/0000_50_x_deployment.yaml".
	Path string
	// Data is the file's content.
	Data []byte
}

// Sample returns up to n files of the real payload's manifests/ and
// release-manifests/ directories no bigger than maxSize bytes, spread
// evenly over the sorted file names, for the seed corpora of fuzz targets.
// When the payload is missing it logs that the real-payload seeds are
// skipped and returns nil (so the target still runs its own seeds), or
// fails the test when the environment has CI=true.
func Sample(tb testing.TB, n int, maxSize int64) []File {
	tb.Helper()
	dir, err := locate(tb)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("real payload %s is missing (CI=true): %v", dir, err)
		}
		tb.Logf("skipping the real-payload seeds: the real payload is not at %s (%v)", dir, err)
		return nil
	}
	var all []File
	for _, sub := range []string{"manifests", "release-manifests"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			tb.Fatalf("real payload: %v", err)
		}
		for _, e := range entries {
			if info, err := e.Info(); err != nil || !info.Mode().IsRegular() || info.Size() > maxSize {
				continue
			}
			all = append(all, File{Path: sub + "/" + e.Name()})
		}
	}
	step := 1
	if n > 0 && len(all) > n {
		step = (len(all) + n - 1) / n
	}
	var out []File
	for i := 0; i < len(all); i += step {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(all[i].Path)))
		if err != nil {
			tb.Fatalf("real payload: %v", err)
		}
		out = append(out, File{Path: all[i].Path, Data: data})
	}
	return out
}
