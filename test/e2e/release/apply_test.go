//go:build e2e

package release

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/test/apiserver"
	testregistry "github.com/payload-apply/payload-apply/test/registry"
)

// TestApplyVerifies applies payloads pulled from the registry: what is not
// verified is refused before anything is written (the error names the
// digest and the reason), --allow-unverified goes on with a warning, and a
// signed payload (cosign, or an atomic signature in the cluster's signature
// ConfigMaps) is applied.
func TestApplyVerifies(t *testing.T) {
	cosign := testregistry.Tool(t, "cosign")
	s := apiserver.Shared(t)
	e := newEnv(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	exists := func(ns string) bool {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	keys := t.TempDir()
	pw := "COSIGN_PASSWORD=pw"
	if r := e.runIn(keys, cosign, []string{"generate-key-pair"}, pw); r.code != 0 {
		t.Fatal(r.stderr)
	}
	key, pub := filepath.Join(keys, "cosign.key"), filepath.Join(keys, "cosign.pub")
	otherKeys := t.TempDir()
	if r := e.runIn(otherKeys, cosign, []string{"generate-key-pair"}, pw); r.code != 0 {
		t.Fatal(r.stderr)
	}

	signedRef, signed := e.push(tinyPayload(t, "verify-signed", "4.22.0"), "4.22.0", "ocp/apply", "signed")
	if r := e.run(binary, []string{"sign", signedRef, "--cosign-key", key}, pw); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// Tampered: the tag now names other content, which nobody signed.
	tamperedRef, _ := e.push(tinyPayload(t, "verify-tampered", "4.22.0"), "4.22.0", "ocp/apply", "tampered")
	if r := e.run(binary, []string{"sign", tamperedRef, "--cosign-key", key}, pw); r.code != 0 {
		t.Fatal(r.stderr)
	}
	_, tampered := e.push(tinyPayload(t, "verify-tampered", "4.22.0-evil"), "4.22.0", "ocp/apply", "tampered")
	unsignedRef, unsigned := e.push(tinyPayload(t, "verify-unsigned", "4.22.0"), "4.22.0", "ocp/apply", "unsigned")

	apply := func(args ...string) result {
		t.Helper()
		return e.pa(append([]string{"apply", "--kubeconfig", s.Kubeconfig}, args...)...)
	}
	refusals := []struct {
		name, ns, digest string
		args             []string
		want             string
	}{
		{"no policy for a registry payload", "verify-unsigned", unsigned, []string{"--payload", unsignedRef}, "no verification policy"},
		{"wrong key", "verify-signed", signed, []string{"--payload", signedRef, "--verify-cosign-key", filepath.Join(otherKeys, "cosign.pub")}, "does not verify with the key"},
		{"tampered payload", "verify-tampered", tampered, []string{"--payload", tamperedRef, "--verify-cosign-key", pub}, "no cosign signature (no tag"},
		{"missing signature", "verify-unsigned", unsigned, []string{"--payload", unsignedRef, "--verify-cosign-key", pub}, "no cosign signature"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			r := apply(tt.args...)
			if r.code != 1 || !strings.Contains(r.stderr, "refusing release "+tt.digest) || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want 1 refusing %s with %q:\n%s", r.code, tt.digest, tt.want, r.stderr)
			}
			if exists(tt.ns) {
				t.Errorf("namespace %s exists: something was applied", tt.ns)
			}
		})
	}

	t.Run("allow unverified", func(t *testing.T) {
		r := apply("--payload", unsignedRef, "--allow-unverified")
		if r.code != 0 || !strings.Contains(r.stderr, "warning: release "+unsigned+": not verified") {
			t.Errorf("exit %d, want 0 with a warning:\n%s", r.code, r.stderr)
		}
		if !exists("verify-unsigned") {
			t.Error("not applied")
		}
	})
	t.Run("cosign signature", func(t *testing.T) {
		r := apply("--payload", signedRef, "--verify-cosign-key", pub)
		if r.code != 0 || !strings.Contains(r.stderr, "release "+signed+": verified: cosign signature by "+pub) {
			t.Errorf("exit %d:\n%s", r.code, r.stderr)
		}
		if !exists("verify-signed") {
			t.Error("not applied")
		}
	})
	g := newGPG(t, e)
	keyring := g.key("Release <release@example.com>", "", "never")
	t.Run("atomic refusals", func(t *testing.T) {
		expired := g.key("Expired <expired@example.com>", "2020-01-01 00:00:00", "1d")
		ref, digest := e.push(tinyPayload(t, "verify-expired", "4.22.0"), "4.22.0", "ocp/apply", "expired")
		_, other := e.push(tinyPayload(t, "verify-other", "4.22.0"), "4.22.0", "ocp/apply", "other")
		expiredStore, otherStore := t.TempDir(), t.TempDir()
		g.sign("expired@example.com", "2020-01-01 12:00:00", digest, digest, expiredStore)
		g.sign("release@example.com", "", other, digest, otherStore)
		for _, tt := range []struct{ name, keyring, store, want string }{
			{"expired key", expired, expiredStore, "expired on 2020-01-02"},
			{"signature for another digest", keyring, otherStore, "names " + other + ", not this image"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := apply("--payload", ref, "--verify-keyring", tt.keyring, "--signature-store", tt.store)
				if r.code != 1 || !strings.Contains(r.stderr, "refusing release "+digest) || !strings.Contains(r.stderr, tt.want) {
					t.Errorf("exit %d, want 1 refusing %s with %q:\n%s", r.code, digest, tt.want, r.stderr)
				}
				if exists("verify-expired") {
					t.Error("namespace verify-expired exists: something was applied")
				}
			})
		}
	})
	t.Run("atomic signature in the cluster's ConfigMaps", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret.asc")
		r := e.run(g.gpg, []string{"--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--export-secret-keys", "--armor", "release@example.com"})
		if err := os.WriteFile(secret, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		ref, digest := e.push(tinyPayload(t, "verify-atomic", "4.22.0"), "4.22.0", "ocp/apply", "atomic")
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(e.must("sign", ref, "--key", secret, "-o", "configmap").stdout), &cm); err != nil {
			t.Fatal(err)
		}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cm.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if _, err := kube.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r = apply("--payload", ref, "--verify-keyring", keyring)
		if r.code != 0 || !strings.Contains(r.stderr, "release "+digest+": verified: atomic signature by") {
			t.Errorf("exit %d:\n%s", r.code, r.stderr)
		}
		if !exists("verify-atomic") {
			t.Error("not applied")
		}
	})
}
