//go:build e2e

package release

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	testregistry "github.com/payload-apply/payload-apply/test/registry"
)

// gpgEnv is a GnuPG home of a test, with its agent stopped at the end.
type gpgEnv struct {
	*env
	gpg string
}

func newGPG(t *testing.T, e *env) *gpgEnv {
	t.Helper()
	g := &gpgEnv{env: e, gpg: testregistry.Tool(t, "gpg")}
	home := filepath.Join(e.vars[0][len("HOME="):], ".gnupg")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.run("gpgconf", []string{"--kill", "gpg-agent"}) })
	return g
}

// key makes an RSA signing key for uid, at faked time at ("" for now)
// expiring after expire ("never", "1d"), and exports its public key to a
// file.
func (g *gpgEnv) key(uid, at, expire string) (pub string) {
	g.t.Helper()
	args := []string{g.gpg, "--batch", "--passphrase", "", "--quick-gen-key", uid, "rsa2048", "sign", expire}
	if r := g.runAt(at, args...); r.code != 0 {
		g.t.Fatalf("gpg --quick-gen-key: %s", r.stderr)
	}
	r := g.run(g.gpg, []string{"--export", "--armor", uid})
	pub = filepath.Join(g.t.TempDir(), "pub.asc")
	if err := os.WriteFile(pub, []byte(r.stdout), 0o644); err != nil {
		g.t.Fatal(err)
	}
	return pub
}

// runAt runs a command under faketime when at is set.
func (g *gpgEnv) runAt(at string, args ...string) result {
	g.t.Helper()
	if at != "" {
		args = append([]string{testregistry.Tool(g.t, "faketime"), at}, args...)
	}
	return g.run(args[0], args[1:])
}

// sign makes an atomic signature of digest with gpg, as a release
// engineer signs for the CVO (the JSON through gpg --sign), into the store
// directory under storeDigest.
func (g *gpgEnv) sign(uid, at, digest, storeDigest, store string) {
	g.t.Helper()
	payload := fmt.Sprintf(`{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":%q},"identity":{"docker-reference":"quay.io/example/release:4.22.0"}},"optional":{"creator":"gpg"}}`, digest)
	in := filepath.Join(g.t.TempDir(), "payload.json")
	if err := os.WriteFile(in, []byte(payload), 0o644); err != nil {
		g.t.Fatal(err)
	}
	dir := filepath.Join(store, "sha256="+strings.TrimPrefix(storeDigest, "sha256:"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		g.t.Fatal(err)
	}
	n := 1
	for ; ; n++ {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("signature-%d", n))); err != nil {
			break
		}
	}
	out := filepath.Join(dir, fmt.Sprintf("signature-%d", n))
	if r := g.runAt(at, g.gpg, "--batch", "--yes", "-u", uid, "--output", out, "--sign", in); r.code != 0 {
		g.t.Fatalf("gpg --sign: %s", r.stderr)
	}
}

func TestAtomicSignatures(t *testing.T) {
	e := newEnv(t)
	g := newGPG(t, e)
	ref, digest := e.push(tinyPayload(t, "atomic-ns", "4.22.0"), "4.22.0", "ocp/atomic", "4.22.0")
	_, other := e.push(tinyPayload(t, "atomic-ns", "4.22.1"), "4.22.1", "ocp/atomic", "4.22.1")
	release := g.key("Release <release@example.com>", "", "never")
	stranger := g.key("Stranger <stranger@example.com>", "", "never")
	expired := g.key("Expired <expired@example.com>", "2020-01-01 00:00:00", "1d")

	stores := map[string]string{}
	store := func(name string) string {
		if stores[name] == "" {
			stores[name] = t.TempDir()
		}
		return stores[name]
	}
	g.sign("release@example.com", "", digest, digest, store("gpg"))
	g.sign("expired@example.com", "2020-01-01 12:00:00", digest, digest, store("expired"))
	g.sign("release@example.com", "", other, digest, store("another digest"))

	// Ours: payload-apply sign with the secret key gpg exports; gpg reads it back.
	secret := filepath.Join(t.TempDir(), "secret.asc")
	r := e.run(g.gpg, []string{"--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--export-secret-keys", "--armor", "release@example.com"})
	if err := os.WriteFile(secret, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	e.must("sign", ref, "--key", secret, "--signature-dir", store("ours"))
	ours := filepath.Join(store("ours"), "sha256="+strings.TrimPrefix(digest, "sha256:"), "signature-1")
	if r := e.run(g.gpg, []string{"--batch", "--decrypt", ours}); r.code != 0 || !strings.Contains(r.stdout, digest) || !strings.Contains(r.stderr, "Good signature") {
		t.Errorf("gpg --decrypt of our signature: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	tests := []struct {
		name, keyring, store, image string
		want                        string // "" verified
	}{
		{"gpg's signature", release, "gpg", ref, ""},
		{"our signature (library-go's verifier)", release, "ours", ref, ""},
		{"wrong key", stranger, "gpg", ref, "signed by unknown key"},
		{"expired key", expired, "expired", ref, "expired on 2020-01-02"},
		{"missing signature", release, "gpg", strings.TrimSuffix(ref, "4.22.0") + "4.22.1", "no atomic signature in"},
		{"signature for another digest", release, "another digest", ref, "names " + other + ", not this image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.pa("verify", tt.image, "--verify-keyring", tt.keyring, "--signature-store", store(tt.store))
			if tt.want == "" {
				if r.code != 0 || !strings.Contains(r.stdout, "verified: atomic signature by") {
					t.Errorf("exit %d, want verified:\n%s%s", r.code, r.stdout, r.stderr)
				}
				return
			}
			if r.code != 1 || !strings.Contains(r.stdout, "sha256:") || !strings.Contains(r.stdout, tt.want) {
				t.Errorf("exit %d, want 1 naming the digest and %q:\n%s%s", r.code, tt.want, r.stdout, r.stderr)
			}
		})
	}

	// The ConfigMap form, as the cluster keeps signatures.
	cm := e.must("sign", ref, "--key", secret, "-o", "configmap").stdout
	for _, w := range []string{"namespace: openshift-config-managed", "release.openshift.io/verification-signatures", "sha256-" + strings.TrimPrefix(digest, "sha256:") + "-1:"} {
		if !strings.Contains(cm, w) {
			t.Errorf("sign -o configmap lacks %q:\n%s", w, cm)
		}
	}
}

func TestCosignSignatures(t *testing.T) {
	cosign := testregistry.Tool(t, "cosign")
	e := newEnv(t)
	ref, digest := e.push(tinyPayload(t, "cosign-ns", "4.22.0"), "4.22.0", "ocp/cosign", "4.22.0")
	ref2, _ := e.push(tinyPayload(t, "cosign-ns", "4.22.1"), "4.22.1", "ocp/cosign", "4.22.1")
	keys := t.TempDir()
	pw := "COSIGN_PASSWORD=test-password"
	cmd := func(args ...string) result {
		t.Helper()
		return e.runIn(keys, cosign, args, pw)
	}
	if r := cmd("generate-key-pair"); r.code != 0 {
		t.Fatalf("cosign generate-key-pair: %s", r.stderr)
	}
	key, pub := filepath.Join(keys, "cosign.key"), filepath.Join(keys, "cosign.pub")

	// Ours, verified by cosign.
	if r := e.run(binary, []string{"sign", ref, "--cosign-key", key}, pw); r.code != 0 {
		t.Fatalf("payload-apply sign --cosign-key: %s", r.stderr)
	}
	if r := cmd("verify", "--key", pub, "--insecure-ignore-tlog=true", ref); r.code != 0 || !strings.Contains(r.stdout, digest) {
		t.Errorf("cosign verify of our signature: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Cosign's, verified by us.
	if r := cmd("sign", "--yes", "--key", key, "--tlog-upload=false", ref2); r.code != 0 {
		t.Fatalf("cosign sign: %s", r.stderr)
	}
	for _, image := range []string{ref, ref2} {
		if r := e.pa("verify", image, "--verify-cosign-key", pub); r.code != 0 || !strings.Contains(r.stdout, "verified: cosign signature by") {
			t.Errorf("verify %s: exit %d\n%s%s", image, r.code, r.stdout, r.stderr)
		}
	}
	// Another key, and an image nobody signed.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if r := e.runIn(other, cosign, []string{"generate-key-pair"}, pw); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := e.pa("verify", ref, "--verify-cosign-key", filepath.Join(other, "cosign.pub")); r.code != 1 || !strings.Contains(r.stdout, digest) || !strings.Contains(r.stdout, "does not verify with the key") {
		t.Errorf("wrong key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ref3, d3 := e.push(tinyPayload(t, "cosign-ns", "4.22.2"), "4.22.2", "ocp/cosign", "4.22.2")
	if r := e.pa("verify", ref3, "--verify-cosign-key", pub); r.code != 1 || !strings.Contains(r.stdout, "no cosign signature (no tag") || !strings.Contains(r.stdout, d3) {
		t.Errorf("missing signature: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
