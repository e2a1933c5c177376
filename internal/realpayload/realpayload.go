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
	if startDirErr != nil {
		tb.Fatalf("real payload: working directory: %v", startDirErr)
	}
	root, err := moduleRoot(startDir)
	if err != nil {
		tb.Fatalf("real payload: %v", err)
	}
	dir := filepath.Join(root, "..", "shared", "testdata", "ocp-payload")
	if _, err := os.Stat(filepath.Join(dir, "release-manifests")); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("real payload %s is missing (CI=true): %v", dir, err)
		}
		tb.Skipf("skipping: the real payload is not at %s; it lives in the shared/ checkout beside the module (%v)", dir, err)
	}
	return dir
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
