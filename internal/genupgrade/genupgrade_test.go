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

func TestRelease(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "4.22.3")
	md := Metadata{Version: "4.22.3", Previous: []string{"4.22.1", "4.22.2"}, Next: []string{"4.23.0"}, Metadata: map[string]string{"url": "https://errata/4.22.3"}}
	if err := Release("../../payload", dst, md); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dst, "release-manifests", "release-metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Kind, Version  string
		Previous, Next []string
		Metadata       map[string]string
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "cincinnati-metadata-v0" || got.Version != "4.22.3" || len(got.Previous) != 2 || got.Next[0] != "4.23.0" || got.Metadata["url"] != "https://errata/4.22.3" {
		t.Errorf("release-metadata read back as %+v", got)
	}
}
