package apiserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartTimeout bounds Run's and New's Start, including a cold build of the
// binaries.
const StartTimeout = 30 * time.Minute

// shared is the server of this test binary, set by Run for Shared. It is the
// package's only mutable state: a test binary has one TestMain.
var shared struct {
	sync.Mutex
	ran    bool
	server *Server
	err    error
}

// CI reports whether the CI environment variable is "true", where a server
// that cannot be built or started fails the tests instead of skipping them.
func CI() bool { return os.Getenv("CI") == "true" }

// Run is for TestMain: it starts one server for the test binary, runs the
// tests and stops the server, and returns the exit code for os.Exit:
//
//	func TestMain(m *testing.M) {
//		os.Exit(apiserver.Run(m, apiserver.Options{}))
//	}
//
// Tests get the server with Shared. When the server cannot be built or
// started, the tests still run and Shared skips those that need it, with the
// reason; under CI=true Run reports the error and returns 1 instead. The
// processes end with the test binary even when a test panics or the binary
// is killed; on SIGINT or SIGTERM Run stops the server and exits.
func Run(m *testing.M, opts Options) int {
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	s, err := Start(ctx, opts)
	cancel()

	shared.Lock()
	shared.ran, shared.server, shared.err = true, s, err
	shared.Unlock()

	if err != nil {
		if CI() {
			fmt.Fprintf(os.Stderr, "FAIL: test API server (CI=true, so not skipping): %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "test API server unavailable, tests that need it will skip: %v\n", err)
		return m.Run()
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "test API server: %v: stopping\n", sig)
			_ = s.Stop()
			os.Exit(1)
		case <-done:
		}
	})
	defer func() {
		signal.Stop(sigs)
		close(done)
		wg.Wait()
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		shared.Lock()
		shared.server, shared.err = nil, errors.New("the test API server was stopped")
		shared.Unlock()
	}()
	return m.Run()
}

// Shared returns the server that Run started for this test binary. When
// there is none it skips the test with the reason, or fails it under CI=true.
// Tests sharing the server should use their own namespaces or names.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.Lock()
	ran, s, err := shared.ran, shared.server, shared.err
	shared.Unlock()
	if !ran {
		tb.Fatal("apiserver.Shared: no server: call apiserver.Run from TestMain")
	}
	if err != nil {
		unavailable(tb, err)
	}
	return s
}

// New starts a server for one test, such as one with its own
// APIServerFlags, and stops it when the test ends. When the server cannot be
// built or started it skips the test, or fails it under CI=true.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if CI() {
		tb.Fatalf("test API server (CI=true, so not skipping): %v", err)
	}
	tb.Skipf("test API server unavailable (under CI=true this fails): %v", err)
}
