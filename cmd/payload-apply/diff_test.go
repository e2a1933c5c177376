package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/clustersync"
)

func TestDiffLiveUsage(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"cluster and offline", []string{"--kubeconfig", kubeconfig, "--against-profile", "hypershift"}, "--kubeconfig and --against-profile exclude each other"},
		{"another cluster flag and offline", []string{"--against-feature-set", "TechPreviewNoUpgrade", "--context", "c"}, "--context and --against-feature-set exclude each other"},
		{"parallelism offline", []string{"--against-profile", "hypershift", "--parallelism", "4"}, "--parallelism is for diff with a cluster"},
		{"parallelism below 1", []string{"--kubeconfig", kubeconfig, "--parallelism", "0"}, "--parallelism 0: want at least 1"},
		{"missing kubeconfig", []string{"--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig: stat /nonexistent/kubeconfig"},
		{"nothing to compare", nil, "no cluster configured (KUBECONFIG is not set; "},
		{"unknown against profile", []string{"--against-profile", "nosuch"}, `--against-profile: unknown profile "nosuch"`},
		{"unknown against feature set", []string{"--against-feature-set", "Nope"}, `--against-feature-set: unknown feature set "Nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, append([]string{"diff"}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestDiffHelpNamesBothModes(t *testing.T) {
	out, _, code := runCLI(t, "diff", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--kubeconfig", "--parallelism", "--against-profile", "server-side dry-run apply", "Exit codes: 0 no differences, 1 differences, 2 error"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestWarningPrinter(t *testing.T) {
	var b bytes.Buffer
	p := warningPrinter{&b}
	p.Event(clustersync.Warning{Text: "use control-plane"})
	p.Event(clustersync.Planned{Tasks: 3})
	if got, want := b.String(), "warning: use control-plane\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
