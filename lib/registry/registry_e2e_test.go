//go:build e2e

package registry_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/registry"
	testregistry "github.com/payload-apply/payload-apply/test/registry"
)

func TestMain(m *testing.M) {
	os.Exit(testregistry.Run(m))
}

// client returns a client of the shared registry with its credentials.
func client(t *testing.T, r *testregistry.Registry) *registry.Client {
	t.Helper()
	return registry.New(registry.Options{Keychain: registry.DefaultKeychain(r.AuthFile, nil), RootCAs: r.CertPool})
}

// files returns every regular file of fsys with its content.
func files(t *testing.T, fsys fs.FS, roots ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range roots {
		err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(fsys, p)
			out[p] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestPushPullRealPayload(t *testing.T) {
	r := testregistry.Shared(t)
	dir := realpayload.Dir(t)
	img, err := image.Build(os.DirFS(dir), image.BuildOptions{Version: "4.22.0-0.snapshot-2026-08"})
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, r)
	ctx := context.Background()
	tag, err := c.ParseReference(r.Host + "/release/ocp:4.22.0")
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := c.Push(ctx, tag, img)
	if err != nil {
		t.Fatal(err)
	}
	want := files(t, os.DirFS(dir), "manifests", "release-manifests")
	for _, ref := range []string{
		r.Host + "/release/ocp:4.22.0",
		"docker://" + r.Host + "/release/ocp:4.22.0",
		pushed.Pinned().String(),
		r.Host + "/release/ocp:ignored@" + pushed.Digest.String(),
	} {
		t.Run(ref, func(t *testing.T) {
			parsed, err := c.ParseReference(ref)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Resolve(ctx, parsed)
			if err != nil {
				t.Fatal(err)
			}
			if res.Digest != pushed.Digest {
				t.Errorf("resolved %s, pushed %s", res.Digest, pushed.Digest)
			}
			p, err := c.Pull(ctx, parsed, image.LoadOptions{}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if p.Digest != pushed.Digest || p.FS.Digest() != pushed.Digest {
				t.Errorf("pulled %s (image %s), pushed %s", p.Digest, p.FS.Digest(), pushed.Digest)
			}
			if diff := cmp.Diff(want, files(t, p.FS, "manifests", "release-manifests")); diff != "" {
				t.Errorf("pulled payload differs from the directory (-dir +pulled):\n%s", diff)
			}
			if p.FS.Labels()[image.ReleaseLabel] != "4.22.0-0.snapshot-2026-08" {
				t.Errorf("labels %v", p.FS.Labels())
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	r := testregistry.Shared(t)
	ctx := context.Background()
	ref, err := registry.ParseReference(r.Host+"/release/none:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(wrong, []byte(`{"auths":{"`+r.Host+`":{"auth":"cGF5bG9hZDp3cm9uZw=="}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts registry.Options
		want []string
	}{
		{"no credentials", registry.Options{RootCAs: r.CertPool, Keychain: registry.DefaultKeychain("", func(string) string { return "" })},
			[]string{"unauthorized (401", "no credentials for " + r.Host}},
		{"wrong password", registry.Options{RootCAs: r.CertPool, Keychain: registry.DefaultKeychain(wrong, nil)},
			[]string{"unauthorized (401", "from " + wrong + " were rejected"}},
		{"unknown CA", registry.Options{Keychain: registry.DefaultKeychain(r.AuthFile, nil)},
			[]string{"TLS to " + r.Host + " not verified", "--insecure-registry " + r.Host}},
		{"not found", registry.Options{RootCAs: r.CertPool, Keychain: registry.DefaultKeychain(r.AuthFile, nil)},
			[]string{"not found (404"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.New(tt.opts).Pull(ctx, ref, image.LoadOptions{}, t.TempDir())
			if err == nil {
				t.Fatal("pulled")
			}
			t.Logf("error: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	t.Run("insecure host skips verification", func(t *testing.T) {
		c := registry.New(registry.Options{Keychain: registry.DefaultKeychain(r.AuthFile, nil), Insecure: []string{"127.0.0.1"}})
		_, err := c.Pull(ctx, ref, image.LoadOptions{}, t.TempDir())
		var ae *registry.AccessError
		if !errors.As(err, &ae) || ae.Status != 404 {
			t.Errorf("err = %v, want the registry's 404 (TLS accepted)", err)
		}
	})
}
