//go:build e2e

package release

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/crypto/openpgp"       //nolint:staticcheck // the keys library-go's verifier reads
	"golang.org/x/crypto/openpgp/armor" //nolint:staticcheck // see above

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/test/apiserver"
	"github.com/payload-apply/payload-apply/test/clitest"
)

// The third round of hostile inputs (issue 32), one test per class, each
// case under its own deadline through the peak helper: exit code, message,
// time and peak memory. The figures are in docs/reliability.md.

// bomb is an OpenPGP message of 842 bytes whose bzip2 packet expands to
// 1 GiB (lib/signature/testdata).
func bomb(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../../lib/signature/testdata/bzip2-bomb.sig")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pubKeyring writes an armored OpenPGP public key to dir and returns its
// path.
func pubKeyring(t *testing.T, dir string) string {
	t.Helper()
	e, err := openpgp.NewEntity("release", "", "release@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, _ := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	p := filepath.Join(dir, "release.asc")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// helperDir writes docker-credential-NAME scripts and an auth file that
// names the helper for host; it returns the environment that uses them.
func credHelper(t *testing.T, dir, host, name, script string) []string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-"+name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	auth := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(auth, []byte(fmt.Sprintf(`{"credHelpers":{%q:%q}}`, host, name)), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "REGISTRY_AUTH_FILE=" + auth}
}

// sigsServer serves one signature, dripped or whole, as an HTTP store
// (/sigs/sha256=<hex>/signature-N), counting requests.
func sigsServer(t *testing.T, digest v1.Hash, sig []byte, every time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/sigs/sha256="+digest.Hex+"/signature-1" {
			http.NotFound(w, r)
			return
		}
		if every > 0 {
			drip(w, r, sig, 1, every)
			return
		}
		w.Write(sig)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestHostileTransfers: a registry or an HTTP signature store that sends
// a byte at a time, or a credential helper that never answers, is given
// up within its stated bound (at least 4 KiB/s over every 15 s, 30 s for
// a helper), and Ctrl-C ends a transfer at once.
func TestHostileTransfers(t *testing.T) {
	e := newEnv(t)
	payload := tinyPayload(t, "drip-ns", "4.22.0")
	withHook := func(t *testing.T, hook func(f *fakeRegistry) func(http.ResponseWriter, *http.Request) bool) *fakeRegistry {
		f := newFakeRegistry(t, payload, "4.22.0")
		if hook != nil {
			f.Hook = hook(f)
		}
		return f
	}
	manifestDrip := func(f *fakeRegistry) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.HasPrefix(r.URL.Path, "/v2/r/manifests/") || r.Method == http.MethodHead {
				return false
			}
			w.Header().Set("Content-Type", f.mt)
			drip(w, r, f.manifest, 1, 500*time.Millisecond)
			return true
		}
	}
	info := func(f *fakeRegistry) []string {
		return []string{"info", f.Ref(), "--insecure-registry", f.Host, "--no-cache"}
	}
	const slow = "below the minimum rate of 4096 bytes/s"
	runHostile(t, e, []hostileCase{
		{name: "a manifest one byte every 0.5 s", parallel: true, code: 2, want: []string{"/v2/r/manifests/sha256:", ": 30 bytes in the last 15s, " + slow}, maxTime: 25 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) { return info(withHook(t, manifestDrip)), nil }},
		{name: "a layer one byte every 50 s", parallel: true, code: 2, want: []string{"/v2/r/blobs/sha256:", ": 1 bytes in the last 15s, " + slow}, maxTime: 25 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				f := withHook(t, func(f *fakeRegistry) func(http.ResponseWriter, *http.Request) bool {
					m, _ := f.Image.Manifest()
					return func(w http.ResponseWriter, r *http.Request) bool {
						if r.URL.Path != "/v2/r/blobs/"+m.Layers[len(m.Layers)-1].Digest.String() {
							return false
						}
						drip(w, r, f.blobs[m.Layers[len(m.Layers)-1].Digest.String()], 1, 50*time.Second)
						return true
					}
				})
				return info(f), nil
			}},
		{name: "Ctrl-C during a manifest one byte every 0.5 s", parallel: true, code: 130, want: []string{"interrupted"}, maxTime: 5 * time.Second,
			signal: syscall.SIGINT, after: 3 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) { return info(withHook(t, manifestDrip)), nil }},
		{name: "an HTTP signature store one byte every 0.5 s", parallel: true, code: 1, want: []string{"signature-1: ", slow}, maxTime: 25 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				f := withHook(t, nil)
				store, n := sigsServer(t, f.Digest, bomb(t), 500*time.Millisecond)
				t.Cleanup(func() {
					if got := n.Load(); got != 1 {
						t.Errorf("the store was asked %d times, want once", got)
					}
				})
				host := strings.TrimPrefix(store.URL, "http://")
				return []string{"verify", f.Ref(), "--verify-keyring", pubKeyring(t, dir), "--signature-store", store.URL + "/sigs",
					"--insecure-registry", f.Host, "--insecure-registry", host, "--no-cache"}, nil
			}},
		{name: "a credential helper that never answers", parallel: true, code: 2, maxTime: 40 * time.Second,
			want: []string{`credential helper "hang" for `, ": no answer within 30s: killed"},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				f := withHook(t, nil)
				return info(f), credHelper(t, dir, f.Host, "hang", "sleep 1000")
			}},
	})
}

// TestHostileNesting: indexes from the network nest no deeper than a local
// layout's; a helper's answer is bounded; a manifest that is not what its
// media type says, and a .sig tag that is an index, are named as such.
func TestHostileNesting(t *testing.T) {
	e := newEnv(t)
	payload := tinyPayload(t, "nest-ns", "4.22.0")
	const ociIndex = "application/vnd.oci.image.index.v1+json"
	indexOf := func(child v1.Hash, mt string, size int) []byte {
		return []byte(fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"manifests":[{"mediaType":%q,"digest":%q,"size":%d,"platform":{"os":"linux","architecture":"amd64"}}]}`, ociIndex, mt, child, size))
	}
	manifests := func(f *fakeRegistry) (n int64) {
		f.Requests.Range(func(k, v any) bool {
			if strings.HasPrefix(k.(string), "/v2/r/manifests/") {
				n += v.(*atomic.Int64).Load()
			}
			return true
		})
		return n
	}
	runHostile(t, e, []hostileCase{
		{name: "a chain of 100,000 image indexes", code: 2, want: []string{"image indexes nested more than 4 deep (the index depth limit)"}, maxTime: 5 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				f := newFakeRegistry(t, payload, "4.22.0")
				d, mt, size := f.Digest, f.mt, len(f.manifest)
				for i := range 100_000 {
					data := indexOf(d, mt, size)
					d, mt, size = f.Add(data, ociIndex, i == 99_999), ociIndex, len(data)
				}
				t.Cleanup(func() {
					if n := manifests(f); n > 7 {
						t.Errorf("%d manifest requests, want at most 7", n)
					}
				})
				return []string{"info", f.Ref(), "--insecure-registry", f.Host, "--no-cache"}, nil
			}},
		{name: "an index served as an image manifest", code: 2, want: []string{"an image index (it lists manifests) where an image manifest was expected"},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				f := newFakeRegistry(t, payload, "4.22.0")
				f.Add(indexOf(f.Digest, f.mt, len(f.manifest)), f.mt, true)
				return []string{"info", f.Ref(), "--insecure-registry", f.Host, "--no-cache"}, nil
			}},
		{name: "a credential helper that prints 300 MB", code: 2, maxMB: 150, want: []string{`credential helper "flood" for `, "answered more than 1048576 bytes, more than credentials take: killed"},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				f := newFakeRegistry(t, payload, "4.22.0")
				return []string{"info", f.Ref(), "--insecure-registry", f.Host, "--no-cache"}, credHelper(t, dir, f.Host, "flood", "head -c 300000000 /dev/zero")
			}},
		{name: "a .sig tag that is an index with a missing child", code: 1, want: []string{"an image index (it lists manifests), where cosign stores signatures as one image manifest"},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				f := newFakeRegistry(t, payload, "4.22.0")
				sig := indexOf(v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("9", 64)}, f.mt, 100)
				f.Hook = func(w http.ResponseWriter, r *http.Request) bool {
					if r.URL.Path != "/v2/r/manifests/sha256-"+f.Digest.Hex+".sig" {
						return false
					}
					w.Header().Set("Content-Type", ociIndex)
					w.Write(sig)
					return true
				}
				key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
				der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
				pub := filepath.Join(dir, "cosign.pub")
				os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
				return []string{"verify", f.Ref(), "--verify-cosign-key", pub, "--insecure-registry", f.Host, "--no-cache"}, nil
			}},
	})
}

// TestHostileSignatures: a message that expands to 1 GiB is refused before
// it is read, from a signature directory, an HTTP store and the cluster's
// signature ConfigMaps alike.
func TestHostileSignatures(t *testing.T) {
	e := newEnv(t)
	s := apiserver.Shared(t)
	f := newFakeRegistry(t, tinyPayload(t, "bomb-ns", "4.22.0"), "4.22.0")
	const expands = "a compressed packet expands to more than 51200 bytes, more than any signature holds: refused before it is read"
	verify := func(dir string, more ...string) []string {
		return append([]string{"verify", f.Ref(), "--verify-keyring", pubKeyring(t, dir), "--insecure-registry", f.Host, "--no-cache"}, more...)
	}
	runHostile(t, e, []hostileCase{
		{name: "from a signature directory", code: 1, maxMB: 150, maxTime: 5 * time.Second, want: []string{expands},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				p := filepath.Join(dir, "sigs", "sha256="+f.Digest.Hex, "signature-1")
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, bomb(t), 0o644)
				return verify(dir, "--signature-store", filepath.Join(dir, "sigs")), nil
			}},
		{name: "from an HTTP store", code: 1, maxMB: 150, maxTime: 5 * time.Second, want: []string{expands},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				store, _ := sigsServer(t, f.Digest, bomb(t), 0)
				return verify(dir, "--signature-store", store.URL+"/sigs", "--insecure-registry", strings.TrimPrefix(store.URL, "http://")), nil
			}},
		{name: "from the cluster's signature ConfigMaps", code: 1, maxMB: 150, maxTime: 10 * time.Second, want: []string{expands},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bomb-%s","namespace":"openshift-config-managed","labels":{"release.openshift.io/verification-signatures":""}},"binaryData":{"sha256-%s-1":%q}}`,
					f.Digest.Hex[:12], f.Digest.Hex, base64.StdEncoding.EncodeToString(bomb(t)))
				p := filepath.Join(dir, "cm.json")
				os.WriteFile(p, []byte(cm), 0o644)
				s.Kubectl(t.Context(), "create", "namespace", "openshift-config-managed").Run()
				if out, err := s.Kubectl(t.Context(), "apply", "-f", p).CombinedOutput(); err != nil {
					t.Fatalf("kubectl apply: %v\n%s", err, out)
				}
				// verify reads no cluster: apply does, before anything else.
				args := verify(dir, "--kubeconfig", s.Kubeconfig, "--dry-run=server")
				args[0], args[1] = "apply", "--payload="+args[1]
				return args, nil
			}},
	})
}

// TestHostileCaches: every file the caches read is opened only when it is
// a regular file and read whole only when it begins as the cache's own; a
// cache directory that is a link, or that others may write, is not used;
// a digest of any algorithm is verified or refused.
func TestHostileCaches(t *testing.T) {
	e := newEnv(t)
	payload := tinyPayload(t, "cache-ns", "4.22.0")
	f := newFakeRegistry(t, payload, "4.22.0")
	cacheEnv := func(dir string) []string { return []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")} }
	// prime runs a command once to fill the cache, then changes the files
	// whose names end in suffix under the cache's sub directory.
	prime := func(t *testing.T, dir, sub, suffix string, change func(p string), args ...string) {
		t.Helper()
		if r := e.run(binary, args, cacheEnv(dir)...); r.code != 0 {
			t.Fatalf("priming %v: exit %d\n%s", args, r.code, r.stderr)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "cache", "payload-apply", sub, "*"+suffix))
		if len(files) == 0 {
			t.Fatalf("no %s file in the %s cache", suffix, sub)
		}
		for _, p := range files {
			change(p)
		}
	}
	fifo := func(p string) {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	holes := func(p string) { os.Truncate(p, 0); os.Truncate(p, 2<<30) }
	render := []string{"render", "--payload", payload}
	info := []string{"info", f.Ref(), "--insecure-registry", f.Host}
	pipe := "not a regular file: a named pipe (FIFO)"
	runHostile(t, e, []hostileCase{
		{name: "a plan cache entry that is a FIFO", code: 0, want: []string{"Warning: plan cache", pipe}, maxTime: 5 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				prime(t, dir, "plans", ".entry", fifo, render...)
				return render, cacheEnv(dir)
			}},
		{name: "a plan cache entry of 2 GiB of holes", code: 0, want: []string{"Warning: plan cache", "not a cache entry"}, maxTime: 5 * time.Second, maxMB: 200,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				prime(t, dir, "plans", ".entry", holes, render...)
				return render, cacheEnv(dir)
			}},
		{name: "an image cache entry that is a FIFO", code: 0, want: []string{"Warning: payload cache", pipe}, maxTime: 5 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				prime(t, dir, "payloads", ".tar", fifo, info...)
				return info, cacheEnv(dir)
			}},
		{name: "an image cache .parsed file that is a FIFO", code: 0, maxTime: 5 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				prime(t, dir, "payloads", ".parsed", fifo, append(render[:1:1], "--payload", f.Ref(), "--insecure-registry", f.Host)...)
				return append(render[:1:1], "--payload", f.Ref(), "--insecure-registry", f.Host), cacheEnv(dir)
			}},
		{name: "the plan cache directory a link to the user's", code: 0, want: []string{"Warning: plan cache", "a symbolic link, not the cache's own directory"}, maxTime: 5 * time.Second,
			setup: func(t *testing.T, dir string) ([]string, []string) {
				user := filepath.Join(dir, "documents")
				os.MkdirAll(user, 0o700)
				old := time.Now().Add(-48 * time.Hour)
				for _, n := range []string{"notes.entry", ".tmp-draft", "photo.tar"} {
					os.WriteFile(filepath.Join(user, n), []byte("mine"), 0o600)
					os.Chtimes(filepath.Join(user, n), old, old)
				}
				os.MkdirAll(filepath.Join(dir, "cache", "payload-apply"), 0o700)
				os.Symlink(user, filepath.Join(dir, "cache", "payload-apply", "plans"))
				return render, cacheEnv(dir)
			},
			check: func(t *testing.T, dir string, b clitest.Bounded) {
				entries, _ := os.ReadDir(filepath.Join(dir, "documents"))
				if len(entries) != 3 {
					t.Errorf("the user's directory holds %d files, want their 3 alone", len(entries))
				}
			}},
		{name: "a payload cache others may write, with a forged entry", code: 0, want: []string{"Warning: payload cache", "writable by others (mode 0777)", "4.22.0"},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				// A forged entry: another release's entry, renamed to this
				// digest, its meta.json saying so.
				other := newFakeRegistry(t, tinyPayload(t, "cache-ns", "6.6.6"), "6.6.6")
				if r := e.run(binary, []string{"info", other.Ref(), "--insecure-registry", other.Host}, cacheEnv(dir)...); r.code != 0 {
					t.Fatal(r.stderr)
				}
				payloads := filepath.Join(dir, "cache", "payload-apply", "payloads")
				forged, _ := os.ReadFile(filepath.Join(payloads, "sha256-"+other.Digest.Hex+".tar"))
				forged = bytes.ReplaceAll(forged, []byte(other.Digest.Hex), []byte(f.Digest.Hex))
				os.WriteFile(filepath.Join(payloads, "sha256-"+f.Digest.Hex+".tar"), forged, 0o600)
				os.Chmod(payloads, 0o777)
				return []string{"info", f.Pinned(), "--insecure-registry", f.Host}, cacheEnv(dir)
			},
			check: func(t *testing.T, dir string, b clitest.Bounded) {
				if strings.Contains(b.Stdout, "6.6.6") {
					t.Errorf("the forged entry was served:\n%s", b.Stdout)
				}
			}},
		{name: "an OCI layout whose config a sha512 digest names", code: 2, want: []string{"content has digest sha512:"},
			setup: func(t *testing.T, dir string) ([]string, []string) {
				return []string{"info", sha512Layout(t, f.Image, dir)}, nil
			}},
	})
}

// sha512Layout writes img as an OCI layout whose manifest names a forged
// config by a sha512 digest that is not its content's.
func sha512Layout(t *testing.T, img v1.Image, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "layout")
	if err := image.Write(img, out, image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, _ := img.RawManifest()
	var m map[string]any
	json.Unmarshal(raw, &m)
	forged := []byte(`{"architecture":"amd64","os":"linux","config":{"Labels":{"io.openshift.release":"6.6.6"}}}`)
	hex := strings.Repeat("e", 128)
	os.MkdirAll(filepath.Join(out, "blobs", "sha512"), 0o755)
	os.WriteFile(filepath.Join(out, "blobs", "sha512", hex), forged, 0o644)
	m["config"] = map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha512:" + hex, "size": len(forged)}
	data, _ := json.Marshal(m)
	d, _, _ := v1.SHA256(bytes.NewReader(data))
	os.WriteFile(filepath.Join(out, "blobs", "sha256", d.Hex), data, 0o644)
	index := fmt.Sprintf(`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":%q,"size":%d}]}`, d, len(data))
	os.WriteFile(filepath.Join(out, "index.json"), []byte(index), 0o644)
	return out
}

// TestMisleadingMessages: what issue 32 found saying the wrong thing now
// says what is wrong, where, and what to do; with real gpg keys, and a
// real registry.
func TestMisleadingMessages(t *testing.T) {
	e := newEnv(t)
	g := newGPG(t, e)
	ref, digest := e.push(tinyPayload(t, "msg-ns", "4.22.0"), "4.22.0", "ocp/messages", "4.22.0")
	gpg := func(args ...string) result {
		t.Helper()
		r := e.run(g.gpg, append([]string{"--batch", "--pinentry-mode", "loopback", "--passphrase", ""}, args...))
		if r.code != 0 {
			t.Fatalf("gpg %v: %s", args, r.stderr)
		}
		return r
	}
	fpr := func(uid string) string {
		for _, l := range strings.Split(gpg("--list-keys", "--with-colons", uid).stdout, "\n") {
			if strings.HasPrefix(l, "fpr:") {
				return strings.Split(l, ":")[9]
			}
		}
		t.Fatalf("no key %s", uid)
		return ""
	}
	export := func(uid string) string {
		p := filepath.Join(t.TempDir(), "pub.asc")
		os.WriteFile(p, []byte(gpg("--export", "--armor", uid).stdout), 0o644)
		return p
	}
	store := func() string { return t.TempDir() }

	// A key revoked after it signed.
	revokedStore := store()
	g.key("Revoked <revoked@example.com>", "", "never")
	g.sign("revoked@example.com", "", digest, digest, revokedStore)
	rev, _ := os.ReadFile(filepath.Join(e.vars[0][len("HOME="):], ".gnupg", "openpgp-revocs.d", fpr("revoked@example.com")+".rev"))
	revFile := filepath.Join(t.TempDir(), "rev.asc")
	os.WriteFile(revFile, bytes.ReplaceAll(rev, []byte(":-----BEGIN"), []byte("-----BEGIN")), 0o644)
	gpg("--import", revFile)
	revoked := export("revoked@example.com")

	// A signing subkey revoked after it signed.
	subStore := store()
	g.key("Subkey <subkey@example.com>", "", "never")
	gpg("--quick-add-key", fpr("subkey@example.com"), "rsa2048", "sign", "never")
	g.sign("subkey@example.com", "", digest, digest, subStore)
	cmd := e.run("sh", []string{"-c", fmt.Sprintf(`printf 'key 1\nrevkey\ny\n0\n\ny\nsave\n' | %s --batch --pinentry-mode loopback --passphrase '' --command-fd 0 --edit-key %s`, g.gpg, fpr("subkey@example.com"))})
	if cmd.code != 0 {
		t.Fatalf("revoking the subkey: %s", cmd.stderr)
	}
	subkey := export("subkey@example.com")

	// A signature that expired: key and signature made in 2020.
	expiredStore := store()
	g.key("Old <old@example.com>", "2020-01-01 00:00:00", "never")
	signExpiring(t, g, "old@example.com", digest, expiredStore)
	old := export("old@example.com")

	// Two keyrings, one signed.
	twoStore := store()
	g.key("Release <release3@example.com>", "", "never")
	g.key("Stranger <stranger3@example.com>", "", "never")
	g.sign("release3@example.com", "", digest, digest, twoStore)
	release, stranger := export("release3@example.com"), export("stranger3@example.com")

	dead := "https://127.0.0.1:1"
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \""+dead+"\"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"), 0o600)
	verify := func(keyring, st string) func(*testing.T, string) ([]string, []string) {
		return func(*testing.T, string) ([]string, []string) {
			return []string{"verify", ref, "--verify-keyring", keyring, "--signature-store", st}, nil
		}
	}
	operator := func(flags ...string) func(*testing.T, string) ([]string, []string) {
		return func(*testing.T, string) ([]string, []string) {
			return append([]string{"operator", "--kubeconfig", kc, "--lease-namespace", "ns", "--metrics-bind-address", "0"}, flags...), nil
		}
	}
	runHostile(t, e, []hostileCase{
		{name: "a revoked key", code: 1, setup: verify(revoked, revokedStore), want: []string{"(Revoked <revoked@example.com>), whose key is revoked"}},
		{name: "a revoked subkey", code: 1, setup: verify(subkey, subStore), want: []string{"signed by subkey ", " of ", "(Subkey <subkey@example.com>), which is revoked"}},
		{name: "an expired signature", code: 1, setup: verify(old, expiredStore), want: []string{"(Old <old@example.com>), made on 2020-01-01T12:00:00Z, expired on 2020-01-02T12:00:00Z"}},
		{name: "two keyrings, one signed", code: 1, setup: func(*testing.T, string) ([]string, []string) {
			return []string{"verify", ref, "--verify-keyring", release, "--verify-keyring", stranger, "--signature-store", twoStore}, nil
		}, want: []string{"keyring " + stranger + ": signed by unknown key"},
			check: func(t *testing.T, _ string, b clitest.Bounded) {
				if strings.Contains(b.Stdout, "keyring "+release+":") {
					t.Errorf("the keyring that signed is named as failing:\n%s", b.Stdout)
				}
			}},
		{name: "operator --resync 1ms", code: 2, maxTime: 3 * time.Second, setup: operator("--resync", "1ms"), want: []string{"resync (--resync) 1ms: want at least 1s"}},
		{name: "operator --resync 0", code: 2, maxTime: 3 * time.Second, setup: operator("--resync", "0"), want: []string{"resync (--resync) 0s: want a positive duration"}},
		{name: "operator --renew-deadline above the lease duration", code: 2, maxTime: 3 * time.Second, setup: operator("--renew-deadline", "200s"),
			want: []string{"renew deadline (--renew-deadline) 3m20s: want less than the lease duration (--lease-duration) 2m17s"}},
	})
}

// signExpiring signs digest with uid at a faked 2020-01-01 12:00 with a
// signature that expires a day later, into store.
func signExpiring(t *testing.T, g *gpgEnv, uid, digest, store string) {
	t.Helper()
	payload := fmt.Sprintf(`{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":%q},"identity":{"docker-reference":"quay.io/example/release:4.22.0"}},"optional":{}}`, digest)
	in := filepath.Join(t.TempDir(), "payload.json")
	os.WriteFile(in, []byte(payload), 0o644)
	dir := filepath.Join(store, "sha256="+strings.TrimPrefix(digest, "sha256:"))
	os.MkdirAll(dir, 0o755)
	if r := g.runAt("2020-01-01 12:00:00", g.gpg, "--batch", "--yes", "-u", uid, "--default-sig-expire", "1d", "--output", filepath.Join(dir, "signature-1"), "--sign", in); r.code != 0 {
		t.Fatalf("gpg --sign: %s", r.stderr)
	}
}
