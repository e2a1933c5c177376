package apiserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/payload-apply/payload-apply/test/apiserver/internal/controlplane"
)

// Component names one process of the control plane, for Server.Kill and
// Server.Restart.
type Component = controlplane.Component

// The components a Server runs.
const (
	// Etcd is the etcd server holding the API server's data.
	Etcd = controlplane.Etcd
	// APIServer is kube-apiserver.
	APIServer = controlplane.APIServer
	// ControllerManager is kube-controller-manager; it runs only when
	// Options.Controllers is not empty.
	ControllerManager = controlplane.ControllerManager
)

// Options configures Start. The zero value runs etcd and kube-apiserver in a
// new temporary directory, with binaries from hack/test-apiserver.sh build.
type Options struct {
	// Controllers are the kube-controller-manager controllers to run, as its
	// --controllers flag names them; the "-controller" suffix may be left
	// out, e.g. "namespace", "garbage-collector", "replicaset",
	// "deployment", "serviceaccount". Empty: no controller manager, so no
	// garbage collection, no namespace deletion and no ReplicaSets.
	Controllers []string
	// APIServerFlags are extra kube-apiserver flags, e.g.
	// "--max-requests-inflight=5". They come after ours, so they win.
	APIServerFlags []string
	// EtcdFlags are extra etcd flags, e.g. "--quota-backend-bytes=8589934592"
	// (etcd's default quota is 2 GiB) for payloads far bigger than a
	// release. They come after ours, so they win.
	EtcdFlags []string
	// Dir holds certificates, etcd data, logs (<component>.log), pid files
	// and the kubeconfig; it is kept by Stop. Empty: a new temporary
	// directory that Stop removes.
	Dir string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and
	// kubectl. Empty: run hack/test-apiserver.sh build (a no-op when the
	// binaries are current) and use _output/bin of the repository.
	BinDir string
	// ReadyTimeout bounds the wait for each component to become ready; zero
	// means 90 seconds.
	ReadyTimeout time.Duration
}

// Server is a running test control plane. Its methods are safe for
// concurrent use; Kill, Restart and Stop are serialized.
type Server struct {
	// Kubeconfig is the path of the admin kubeconfig: server
	// https://127.0.0.1:PORT, the CA, and a bearer token in group
	// system:masters.
	Kubeconfig string
	// BinDir is the directory of the etcd, kube-apiserver,
	// kube-controller-manager and kubectl binaries.
	BinDir string

	cp      *controlplane.ControlPlane
	tempDir string // removed by Stop; empty when Options.Dir was given

	stopOnce sync.Once
	stopErr  error
}

// tempPrefix names the temporary directories of Start; stale ones are
// removed by a later Start.
const tempPrefix = "payload-apply-apiserver-"

// ownerFile in a temporary directory holds the pid of the process that
// created it.
const ownerFile = "owner.pid"

// Start builds the binaries unless opts.BinDir is set, then starts etcd,
// kube-apiserver and, when opts.Controllers is set, kube-controller-manager
// on free ports of 127.0.0.1, and waits until they are ready. The processes
// are killed when the calling process dies, even by a panic; call Stop to end
// them earlier. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Server, error) {
	binDir := opts.BinDir
	if binDir == "" {
		var err error
		if binDir, err = Build(ctx); err != nil {
			return nil, err
		}
	}
	s := &Server{BinDir: binDir}
	dir := opts.Dir
	if dir == "" {
		removeStaleTempDirs()
		var err error
		if dir, err = os.MkdirTemp("", tempPrefix); err != nil {
			return nil, fmt.Errorf("apiserver: %w", err)
		}
		s.tempDir = dir
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("apiserver: %w", err)
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Config{
		BinDir:         binDir,
		Dir:            dir,
		Controllers:    opts.Controllers,
		APIServerFlags: opts.APIServerFlags,
		EtcdFlags:      opts.EtcdFlags,
		ReadyTimeout:   opts.ReadyTimeout,
	})
	if err != nil {
		if s.tempDir != "" {
			_ = os.RemoveAll(s.tempDir)
		}
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	s.cp = cp
	s.Kubeconfig = cp.Kubeconfig()
	return s, nil
}

// RESTConfig returns a new client configuration for the admin user; the
// caller may change it. Client-side rate limiting is relaxed (QPS 200, burst
// 400) so that tests are not throttled.
func (s *Server) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            s.cp.URL(),
		BearerToken:     s.cp.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAData: s.cp.CA()},
		QPS:             200,
		Burst:           400,
	}
}

// URL returns the kube-apiserver address, https://127.0.0.1:PORT. It stays
// the same across Restart.
func (s *Server) URL() string { return s.cp.URL() }

// Dir returns the directory of certificates, data, logs and pid files.
func (s *Server) Dir() string { return s.cp.Dir() }

// LogFile returns the path of c's log, which collects every run of c.
func (s *Server) LogFile(c Component) string {
	return filepath.Join(s.cp.Dir(), string(c)+".log")
}

// Kubectl returns a command running kubectl from BinDir against the server
// (KUBECONFIG is set) with the given arguments.
func (s *Server) Kubectl(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.BinDir, "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.Kubeconfig)
	return cmd
}

// Kill ends component c with SIGKILL, as a crash would, and waits for it to
// exit. Clients then see connection errors until Restart. Killing a component
// that is not running is not an error.
func (s *Server) Kill(c Component) error {
	if err := s.cp.Kill(c); err != nil {
		return fmt.Errorf("apiserver: %w", err)
	}
	return nil
}

// Restart starts component c again on the same port with the same flags,
// certificates and data, killing it first if it still runs, and waits until
// it is ready. For APIServer, ready means /readyz passes, so etcd must run.
func (s *Server) Restart(ctx context.Context, c Component) error {
	if err := s.cp.Restart(ctx, c); err != nil {
		return fmt.Errorf("apiserver: %w", err)
	}
	return nil
}

// Pid returns the process id of component c, or 0 when it is not running.
func (s *Server) Pid(c Component) int { return s.cp.Pid(c) }

// Running reports whether component c is running.
func (s *Server) Running(c Component) bool { return s.cp.Running(c) }

// Stop ends all components (SIGTERM, then SIGKILL after a grace period) and
// removes the temporary directory, if Start made one. Later calls return the
// first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.cp.Stop()
		if s.tempDir != "" {
			s.stopErr = errors.Join(s.stopErr, os.RemoveAll(s.tempDir))
		}
		if s.stopErr != nil {
			s.stopErr = fmt.Errorf("apiserver: stop: %w", s.stopErr)
		}
	})
	return s.stopErr
}

// Build runs hack/test-apiserver.sh build, which builds etcd,
// kube-apiserver, kube-controller-manager and kubectl once (several minutes
// on a cold cache) and then only when hack/tools changes, and returns the
// directory of the binaries. It finds the repository from the working
// directory, which go test sets to the package directory. Its progress goes
// to standard error.
func Build(ctx context.Context) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "test-apiserver.sh"), "build")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("apiserver: hack/test-apiserver.sh build: %w", err)
	}
	return filepath.Join(root, "_output", "bin"), nil
}

// repoRoot returns the nearest directory above the working directory that
// holds hack/test-apiserver.sh.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("apiserver: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "test-apiserver.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("apiserver: no hack/test-apiserver.sh in %s or above", dir)
		}
	}
}

// removeStaleTempDirs removes the temporary directories of earlier Starts
// whose process is gone (it panicked or was killed before Stop).
func removeStaleTempDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}
