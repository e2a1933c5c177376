//go:build e2e

package release

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	testregistry "github.com/payload-apply/payload-apply/test/registry"
)

// TestPushPullRealPayload pushes the real payload, pulls it by tag, by
// digest and as skopeo spells it, and renders what the directory renders;
// then renders again from the cache with the registry out of reach.
func TestPushPullRealPayload(t *testing.T) {
	dir := requireRealPayload(t)
	e := newEnv(t)
	ref, digest := e.push(dir, "4.22.0-0.snapshot-2026-08", "ocp/release", "4.22.0")
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("build --to printed %q, want a digest", digest)
	}
	byDigest := e.reg.Host + "/ocp/release@" + digest
	wantList := e.must("render", "--list", "--payload", dir).stdout
	wantYAML := e.must("render", "--payload", dir, "--profile", "single-node-developer").stdout
	for _, p := range []string{ref, byDigest, "docker://" + ref} {
		if got := e.must("render", "--list", "--payload", p).stdout; got != wantList {
			t.Errorf("render --list --payload %s differs from the directory's", p)
		}
	}
	if got := e.must("render", "--payload", byDigest, "--profile", "single-node-developer").stdout; got != wantYAML {
		t.Errorf("render --payload %s differs from the directory's", byDigest)
	}

	// By digest, the cache answers: a registry that is not there serves
	// (the cache is keyed by the content's digest, whoever served it).
	gone := "127.0.0.1:1/elsewhere/release@" + digest
	if r := e.pa("render", "--list", "--payload", gone); r.code != 0 || r.stdout != wantList {
		t.Errorf("render from the cache (registry unreachable): exit %d, same output %v\n%s", r.code, r.stdout == wantList, r.stderr)
	}
	// --no-cache asks the registry, which is not there.
	if r := e.pa("render", "--list", "--payload", gone, "--no-cache"); r.code != 2 || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("render --no-cache from an unreachable registry: exit %d, want 2 naming it\n%s", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(e.cache, "payload-apply", "payloads"))
	n := 0
	for _, en := range entries {
		if strings.HasSuffix(en.Name(), ".tar") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d cache entries, want 1 (one digest)", n)
	}

	// info and extract of the pulled release.
	var info struct {
		Name, Digest, PullFrom string
		Components             []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(e.must("info", ref, "-o", "json").stdout), &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "4.22.0-0.snapshot-2026-08" || info.Digest != digest || info.PullFrom != byDigest || len(info.Components) < 20 {
		t.Errorf("info: %+v", info)
	}
	out := filepath.Join(t.TempDir(), "extracted")
	e.must("extract", ref, "--output-dir", out, "--included", "--profile", "single-node-developer")
	if got := e.must("render", "--payload", out, "--profile", "single-node-developer").stdout; got != wantYAML {
		t.Errorf("render of extract --included differs from render of the payload")
	}
}

// TestSkopeoCopiesOutAndBack copies the pushed real payload out of the
// registry and back with skopeo, a client nobody here wrote: the digest holds, and
// what skopeo wrote reads back.
func TestSkopeoCopiesOutAndBack(t *testing.T) {
	skopeo := testregistry.Tool(t, "skopeo")
	dir := requireRealPayload(t)
	e := newEnv(t)
	ref, digest := e.push(dir, "4.22.0-0.snapshot-2026-08", "ocp/skopeo", "4.22.0")
	layout := filepath.Join(t.TempDir(), "layout")
	auth := []string{"--src-authfile", e.reg.AuthFile, "--src-cert-dir", e.reg.CertDir}
	if r := e.run(skopeo, append(append([]string{"copy"}, auth...), "docker://"+ref, "oci:"+layout+":4.22.0")); r.code != 0 {
		t.Fatalf("skopeo copy out: %s", r.stderr)
	}
	back := e.reg.Host + "/ocp/skopeo-copy:4.22.0"
	if r := e.run(skopeo, []string{"copy", "--dest-authfile", e.reg.AuthFile, "--dest-cert-dir", e.reg.CertDir, "oci:" + layout + ":4.22.0", "docker://" + back}); r.code != 0 {
		t.Fatalf("skopeo copy back: %s", r.stderr)
	}
	r := e.run(skopeo, []string{"inspect", "--authfile", e.reg.AuthFile, "--cert-dir", e.reg.CertDir, "--format", "{{.Digest}}", "docker://" + back})
	if r.code != 0 || strings.TrimSpace(r.stdout) != digest {
		t.Errorf("skopeo inspect of the copy: %q (exit %d, %s), want %s", r.stdout, r.code, r.stderr, digest)
	}
	want := e.must("render", "--list", "--payload", ref).stdout
	for _, p := range []string{back, layout} {
		if got := e.must("render", "--list", "--payload", p, "--no-cache").stdout; got != want {
			t.Errorf("render of %s differs", p)
		}
	}
	var info struct{ Digest string }
	if err := json.Unmarshal([]byte(e.must("info", back, "-o", "json").stdout), &info); err != nil || info.Digest != digest {
		t.Errorf("info of skopeo's copy: digest %q, %v; want %s", info.Digest, err, digest)
	}
}

// TestConcurrentPulls renders one release from four processes at once with
// an empty cache: every one succeeds and the cache holds one entry.
func TestConcurrentPulls(t *testing.T) {
	e := newEnv(t)
	ref, _ := e.push(tinyPayload(t, "concurrent-ns", "4.22.0"), "4.22.0", "ocp/concurrent", "4.22.0")
	want := e.must("render", "--list", "--payload", ref, "--no-cache").stdout
	var wg sync.WaitGroup
	results := make([]result, 4)
	for i := range results {
		wg.Go(func() { results[i] = e.pa("render", "--list", "--payload", ref) })
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 || r.stdout != want {
			t.Errorf("run %d: exit %d, same output %v\n%s", i, r.code, r.stdout == want, r.stderr)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(e.cache, "payload-apply", "payloads"))
	kinds := map[string]int{}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
		kinds[filepath.Ext(en.Name())]++
	}
	// One entry (.tar), its parse (.parsed), the lock file, nothing else
	// (no temporary file left behind).
	if len(names) != 3 || kinds[".tar"] != 1 || kinds[".parsed"] != 1 || kinds[".lock"] != 1 {
		t.Errorf("cache holds %v, want one entry, its parse and .lock", names)
	}
}

// TestRegistryErrors: credentials and TLS problems exit 2 with the fix.
func TestRegistryErrors(t *testing.T) {
	e := newEnv(t)
	ref, _ := e.push(tinyPayload(t, "errors-ns", "4.22.0"), "4.22.0", "ocp/errors", "4.22.0")
	empty := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(empty, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		extra []string
		want  string
	}{
		{"no credentials", []string{"--registry-config", empty}, nil, "no credentials for " + e.reg.Host},
		{"unknown CA", nil, []string{"SSL_CERT_FILE=/dev/null"}, "--insecure-registry " + e.reg.Host},
		{"no such tag", nil, nil, "not found (404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ref
			if tt.name == "no such tag" {
				p = strings.TrimSuffix(ref, "4.22.0") + "9.9.9"
			}
			r := e.run(binary, append([]string{"render", "--list", "--no-cache", "--payload", p}, tt.args...), tt.extra...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want 2 and %q:\n%s", r.code, tt.want, r.stderr)
			}
		})
	}
	t.Run("insecure registry", func(t *testing.T) {
		r := e.run(binary, []string{"render", "--list", "--no-cache", "--payload", ref, "--insecure-registry", e.reg.Host}, "SSL_CERT_FILE=/dev/null")
		if r.code != 0 {
			t.Errorf("--insecure-registry: exit %d\n%s", r.code, r.stderr)
		}
	})
}
