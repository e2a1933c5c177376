package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/golden"
)

// TestRenderNodeTuning renders PerformanceProfiles given as extra manifests:
// standalone, and on a hosted control plane in both naming modes.
func TestRenderNodeTuning(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"standalone", []string{"--extra-manifests", "testdata/extra-nodetuning/standalone"}},
		{"hosted-seed", []string{"--profile", "hypershift", "--extra-manifests", "testdata/extra-nodetuning/hosted"}},
		{"hosted-upstream", []string{"--profile", "hypershift", "--extra-manifests", "testdata/extra-nodetuning/hosted", "--hypershift-naming", "upstream"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append([]string{"render", "--list"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden.AssertTestdata(t, "list.tsv", out)
		})
	}
}

func TestRenderNodeTuningOutputDir(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := runCLI(t, "render", "--output-dir", dir, "--profile", "hypershift", "--extra-manifests", "testdata/extra-nodetuning/hosted")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "generated", "pp-config_nodetuning-pp-config-nodepool1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: tuned-manual\n", "name: mc-manual\n", "name: kc-manual\n", "name: manual-status\n", "kind: RuntimeClass\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the step's preview lacks %q", want)
		}
	}
}

func TestHypershiftNamingUsage(t *testing.T) {
	_, errOut, code := runCLI(t, "render", "--hypershift-naming", "legacy")
	if want := `--hypershift-naming "legacy": want seed or upstream`; code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errOut, want)
	}
}
