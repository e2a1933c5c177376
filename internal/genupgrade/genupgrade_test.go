package genupgrade

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestBump: the built-in payload's files at another version, its version
// the previous one.
func TestBump(t *testing.T) {
	dst := t.TempDir()
	prev, err := Bump(filepath.Join("..", "..", "payload"), dst, "4.22.1")
	if err != nil || prev != "4.22.0" {
		t.Fatalf("Bump: %q, %v", prev, err)
	}
	var md struct {
		Version  string
		Previous []string
	}
	data, err := os.ReadFile(filepath.Join(dst, "release-manifests", "release-metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &md); err != nil || md.Version != "4.22.1" || len(md.Previous) != 1 || md.Previous[0] != "4.22.0" {
		t.Errorf("release-metadata: %+v, %v", md, err)
	}
	want, _ := os.ReadFile(filepath.Join("..", "..", "payload", "manifests", "0000_00_cluster-version-operator_30_deployment.yaml"))
	got, err := os.ReadFile(filepath.Join(dst, "manifests", "0000_00_cluster-version-operator_30_deployment.yaml"))
	if err != nil || string(got) != string(want) {
		t.Errorf("a manifest changed: %v", err)
	}
	if _, err := Bump(t.TempDir(), t.TempDir(), "4.22.1"); err == nil {
		t.Error("Bump of a directory without a payload: no error")
	}
}
