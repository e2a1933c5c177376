//go:build e2e

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
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// panicEnv makes the test binary a child for TestPanicLeavesNoProcesses: it
// writes its pids to the file the variable names and panics.
const panicEnv = "APISERVER_TEST_PANIC_PIDS"

func TestMain(m *testing.M) {
	opts := Options{Controllers: []string{"namespace", "garbage-collector"}}
	if os.Getenv(panicEnv) != "" {
		opts = Options{}
	}
	os.Exit(Run(m, opts))
}

func client(t *testing.T, s *Server) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func namespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func configMap(t *testing.T, c kubernetes.Interface, ns, name string, data map[string]string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners},
		Data:       data,
	}
	got, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// waitGone polls get until it returns NotFound.
func waitGone(t *testing.T, what string, get func(context.Context) error) {
	t.Helper()
	start := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 60*time.Second, true,
		func(ctx context.Context) (bool, error) {
			err := get(ctx)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, nil
		})
	if err != nil {
		t.Fatalf("%s still there after %s: %v", what, time.Since(start), err)
	}
	t.Logf("%s gone after %s", what, time.Since(start).Round(time.Millisecond))
}

func TestConfigMapRoundTrip(t *testing.T) {
	s := Shared(t)
	c := client(t, s)
	namespace(t, c, "roundtrip")
	want := map[string]string{"a": "1", "b": "two"}
	configMap(t, c, "roundtrip", "cm", want)

	got, err := c.CoreV1().ConfigMaps("roundtrip").Get(t.Context(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Data) != fmt.Sprint(want) {
		t.Errorf("data = %v, want %v", got.Data, want)
	}
	t.Logf("resident memory: %v", s.cp.RSS())
}

func TestKubectl(t *testing.T) {
	s := Shared(t)
	out, err := s.Kubectl(t.Context(), "get", "ns", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get ns: %v\n%s", err, out)
	}
	for _, ns := range []string{"namespace/default", "namespace/kube-system"} {
		if !strings.Contains(string(out), ns) {
			t.Errorf("kubectl get ns: no %s in:\n%s", ns, out)
		}
	}
	out, err = s.Kubectl(t.Context(), "version").CombinedOutput()
	if err != nil || strings.Contains(string(out), "WARNING") {
		t.Errorf("kubectl version: %v\n%s", err, out)
	}
}

func TestKillAndRestart(t *testing.T) {
	s := Shared(t)
	c := client(t, s)
	namespace(t, c, "restart")
	configMap(t, c, "restart", "before", map[string]string{"k": "v"})
	url := s.URL()
	get := func(name string) error {
		_, err := c.CoreV1().ConfigMaps("restart").Get(t.Context(), name, metav1.GetOptions{})
		return err
	}

	t.Run("kube-apiserver", func(t *testing.T) {
		pid := s.Pid(APIServer)
		if err := s.Kill(APIServer); err != nil {
			t.Fatal(err)
		}
		if s.Running(APIServer) {
			t.Fatal("kube-apiserver still running after Kill")
		}
		if err := get("before"); err == nil {
			t.Fatal("Get succeeded with kube-apiserver killed")
		}
		start := time.Now()
		if err := s.Restart(t.Context(), APIServer); err != nil {
			t.Fatal(err)
		}
		t.Logf("kube-apiserver ready %s after restart", time.Since(start).Round(time.Millisecond))
		if s.URL() != url || s.Pid(APIServer) == pid {
			t.Errorf("after restart: URL %s (was %s), pid %d (was %d)", s.URL(), url, s.Pid(APIServer), pid)
		}
		if err := get("before"); err != nil {
			t.Fatalf("ConfigMap lost across restart: %v", err)
		}
	})

	t.Run("etcd", func(t *testing.T) {
		if err := s.Kill(Etcd); err != nil {
			t.Fatal(err)
		}
		if err := s.Restart(t.Context(), Etcd); err != nil {
			t.Fatal(err)
		}
		// kube-apiserver reconnects by itself.
		start := time.Now()
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true,
			func(context.Context) (bool, error) { return get("before") == nil, nil })
		if err != nil {
			t.Fatalf("ConfigMap not readable after etcd restart: %v: %v", err, get("before"))
		}
		t.Logf("kube-apiserver served again %s after etcd was ready", time.Since(start).Round(time.Millisecond))
		configMap(t, c, "restart", "after", nil)
	})
}

func TestNamespaceDeletion(t *testing.T) {
	s := Shared(t)
	c := client(t, s)
	namespace(t, c, "doomed")
	configMap(t, c, "doomed", "content", map[string]string{"k": "v"})
	if err := c.CoreV1().Namespaces().Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "namespace doomed", func(ctx context.Context) error {
		_, err := c.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		return err
	})
}

func TestGarbageCollection(t *testing.T) {
	s := Shared(t)
	c := client(t, s)
	namespace(t, c, "gc")
	owner := configMap(t, c, "gc", "owner", nil)
	configMap(t, c, "gc", "dependent", nil, metav1.OwnerReference{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
	})
	if err := c.CoreV1().ConfigMaps("gc").Delete(t.Context(), "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "dependent ConfigMap", func(ctx context.Context) error {
		_, err := c.CoreV1().ConfigMaps("gc").Get(ctx, "dependent", metav1.GetOptions{})
		return err
	})
}

func TestNewWithFlags(t *testing.T) {
	if os.Getenv(panicEnv) != "" {
		t.Skip("child of TestPanicLeavesNoProcesses")
	}
	Shared(t) // skip or fail alike when no server can run
	start := time.Now()
	s := New(t, Options{APIServerFlags: []string{"--max-requests-inflight=5"}, EtcdFlags: []string{"--quota-backend-bytes=3221225472"}})
	t.Logf("second server ready in %s", time.Since(start).Round(time.Millisecond))
	for c, flag := range map[Component]string{APIServer: "--max-requests-inflight=5", Etcd: "--quota-backend-bytes=3221225472"} {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.Pid(c)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cmdline), flag) {
			t.Errorf("%s: flag not passed: %q", c, cmdline)
		}
	}
	if s.Running(ControllerManager) {
		t.Error("kube-controller-manager runs without controllers")
	}
	if _, err := client(t, s).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := s.Dir()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary directory %s left after Stop: %v", dir, err)
	}
}

// TestPanicLeavesNoProcesses runs this test binary with a test that panics
// while its server runs, and checks that no process of that server survives.
func TestPanicLeavesNoProcesses(t *testing.T) {
	if os.Getenv(panicEnv) != "" {
		s := Shared(t)
		pids := []string{s.Dir()}
		for _, c := range []Component{Etcd, APIServer} {
			pids = append(pids, strconv.Itoa(s.Pid(c)))
		}
		if err := os.WriteFile(os.Getenv(panicEnv), []byte(strings.Join(pids, " ")), 0o600); err != nil {
			t.Fatal(err)
		}
		panic("deliberate panic with the server running")
	}
	Shared(t) // skip or fail alike when no server can run
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestPanicLeavesNoProcesses$")
	cmd.Env = append(os.Environ(), panicEnv+"="+pidFile)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "deliberate panic") {
		t.Fatalf("child did not panic: %v\n%s", err, out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("%v; child output:\n%s", err, out)
	}
	fields := strings.Fields(string(b))
	for _, f := range fields[1:] {
		pid, _ := strconv.Atoi(f)
		err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return !alive(pid), nil })
		if err != nil {
			t.Errorf("process %d of the panicked test binary still alive", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	// The child's temporary directory is left, and the next Start removes it.
	removeStaleTempDirs()
	if _, err := os.Stat(fields[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale directory %s of the panicked test binary not removed: %v", fields[0], err)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}
