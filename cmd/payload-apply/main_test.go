package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/internal/golden"
)

// TestMain makes the tests independent of the machine's cluster
// configuration: no KUBECONFIG, a HOME without ~/.kube, not in a pod.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "payload-apply-cmd-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	for _, env := range []string{"KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "XDG_CACHE_HOME"} {
		os.Unsetenv(env)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// runCLI runs the command line in-process and returns stdout, stderr and the exit code.
func runCLI(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

func TestGoldenEmbedded(t *testing.T) {
	cases := []struct {
		name string
		args []string
		file string
	}{
		{"render", []string{"render"}, "render.yaml"},
		{"render-list", []string{"render", "--list"}, "list.tsv"},
		{"render-list-techpreview", []string{"render", "--list", "--feature-set", "TechPreviewNoUpgrade"}, "list.tsv"},
		{"render-list-hypershift", []string{"render", "--list", "--profile", "hypershift"}, "list.tsv"},
		{"render-explain", []string{"render", "--explain"}, "explain.tsv"},
		{"graph-text", []string{"graph"}, "graph.txt"},
		{"graph-dot", []string{"graph", "--format", "dot"}, "graph.dot"},
		{"graph-json", []string{"graph", "--format", "json", "--feature-set", "TechPreviewNoUpgrade"}, "graph.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden.AssertTestdata(t, tc.file, out)
		})
	}
}

func TestRenderOutputDir(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := runCLI(t, "render", "--output-dir", dir, "--feature-set", "TechPreviewNoUpgrade")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "release-manifests", "0000_50_cluster-ingress-operator_00-namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "kind: Namespace"); n != 2 {
		t.Errorf("namespace file holds %d namespaces, want 2:\n%s", n, data)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifests", "0000_00_cluster-version-operator_30_deployment.yaml")); err != nil {
		t.Errorf("templated CVO deployment not written: %v", err)
	}
	if !strings.Contains(errOut, "wrote ") {
		t.Errorf("stderr = %q", errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no command", nil, "Commands:", 2},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`, 2},
		{"unknown flag", []string{"render", "--nope"}, "unknown flag: --nope", 2},
		{"exclusive flags", []string{"render", "--list", "--explain"}, "exclude each other", 2},
		{"bad format", []string{"graph", "-o", "svg"}, `invalid argument "svg" for "-o, --output" flag: want text, dot, json`, 2},
		{"deprecated format flag, bad value", []string{"graph", "--format", "svg"}, `invalid argument "svg" for "--format" flag: want text, dot, json`, 2},
		{"missing payload", []string{"render", "--payload", "/nonexistent"}, "--payload: stat /nonexistent", 2},
		{"unknown profile", []string{"render", "--profile", "edge"}, `--profile: unknown profile "edge" (known: hypershift, ibm-cloud-managed, self-managed-high-availability, single-node-developer)`, 2},
		{"unknown feature set", []string{"render", "--feature-set", "Preview"}, `--feature-set: unknown feature set "Preview"`, 2},
		{"unknown feature gate", []string{"render", "--feature-gates", "NoSuchGate"}, `--feature-gates: unknown feature gate "NoSuchGate"`, 2},
		{"unknown capability set", []string{"render", "--baseline-capability-set", "v9"}, `unknown baseline capability set "v9"`, 2},
		{"render -o a directory", []string{"render", "-o", "out"}, `invalid argument "out" for "-o, --output" flag: want yaml, json, name; -o is a format: to write files under a directory, use --output-dir DIR`, 2},
		{"clean without a directory", []string{"render", "--clean"}, "--clean is for --output-dir", 2},
		{"two modes", []string{"render", "-o", "json", "--list"}, "--list and -o exclude each other", 2},
		{"global flag before the command", []string{"-v", "1", "frobnicate"}, `unknown command "frobnicate"`, 2},
		{"a typo", []string{"rendr"}, `unknown command "rendr" (did you mean render?)`, 2},
		{"help for an unknown command", []string{"help", "frobnicate"}, `unknown command "frobnicate"`, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	out, _, code := runCLI(t, "help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, c := range commands() {
		if !strings.Contains(out, "  "+c.name+" ") {
			t.Errorf("help lacks command %s:\n%s", c.name, out)
		}
		cmdOut, _, code := runCLI(t, c.name, "--help")
		if code != 0 || !strings.Contains(cmdOut, "Exit codes:") || !strings.Contains(cmdOut, "Global flags:") {
			t.Errorf("%s --help (exit %d) lacks exit codes or flags:\n%s", c.name, code, cmdOut)
		}
		fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
		c.flags(fs)
		if f := fs.Lookup("output"); f != nil && f.Value.Type() != "format" {
			t.Errorf("%s: -o/--output is not a format (an outputFlag): %s", c.name, f.Value.Type())
		}
	}
}

// TestValidateBrokenPayload: every problem of a payload written to be broken
// is reported with FILE#DOC, and validate exits 1.
func TestValidateBrokenPayload(t *testing.T) {
	out, errOut, code := runCLI(t, "validate", "--payload", "testdata/broken-payload")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	golden.AssertTestdata(t, "validate.txt", out)
	for _, want := range []string{
		"release-manifests/0000_10_example_01_bad-yaml.yaml#1: error: yaml: line 13",
		"release-manifests/0000_10_example_02_missing-kind.yaml#0: error: kind is required",
		"release-manifests/0000_20_example_02_duplicate-b.yaml#0: error: ServiceAccount/openshift-example/operator is also defined in release-manifests/0000_20_example_01_duplicate-a.yaml#0",
		`release-manifests/0000_30_example_01_feature-set.yaml#0: error: annotation release.openshift.io/feature-set names an unknown feature set "TechPreview"`,
		`release-manifests/0000_30_example_02_misspelt.yaml#0: error: annotation include.release.openshift.io/self-managed-high-availabilty names an unknown profile`,
		"release-manifests/0000_30_example_02_misspelt.yaml#0: error: annotation relase.openshift.io/create-only looks like a misspelling",
		`release-manifests/release-metadata: error: version "4.22" is not semver`,
		`release-manifests/example-deployment.yaml#0: warning: line 6: key "name" repeated`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "8 errors, 4 warnings") {
		t.Errorf("stderr = %q", errOut)
	}
}

func TestValidateEmbedded(t *testing.T) {
	out, errOut, code := runCLI(t, "validate")
	if code != 0 || out != "" {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestDiffGolden: the offline diff of the reference profiles (and feature
// sets) against each other.
func TestDiffGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"single-node-developer", []string{"--against-profile", "single-node-developer"}},
		{"ibm-cloud-managed", []string{"--against-profile", "ibm-cloud-managed"}},
		{"hypershift", []string{"--against-profile", "hypershift"}},
		{"hypershift-to-ibm-cloud-managed", []string{"--profile", "hypershift", "--against-profile", "ibm-cloud-managed"}},
		{"techpreview", []string{"--against-feature-set", "TechPreviewNoUpgrade"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append([]string{"diff"}, tc.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (differences)\n%s", code, errOut)
			}
			golden.AssertTestdata(t, "diff.txt", out)
		})
	}
}

func TestDiffExitCodes(t *testing.T) {
	if out, errOut, code := runCLI(t, "diff", "--against-profile", "self-managed-high-availability"); code != 0 || out != "Summary: 0 to create, 0 to change, 0 to delete, 40 unchanged\n" {
		t.Errorf("same profile: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := runCLI(t, "diff", "--against-profile", "hypershift", "--summary"); code != 1 || !strings.HasPrefix(out, "Summary: ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--summary: exit %d\n%s", code, out)
	}
	if out, _, code := runCLI(t, "diff", "--against-feature-set", "TechPreviewNoUpgrade", "-o", "json"); code != 1 || !strings.Contains(out, `"action": "create"`) {
		t.Errorf("-o json: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, "diff", "--against-profile", "edge"); code != 2 || !strings.Contains(errOut, `unknown profile "edge"`) {
		t.Errorf("bad profile: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "diff"); code != 2 || !strings.Contains(errOut, "no cluster configured") || !strings.Contains(errOut, "or compare offline: --against-profile") {
		t.Errorf("nothing to compare: exit %d %s", code, errOut)
	}
}
