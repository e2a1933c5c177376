package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/golden"
)

// writeTree writes files (slash-separated paths) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// crcTree is a user-defined profile crc (parent single-node-developer) with
// an overlay of its own, as --profiles-dir profiles --overlays-dir overlays.
var crcTree = map[string]string{
	"profiles/crc.yaml": `apiVersion: payload-apply/v1alpha1
kind: ClusterProfile
metadata:
  name: crc
spec:
  parent: single-node-developer
  description: CodeReady Containers on a laptop.
  overlays:
  - name: crc
  labels:
    crc.dev/edition: openshift
`,
	"overlays/crc/kustomization.yaml": `patches:
- path: memory.yaml
`,
	"overlays/crc/memory.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ingress-operator
  namespace: openshift-ingress-operator
spec:
  template:
    spec:
      containers:
      - name: ingress-operator
        resources:
          requests:
            memory: 40Mi
`,
}

func TestProfilesCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		files    map[string]string
		wantCode int
		// stdout is compared with testdata/TestProfilesCommand/<name>/stdout;
		// stderr must contain wantErr.
		wantErr string
	}{{
		name: "list",
		args: []string{"profiles"},
	}, {
		name:  "list with a profiles directory",
		args:  []string{"profiles", "--profiles-dir", "profiles"},
		files: crcTree,
	}, {
		name: "show a reference profile",
		args: []string{"profiles", "show", "hypershift"},
	}, {
		name:  "show a derived profile",
		args:  []string{"profiles", "show", "crc", "--profiles-dir", "profiles", "--overlays-dir", "overlays"},
		files: crcTree,
	}, {
		name:     "show an overlay that is nowhere",
		args:     []string{"profiles", "show", "crc", "--profiles-dir", "profiles"},
		files:    crcTree,
		wantCode: 1,
		wantErr:  `error: profiles/crc.yaml: overlay "crc": no crc/kustomization.yaml in embedded:overlays`,
	}, {
		name:     "show an unknown profile",
		args:     []string{"profiles", "show", "crc"},
		wantCode: 2,
		wantErr:  `error: unknown profile "crc" (known: hypershift, ibm-cloud-managed, self-managed-high-availability, single-node-developer)`,
	}, {
		name: "a protected field changed",
		args: []string{"profiles", "--profiles-dir", "profiles"},
		files: map[string]string{"profiles/hosted-dev.yaml": `apiVersion: payload-apply/v1alpha1
kind: ClusterProfile
metadata: {name: hosted-dev}
spec: {parent: hypershift, hypershift: false}
`},
		wantCode: 1,
		wantErr:  `error: profiles/hosted-dev.yaml: profile "hosted-dev": spec.hypershift is protected`,
	}, {
		name:     "a profiles directory that is not there",
		args:     []string{"profiles", "--profiles-dir", "nope"},
		wantCode: 2,
		wantErr:  "error: --profiles-dir: stat nope: no such file or directory",
	}, {
		name:     "extra arguments",
		args:     []string{"profiles", "list"},
		wantCode: 2,
		wantErr:  "error: unexpected arguments: [list]",
	}, {
		name:  "render a derived profile",
		args:  []string{"render", "--list", "--profile", "crc", "--profiles-dir", "profiles", "--overlays-dir", "overlays"},
		files: crcTree,
	}, {
		name:  "explain a derived profile",
		args:  []string{"render", "--explain", "--profile", "crc", "--profiles-dir", "profiles", "--overlays-dir", "overlays"},
		files: crcTree,
	}, {
		name:     "render an unknown profile",
		args:     []string{"render", "--profile", "crc"},
		wantCode: 2,
		wantErr:  `error: --profile: unknown profile "crc" (known: hypershift, ibm-cloud-managed, self-managed-high-availability, single-node-developer)`,
	}, {
		name: "validate a broken overlay",
		args: []string{"validate", "--profile", "crc", "--feature-set", "Default", "--profiles-dir", "profiles", "--overlays-dir", "overlays"},
		files: map[string]string{
			"profiles/crc.yaml":               crcTree["profiles/crc.yaml"],
			"overlays/crc/kustomization.yaml": "resources: [../../secrets.yaml]\n",
		},
		wantCode: 1,
		wantErr:  "1 error, 0 warnings",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			writeTree(t, ".", tc.files)
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.wantErr) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", errOut.String(), tc.wantErr)
			}
			golden.AssertTestdata(t, "stdout", out.Bytes())
		})
	}
}
