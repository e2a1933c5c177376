//go:build e2e

// Package release tests release images end to end, through the
// payload-apply binary: a real registry (Debian's docker-registry, TLS and
// htpasswd), push and pull of the real payload, skopeo copying it out and
// back, atomic signatures made by gpg and ours verified by library-go's
// verifier, cosign signatures both ways, and apply refusing what is not
// verified on a real API server.
package release

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/test/apiserver"
	"github.com/payload-apply/payload-apply/test/clitest"
	testregistry "github.com/payload-apply/payload-apply/test/registry"
)

// binary is the payload-apply command built for this test binary.
var binary string

func TestMain(m *testing.M) {
	clitest.PeakHelper()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "payload-apply-release-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "payload-apply")
	build := gobuild.Command(binary, "./cmd/payload-apply")
	build.Dir = "../../.."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: go build ./cmd/payload-apply:", err)
		return 1
	}
	return testregistry.Wrap(func() int { return apiserver.Run(m, apiserver.Options{}) })
}

// realPayload is the real OpenShift payload in the shared checkout.
const realPayload = "../../../../shared/testdata/ocp-payload"

func requireRealPayload(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(realPayload, "release-manifests")); err != nil {
		if apiserver.CI() {
			t.Fatalf("real payload %s is missing: %v", realPayload, err)
		}
		t.Skipf("skipping: the real payload %s is not here (%v)", realPayload, err)
	}
	return realPayload
}

// env is what every payload-apply run of a test sees: the registry's
// credentials (REGISTRY_AUTH_FILE) and CA (SSL_CERT_FILE), a cache of its
// own (XDG_CACHE_HOME) and a HOME with no credentials of the user's.
type env struct {
	t     *testing.T
	reg   *testregistry.Registry
	vars  []string
	cache string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	r := testregistry.Shared(t)
	home := t.TempDir()
	cache := filepath.Join(t.TempDir(), "cache")
	return &env{t: t, reg: r, cache: cache, vars: []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CACHE_HOME=" + cache,
		"REGISTRY_AUTH_FILE=" + r.AuthFile,
		"SSL_CERT_FILE=" + r.CABundle,
		"GNUPGHOME=" + filepath.Join(home, ".gnupg"),
	}}
}

// result is one command's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// run runs a command with the environment (extra variables last).
func (e *env) run(name string, args []string, extra ...string) result {
	e.t.Helper()
	return e.runIn("", name, args, extra...)
}

// runIn is run in directory dir.
func (e *env) runIn(dir, name string, args []string, extra ...string) result {
	e.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, e.vars...), extra...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// pa runs payload-apply.
func (e *env) pa(args ...string) result {
	e.t.Helper()
	return e.run(binary, args)
}

// must runs payload-apply and fails the test unless it exits 0.
func (e *env) must(args ...string) result {
	e.t.Helper()
	r := e.pa(args...)
	if r.code != 0 {
		e.t.Fatalf("payload-apply %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// push builds the payload in dir as version v and pushes it to repo:tag of
// the registry; it returns the reference by tag and the digest.
func (e *env) push(dir, v, repo, tag string) (string, string) {
	e.t.Helper()
	ref := e.reg.Host + "/" + repo + ":" + tag
	r := e.must("build", "--from", dir, "--version", v, "--to", ref)
	return ref, strings.TrimSpace(r.stdout)
}

// tinyPayload writes a payload of a Namespace named name with a
// ConfigMap, and openshift-config, as version v.
func tinyPayload(t *testing.T, name, v string) string {
	t.Helper()
	dir := t.TempDir()
	rm := filepath.Join(dir, "release-manifests")
	if err := os.MkdirAll(rm, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"release-metadata": fmt.Sprintf(`{"kind":"cincinnati-metadata-v0","version":%q}`, v),
		"image-references": fmt.Sprintf(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":%q},"spec":{"tags":[]}}`, v),
		// apply writes the openshift-config/cluster-profile ConfigMap.
		"0000_03_tiny_00_openshift-config.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: openshift-config
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
`,
		"0000_50_tiny_00_namespace.yaml": fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
`, name),
		"0000_50_tiny_01_configmap.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: tiny
  namespace: %s
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
data:
  version: %q
`, name, v),
	}
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(rm, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
