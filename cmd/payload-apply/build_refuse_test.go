package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/hostile"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/payload"
)

func TestBuildCommandErrors(t *testing.T) {
	root := t.TempDir()
	good := writeFiles(t, filepath.Join(root, "good"), map[string]string{"configmap.yaml": testConfigMap})
	conflictA := writeFiles(t, filepath.Join(root, "a"), map[string]string{
		"configmap.yaml":   testConfigMap,
		"image-references": strings.Replace(testRefs, "%s", "quay.io/example/operator:v1", 1),
	})
	conflictB := writeFiles(t, filepath.Join(root, "b"), map[string]string{
		"image-references": strings.Replace(testRefs, "%s", "quay.io/example/operator:v2", 1),
	})
	badSpec := writeFiles(t, filepath.Join(root, "bad-spec"), map[string]string{
		"configmap.yaml":   testConfigMap,
		"image-references": strings.Replace(testRefs, "%s", "quay.io/Example/UPPER CASE:v1", 1),
	})
	out := filepath.Join(root, "out")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "no sources", args: []string{"build", "--version", "1.0.0", "--output-dir", out}, wantCode: 2, wantErr: "error: --from or --manifests is required"},
		{name: "no version", args: []string{"build", "--from", good, "--output-dir", out}, wantCode: 2, wantErr: "error: --version is required"},
		{name: "no output", args: []string{"build", "--from", good, "--version", "1.0.0"}, wantCode: 2, wantErr: "error: say where the image goes: --output-dir DIR (an OCI image layout), --output-file FILE (a docker-archive tarball) or --to HOST/REPO:TAG (a registry)"},
		{name: "bad format", args: []string{"build", "--from", good, "--version", "1.0.0", "--output-dir", out, "--format", "zip"}, wantCode: 2, wantErr: `error: --format "zip": want oci or docker-archive`},
		{name: "format against the path flag", args: []string{"build", "--from", good, "--version", "1.0.0", "--output-dir", out, "--format", "docker-archive"}, wantCode: 2, wantErr: `error: --format docker-archive: --output-dir writes oci and --output-file docker-archive`},
		{name: "-o a path", args: []string{"build", "--from", good, "--version", "1.0.0", "-o", out}, wantCode: 2, wantErr: `for "-o, --output" flag: want text, json; -o is a format: the image goes to --output-dir DIR (OCI layout) or --output-file FILE (docker-archive)`},
		{name: "a payload's release-manifests", args: []string{"build", "--from", filepath.Join(realpayload.Dir(t), "release-manifests"), "--version", "1.0.0", "--output-dir", out}, wantCode: 2,
			wantErr: "/release-manifests: this is the release-manifests/ directory of a payload, not a payload: pass the directory above it, --from "},
		{name: "missing directory", args: []string{"build", "--from", filepath.Join(root, "nope"), "--version", "1.0.0", "--output-dir", out}, wantCode: 2, wantErr: "no such file or directory"},
		{name: "version not semver", args: []string{"build", "--from", good, "--version", "4.22", "--output-dir", out}, wantCode: 1, wantErr: `error: release version "4.22": not semver`},
		{
			name:     "conflicting tags",
			args:     []string{"build", "--from", conflictA, "--from", conflictB, "--version", "1.0.0", "--output-dir", out},
			wantCode: 1,
			wantErr:  `error: image-references: tag "example-operator": conflicting pull specs "quay.io/example/operator:v1" from ` + conflictA + `/image-references and "quay.io/example/operator:v2" from ` + conflictB + "/image-references",
		},
		{
			name:     "malformed pull spec",
			args:     []string{"build", "--from", badSpec, "--version", "1.0.0", "--output-dir", out},
			wantCode: 1,
			wantErr:  `release-manifests/image-references: error: tag example-operator: pull spec "quay.io/Example/UPPER CASE:v1"`,
		},
		{name: "missing base", args: []string{"build", "--from", good, "--version", "1.0.0", "--output-dir", out, "--base", filepath.Join(root, "nope.tar")}, wantCode: 1, wantErr: "error: --base: stat"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, tc.args...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errOut, tc.wantCode, tc.wantErr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

func TestBuildOnBase(t *testing.T) {
	root := t.TempDir()
	// A base image holding the CVO's manifests, as the CVO image does.
	cvo := writeFiles(t, filepath.Join(root, "cvo"), map[string]string{
		"0000_00_cluster-version-operator_00_namespace.yaml": strings.Replace(testConfigMap, "settings", "cvo", 1),
	})
	baseDir := filepath.Join(root, "base")
	mustRun(t, "build", "--manifests", cvo, "--version", "0.0.1", "--output-dir", baseDir)
	comp := writeFiles(t, filepath.Join(root, "example"), map[string]string{"configmap.yaml": testConfigMap})
	out := filepath.Join(root, "release.tar")
	mustRun(t, "build", "--from", comp, "--base", baseDir, "--version", "4.22.0", "--output-file", out)
	got := payloadLines(mustRun(t, "render", "--list", "--payload", out))
	want := "00\tcluster-version-operator\tmanifests/0000_00_cluster-version-operator_00_namespace.yaml\tv1\tConfigMap\topenshift-example\tcvo\n" +
		"50\texample\trelease-manifests/0000_50_example_configmap.yaml\tv1\tConfigMap\topenshift-example\tsettings\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render --list (-want +got):\n%s", diff)
	}
}

func TestPayloadRefusesHostileImages(t *testing.T) {
	tests := []struct {
		name    string
		entries []hostile.Entry
		wantErr string
	}{
		{
			name:    "path traversal",
			entries: []hostile.Entry{{Name: "../../etc/cron.d/evil", Body: "* * * * * root sh"}},
			wantErr: `layer 0: entry "../../etc/cron.d/evil": refused: path leaves the image root`,
		},
		{
			name:    "symlink out of the root",
			entries: []hostile.Entry{{Name: "release-manifests/x.yaml", Link: "../../../../etc/shadow", Type: tar.TypeSymlink}},
			wantErr: `layer 0: entry "release-manifests/x.yaml": refused: link leaves the image root`,
		},
		{
			name:    "device",
			entries: []hostile.Entry{{Name: "release-manifests/mem", Type: tar.TypeChar}},
			wantErr: `layer 0: entry "release-manifests/mem": refused: special file: character device`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := hostile.Archive(t, tc.entries...)
			for _, cmd := range []string{"render", "validate"} {
				code, _, errOut := runCmd(t, cmd, "--payload", p)
				if code != 2 || !strings.Contains(errOut, "error: --payload "+p+": "+tc.wantErr) {
					t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and %q", cmd, code, errOut, tc.wantErr)
				}
			}
		})
	}
}

func TestValidateImageChecksTheLabel(t *testing.T) {
	asm, err := payload.Assemble([]payload.Source{{Path: "p", FS: os.DirFS(smallPayload(t))}}, payload.AssembleOptions{Version: "4.22.0"})
	if err != nil {
		t.Fatal(err)
	}
	// Built by hand with a label that disagrees with release-metadata.
	img, err := image.Build(asm.FS(), image.BuildOptions{Version: "9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "image")
	if err := image.Write(img, out, image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCmd(t, "validate", "--payload", out)
	want := `image: error: label io.openshift.release is "9.9.9", release-metadata version is "4.22.0"`
	if code != 1 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 1 and %q", code, stdout, want)
	}
	// The directory it came from has no label to disagree with.
	if code, stdout, _ := runCmd(t, "validate", "--payload", smallPayload(t)); code != 0 || strings.Contains(stdout, "label") {
		t.Errorf("validate the directory: exit %d\n%s", code, stdout)
	}
}

// payloadLines drops the objects the tool generates (the cluster-profile
// ConfigMap, component objects) from render --list output.
