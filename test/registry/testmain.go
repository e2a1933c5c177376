package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// CI reports whether CI=true, where an unavailable registry fails tests.
func CI() bool { return os.Getenv("CI") == "true" }

// shared is the registry Run started for this test binary.
var shared struct {
	sync.Mutex
	ran bool
	r   *Registry
	err error
}

// Run is for TestMain: it starts one registry for the test binary, runs the
// tests, stops it and returns the exit code. When the registry cannot start,
// the tests run and Shared skips those that need it; under CI=true Run
// fails instead.
func Run(m *testing.M) int { return Wrap(m.Run) }

// Wrap is Run for a TestMain that starts more (an API server): it starts
// the registry, calls run (which runs the tests) and stops the registry.
func Wrap(run func() int) int {
	r, err := Start(context.Background())
	shared.Lock()
	shared.ran, shared.r, shared.err = true, r, err
	shared.Unlock()
	if err != nil {
		if CI() {
			fmt.Fprintf(os.Stderr, "FAIL: test registry (CI=true, so not skipping): %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "test registry unavailable, tests that need it will skip: %v\n", err)
		return run()
	}
	defer r.Stop()
	return run()
}

// Shared returns the registry Run started; without one it skips the test
// (fails it under CI=true).
func Shared(tb testing.TB) *Registry {
	tb.Helper()
	shared.Lock()
	ran, r, err := shared.ran, shared.r, shared.err
	shared.Unlock()
	if !ran {
		tb.Fatal("registry.Shared: no registry: call registry.Run from TestMain")
	}
	if err != nil {
		Unavailable(tb, err)
	}
	return r
}

// New starts a registry for one test, stopped when it ends.
func New(tb testing.TB) *Registry {
	tb.Helper()
	r, err := Start(context.Background())
	if err != nil {
		Unavailable(tb, err)
	}
	tb.Cleanup(r.Stop)
	return r
}

// Unavailable skips tb for a missing tool (fails it under CI=true).
func Unavailable(tb testing.TB, err error) {
	tb.Helper()
	if CI() {
		tb.Fatalf("CI=true, so not skipping: %v", err)
	}
	tb.Skipf("skipping (under CI=true this fails): %v", err)
}

// ErrNotInstalled is returned by Tool for a missing program.
var ErrNotInstalled = errors.New("not installed")

// Tool returns the path of a test tool (skopeo, gpg, cosign): in PATH, or
// in the repository's _output/bin. Missing: it skips tb with a hint (fails
// it under CI=true).
func Tool(tb testing.TB, name string) string {
	tb.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if dir, err := os.Getwd(); err == nil {
		for d := dir; ; d = filepath.Dir(d) {
			p := filepath.Join(d, "_output", "bin", name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil || filepath.Dir(d) == d {
				break
			}
		}
	}
	Unavailable(tb, fmt.Errorf("%s: %w (make test-deps installs it)", name, ErrNotInstalled))
	return ""
}
