package realpayload

import (
	"os"
	"path/filepath"
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
