package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// TestExtractIncluded: what extract --included writes renders exactly as
// the whole payload renders, for every reference profile.
func TestExtractIncluded(t *testing.T) {
	dir := realpayload.Dir(t)
	for _, profile := range []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"} {
		t.Run(profile, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "extracted")
			mustRun(t, "extract", dir, "--output-dir", out, "--included", "--profile", profile)
			want := mustRun(t, "render", "--payload", dir, "--profile", profile)
			if got := mustRun(t, "render", "--payload", out, "--profile", profile); got != want {
				t.Errorf("render of the extract differs from render of the payload")
			}
			all := mustRun(t, "render", "--payload", dir, "--profile", profile, "--explain")
			some := mustRun(t, "render", "--payload", out, "--profile", profile, "--explain")
			if len(some) >= len(all) {
				t.Errorf("the extract excludes nothing (explain %d bytes, payload's %d)", len(some), len(all))
			}
		})
	}
	t.Run("everything", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "all")
		mustRun(t, "extract", dir, "--output-dir", out)
		for _, f := range []string{"release-manifests/release-metadata", "manifests/0000_00_cluster-version-operator_30_deployment.yaml"} {
			want, _ := os.ReadFile(filepath.Join(dir, f))
			got, err := os.ReadFile(filepath.Join(out, f))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s not copied as it is: %v", f, err)
			}
		}
	})
	t.Run("refusals", func(t *testing.T) {
		full := t.TempDir()
		os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
		for _, args := range [][]string{
			{"extract", dir},
			{"extract", dir, "--output-dir", full},
			{"extract", dir, "--output-dir", filepath.Join(t.TempDir(), "o"), "--profile", "hypershift"},
			{"extract", "--payload", dir, dir, "--output-dir", filepath.Join(t.TempDir(), "o")},
		} {
			if _, errOut, code := runCLI(t, args...); code != 2 {
				t.Errorf("%v: exit %d, want 2:\n%s", args, code, errOut)
			}
		}
	})
}

func TestInfo(t *testing.T) {
	dir := realpayload.Dir(t)
	var info struct {
		Name          string
		Source        string
		ManifestFiles int
		Objects       int
		Components    []struct {
			Name      string
			RunLevels []string
			Files     int
		}
		Images []struct{ Name, PullSpec string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, "info", dir, "-o", "json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "4.22.0-0.snapshot-2026-08" || info.Source != "directory" || info.ManifestFiles != 604 || info.Objects != 761 || len(info.Images) != 132 {
		t.Errorf("info: %s %s %d files %d objects %d images", info.Name, info.Source, info.ManifestFiles, info.Objects, len(info.Images))
	}
	files := 0
	for _, c := range info.Components {
		files += c.Files
	}
	if files != info.ManifestFiles || info.Components[0].Name != "apiserver" || info.Components[0].RunLevels[0] != "00" {
		t.Errorf("components: %d files in all, first %+v", files, info.Components[0])
	}
	text := mustRun(t, "info", dir)
	for _, w := range []string{"Name:      4.22.0-0.snapshot-2026-08", "Release Metadata:", "Components:", "cluster-version-operator", "Images:", "aws-ebs-csi-driver"} {
		if !strings.Contains(text, w) {
			t.Errorf("info lacks %q", w)
		}
	}

	// --changes-from: a copy with one image and one manifest changed.
	other := filepath.Join(t.TempDir(), "other")
	mustRun(t, "extract", dir, "--output-dir", other)
	refs := filepath.Join(other, "release-manifests", "image-references")
	data, _ := os.ReadFile(refs)
	os.WriteFile(refs, []byte(strings.Replace(string(data), "origin-aws-ebs-csi-driver:latest", "origin-aws-ebs-csi-driver:v2", 1)), 0o644)
	os.Remove(filepath.Join(other, "manifests", "0000_00_cluster-version-operator_30_deployment.yaml"))
	diff := mustRun(t, "info", other, "--changes-from", dir)
	for _, w := range []string{"Images Changed:", "aws-ebs-csi-driver", "origin-aws-ebs-csi-driver:v2", "Manifests Changed:", "release-manifests/image-references",
		"Manifests Removed:", "manifests/0000_00_cluster-version-operator_30_deployment.yaml"} {
		if !strings.Contains(diff, w) {
			t.Errorf("--changes-from lacks %q:\n%s", w, diff)
		}
	}
}
