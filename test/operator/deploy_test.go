//go:build e2e

package operator

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// run runs the command to completion and returns its stdout; a failure
// fails the test with stderr.
func run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("payload-apply %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// testManifests: `operator manifests` applies to a real API server, and
// the ServiceAccount it binds may do everything the operator does: a
// replica run with the ServiceAccount's token leads (its Lease's Role),
// reconciles (reads, the record's and the ClusterOperators' watches) and
// repairs a deleted object (creates).
func testManifests(t *testing.T) {
	s, r := steady(t)
	out := run(t, "operator", "manifests", "--payload", realpayload.Dir(t), "--namespace", leaseNS, "--image", "example.com/payload-apply:test",
		"--resync=10s", "--lease-duration=6s", "--renew-deadline=4s", "--retry-period=1s")
	for _, want := range []string{"kind: Namespace", "kind: ServiceAccount", "kind: ClusterRole\n", "kind: ClusterRoleBinding", "kind: Role\n", "kind: RoleBinding",
		"kind: Deployment", "replicas: 2", "path: /healthz", "path: /readyz", "memory: 200Mi", "- --payload=/", "- --resync=10s",
		"resources:\n  - clusterversions/status", "- leases"} {
		if !strings.Contains(out, want) {
			t.Errorf("the manifests lack %q", want)
		}
	}
	path := filepath.Join(t.TempDir(), "operator.yaml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, s, "apply", "--server-side", "-f", path)

	// The ServiceAccount's own credentials.
	token := strings.TrimSpace(kubectl(t, s, "-n", leaseNS, "create", "token", "payload-apply-operator", "--duration=1h"))
	cfg := s.RESTConfig()
	kc := filepath.Join(t.TempDir(), "sa.kubeconfig")
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, cfg.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + cfg.Host + ", certificate-authority: " + ca + "}\n" +
		"users:\n- name: sa\n  user: {token: " + token + "}\ncontexts:\n- name: c\n  context: {cluster: c, user: sa}\ncurrent-context: c\n"
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	// The running replica steps aside: the one with the ServiceAccount's
	// token leads.
	r.signal(t, syscall.SIGTERM)
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("%s exited with %d", r.name, code)
	}
	args := operatorArgs(t, s)
	args[0] = "--kubeconfig=" + kc
	sa := startReplica(t, "replica-sa", args...)
	survivor = sa
	waitFor(t, 20*time.Second, "the ServiceAccount's replica leading", func() bool { return leaseHolder(t, s) == sa.name })
	waitFor(t, 3*resync, "its reconcile pass", func() bool {
		return sa.scrape(t).value("payload_apply_operator_passes_total", "mode", "reconcile", "result", "success") >= 1
	})
	cm := strings.SplitN(driftConfigMap, "/", 2)
	kubectl(t, s, "-n", cm[0], "delete", "configmap", cm[1])
	waitFor(t, 3*resync, "the ConfigMap made again", func() bool {
		_, err := s.Kubectl(t.Context(), "-n", cm[0], "get", "configmap", cm[1]).CombinedOutput()
		return err == nil
	})
	if strings.Contains(sa.log(), "forbidden") {
		t.Errorf("the ServiceAccount's replica was refused something:\n%s", tail(sa.log(), 20))
	}
}

// TestImage: `operator image` puts a static payload-apply in an image,
// with the payload baked in or not, that skopeo reads (OCI layout and
// docker-archive); the binary copied out of the layout by skopeo runs.
// A dynamically linked binary is refused.
func TestImage(t *testing.T) {
	skopeo, err := exec.LookPath("skopeo")
	if err != nil {
		if apiserver.CI() {
			t.Fatal("skopeo is not installed; CI must run hack/install-test-deps.sh first")
		}
		t.Skip("skopeo is not installed (run hack/install-test-deps.sh)")
	}
	root, err := realpayload.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	static := filepath.Join(t.TempDir(), "payload-apply")
	build := gobuild.Command(static, "./cmd/payload-apply")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}

	layout := filepath.Join(t.TempDir(), "layout")
	digest := strings.TrimSpace(run(t, "operator", "image", "--binary", static, "--payload", realpayload.Dir(t), "--output-dir", layout))
	archive := filepath.Join(t.TempDir(), "operator.tar")
	run(t, "operator", "image", "--binary", static, "--output-file", archive)

	type inspect struct {
		Digest string
		Labels map[string]string
		Layers []string
	}
	inspectOf := func(ref string) inspect {
		out, err := exec.Command(skopeo, "inspect", ref).Output()
		if err != nil {
			t.Fatalf("skopeo inspect %s: %v", ref, err)
		}
		var got inspect
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	baked := inspectOf("oci:" + layout)
	if baked.Digest != digest || len(baked.Layers) != 2 || baked.Labels["io.openshift.release"] == "" {
		t.Errorf("the image with the payload: digest %s (printed %s), %d layers, labels %v", baked.Digest, digest, len(baked.Layers), baked.Labels)
	}
	bare := inspectOf("docker-archive:" + archive)
	if len(bare.Layers) != 1 || bare.Labels["org.opencontainers.image.title"] != "payload-apply" {
		t.Errorf("the image without a payload: %d layers, labels %v", len(bare.Layers), bare.Labels)
	}
	cfgOut, err := exec.Command(skopeo, "inspect", "--config", "oci:"+layout).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Entrypoint":["/usr/bin/payload-apply"]`, `"Cmd":["operator","--payload=/"]`, `"User":"65532:65532"`} {
		if !strings.Contains(strings.Join(strings.Fields(string(cfgOut)), ""), want) {
			t.Errorf("the config lacks %s: %s", want, cfgOut)
		}
	}

	// The binary, as skopeo copies it out, runs.
	dir := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command(skopeo, "copy", "--quiet", "oci:"+layout, "dir:"+dir).CombinedOutput(); err != nil {
		t.Fatalf("skopeo copy: %v\n%s", err, out)
	}
	bin := extractFile(t, dir, baked.Layers, "usr/bin/payload-apply")
	exe := filepath.Join(t.TempDir(), "payload-apply")
	if err := os.WriteFile(exe, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(context.Background(), exe, "version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "Client Version: ") {
		t.Errorf("the image's binary: %v %q", err, out)
	}

	// The test's own binary is linked dynamically (cgo): refused.
	cmd := exec.Command(binary, "operator", "image", "--binary", binary, "--output-dir", filepath.Join(t.TempDir(), "x"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a static executable") || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Errorf("a dynamic binary: %v %s", err, out)
	}
}

// extractFile returns a file of the layers skopeo copied to dir.
func extractFile(t *testing.T, dir string, layers []string, name string) []byte {
	t.Helper()
	for _, l := range layers {
		f, err := os.Open(filepath.Join(dir, strings.TrimPrefix(l, "sha256:")))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			hdr, err := tr.Next()
			if err != nil {
				break
			}
			if hdr.Name == name {
				b, err := io.ReadAll(tr)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
		f.Close()
	}
	t.Fatalf("%s is in no layer", name)
	return nil
}
