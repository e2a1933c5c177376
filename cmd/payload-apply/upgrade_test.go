package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUpgradeUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no --to", []string{"upgrade"}, "--to: say which payload to update to"},
		{"--payload", []string{"upgrade", "--to", "x", "--payload", "y"}, "upgrade takes the payload to go to as --to"},
		{"unknown check", []string{"upgrade", "--to", "x", "--force=NoSuchCheck"}, "--force=NoSuchCheck: no such precondition"},
		{"output", []string{"upgrade", "--to", "x", "-o", "yaml"}, `invalid argument "yaml" for "-o, --output" flag`},
		{"parallelism", []string{"upgrade", "--to", "x", "--parallelism", "0"}, "--parallelism 0"},
		{"missing payload", []string{"upgrade", "--to", "/nonexistent", "--kubeconfig", "/nonexistent/kubeconfig"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestRecordImage: how the record names a payload, and how a recorded
// name opens again only while it names the same content.
func TestRecordImage(t *testing.T) {
	ctx := context.Background()
	reg := &registryFlags{}

	emb, err := recordImage(ctx, payloadSource{Kind: sourceEmbedded}, nil)
	if err != nil || !strings.HasPrefix(emb, embeddedImage+"@sha256:") {
		t.Fatalf("built-in payload: %q, %v", emb, err)
	}
	if _, src, err := openRecorded(ctx, reg, emb); err != nil || src.Kind != sourceEmbedded {
		t.Errorf("the built-in payload's name does not open it: %v", err)
	}
	if _, _, err := openRecorded(ctx, reg, embeddedImage+"@sha256:0000"); err == nil || !strings.Contains(err.Error(), "another payload-apply build") {
		t.Errorf("another build's built-in payload: %v", err)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "manifests", "0000_50_a_configmap.yaml")
	write := func(data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: b\n")
	fsys, src, err := reg.openPayload(ctx, "--to", dir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := recordImage(ctx, src, fsys)
	if loc, digest := splitImage(img); err != nil || loc != dir || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("directory: %q (%q %q), %v", img, loc, digest, err)
	}
	if _, _, err := openRecorded(ctx, reg, img); err != nil {
		t.Errorf("the directory's name does not open it: %v", err)
	}
	write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: c\n")
	if _, _, err := openRecorded(ctx, reg, img); err == nil || !strings.Contains(err.Error(), "changed since the cluster applied it") {
		t.Errorf("a changed directory: %v", err)
	}
	if _, _, err := openRecorded(ctx, reg, filepath.Join(dir, "gone")+"@sha256:00"); err == nil || !strings.Contains(err.Error(), "cannot be opened here") {
		t.Errorf("a directory that moved: %v", err)
	}
	if loc, digest := splitImage("quay.io/ocp/release:4.22"); loc != "quay.io/ocp/release:4.22" || digest != "" {
		t.Errorf("splitImage of a tag: %q %q", loc, digest)
	}
}
