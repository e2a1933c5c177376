package payload

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

func TestFingerprint(t *testing.T) {
	base := map[string]string{
		"release-manifests/release-metadata": testMetadata,
		"release-manifests/image-references": testImages,
		"release-manifests/0000_50_a.yaml":   cmYAML("a"),
		"manifests/0000_00_cvo.yaml":         cmYAML("cvo"),
		"release-manifests/README.md":        "not read",
	}
	fp := func(t *testing.T, files map[string]string) *Fingerprint {
		t.Helper()
		f, err := FingerprintOf(context.Background(), testFS(files), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	want := fp(t, base)
	if len(want.Files) != 4 {
		t.Errorf("files %v, want the four Load reads", want.Files)
	}
	if !strings.HasPrefix(want.String(), "sha256:") || fp(t, base).Digest != want.Digest {
		t.Errorf("not stable: %s", want)
	}
	for name, files := range map[string]map[string]string{
		"changed file":     with("release-manifests/0000_50_a.yaml", cmYAML("b")),
		"added file":       with("release-manifests/0000_50_b.yaml", cmYAML("b")),
		"removed file":     with("release-manifests/0000_50_a.yaml", ""),
		"changed template": with("manifests/0000_00_cvo.yaml", cmYAML("cvo2")),
		"changed metadata": with("release-manifests/release-metadata", strings.Replace(testMetadata, "4.22.0", "4.22.1", 1)),
		"renamed file":     with("release-manifests/0000_50_a.yaml", "", "release-manifests/0000_51_a.yaml", cmYAML("a")),
	} {
		if got := fp(t, files); got.Digest == want.Digest {
			t.Errorf("%s: same digest", name)
		}
	}
	if got := fp(t, with("release-manifests/README.md", "changed, not read")); got.Digest != want.Digest {
		t.Error("a file Load does not read changed the digest")
	}

	// What Load reads, recorded, is the same fingerprint.
	var rec ReadRecorder
	if _, err := Load(context.Background(), testFS(base), LoadOptions{OnRead: rec.Record}); err != nil {
		t.Fatal(err)
	}
	if got := NewFingerprint(rec.Files()); got.Digest != want.Digest {
		t.Errorf("recorded %v, want %v", got.Files, want.Files)
	}

	// Load's limits hold.
	_, err := FingerprintOf(context.Background(), testFS(base), LoadOptions{Limits: manifest.Limits{MaxFileSize: 10}})
	if err == nil || !strings.Contains(err.Error(), "manifests/0000_00_cvo.yaml") {
		t.Errorf("file above the limit: %v", err)
	}
	if _, err := FingerprintOf(context.Background(), fstest.MapFS{"x": {}}, LoadOptions{}); err == nil {
		t.Error("no manifest directory: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FingerprintOf(ctx, testFS(base), LoadOptions{}); err == nil {
		t.Error("canceled: no error")
	}
}
