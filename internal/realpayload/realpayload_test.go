package realpayload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
	}{
		{"at the root", root},
		{"below the root", deep},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := moduleRoot(tc.dir)
			if err != nil || got != root {
				t.Errorf("moduleRoot(%s) = %q, %v; want %q", tc.dir, got, err, root)
			}
		})
	}
}

func TestDirIsBesideTheModule(t *testing.T) {
	dir := Dir(t)
	root, err := moduleRoot(startDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(root), "shared", "testdata", "ocp-payload"); dir != want {
		t.Errorf("Dir = %q, want %q", dir, want)
	}
}

func TestSample(t *testing.T) {
	Dir(t) // skips when the payload is absent
	got := Sample(t, 20, 4096)
	if len(got) == 0 || len(got) > 20 {
		t.Fatalf("Sample(20) gave %d files", len(got))
	}
	for _, f := range got {
		if len(f.Data) > 4096 || len(f.Data) == 0 {
			t.Errorf("%s: %d bytes, want 1..4096", f.Path, len(f.Data))
		}
		if !strings.HasPrefix(f.Path, "manifests/") && !strings.HasPrefix(f.Path, "release-manifests/") {
			t.Errorf("%s: outside the payload directories", f.Path)
		}
	}
	again := Sample(t, 20, 4096)
	for i := range got {
		if got[i].Path != again[i].Path {
			t.Fatalf("Sample is not deterministic: %s then %s", got[i].Path, again[i].Path)
		}
	}
}
