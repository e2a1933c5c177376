package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// TestGlobalFlagsAnywhere: -v and --vmodule go before the command as well
// as after it, and change nothing else.
func TestGlobalFlagsAnywhere(t *testing.T) {
	want, _, code := runCLI(t, "render", "--list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, args := range [][]string{
		{"-v", "0", "render", "--list"},
		{"--v=0", "render", "--list"},
		{"render", "-v", "0", "--list"},
		{"--vmodule", "x=1", "render", "--list"},
		{"render", "--list", "-v=0"},
	} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 || out != want {
			t.Errorf("%v: exit %d, output differs: %s", args, code, errOut)
		}
	}
}

// TestDryRunWithoutValue: --dry-run alone is --dry-run=server and never
// takes the next argument as its value.
func TestDryRunWithoutValue(t *testing.T) {
	dead := kubeconfigFor(t, deadServer(t))
	_, errOut, code := runCLI(t, "apply", "--dry-run", "--kubeconfig", dead)
	if code != exitUsage || !strings.Contains(errOut, "cannot reach the cluster at") || strings.Contains(errOut, "unexpected argument") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "apply", "--dry-run=none", "--dry-run", "--kubeconfig", dead)
	if code != exitUsage || !strings.Contains(errOut, "cannot reach") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
}

// TestCompletion: the scripts of every shell, and the completions they ask
// the binary for: commands, flags, the formats of -o, profile names.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__payload-apply_", "zsh": "#compdef payload-apply", "fish": "complete -c payload-apply", "powershell": "Register-ArgumentCompleter"} {
		out, errOut, code := runCLI(t, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, output lacks %q: %s", shell, code, want, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "completion", "tcsh"); code != exitUsage || !strings.Contains(errOut, `shell "tcsh": want bash, zsh, fish or powershell`) {
		t.Errorf("completion tcsh: exit %d: %s", code, errOut)
	}
	complete := func(args ...string) []string {
		t.Helper()
		out, errOut, code := runCLI(t, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %v: exit %d: %s", args, code, errOut)
		}
		var words []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, ":") {
				words = append(words, strings.SplitN(l, "\t", 2)[0])
			}
		}
		return words
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"rend"}, []string{"render"}},
		{[]string{"render", "-o", ""}, []string{"yaml", "json", "name"}},
		{[]string{"graph", "--output", ""}, []string{"text", "dot", "json"}},
		{[]string{"render", "--profile", ""}, []string{"hypershift", "ibm-cloud-managed", "self-managed-high-availability", "single-node-developer"}},
		{[]string{"profiles", "show", ""}, []string{"hypershift", "ibm-cloud-managed", "self-managed-high-availability", "single-node-developer"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		{[]string{"apply", "--dry-run="}, []string{"server", "none"}},
	} {
		if diff := cmp.Diff(tc.want, complete(tc.args...)); diff != "" {
			t.Errorf("__complete %v (-want +got):\n%s", tc.args, diff)
		}
	}
}

// TestVersion: the client's build from the module, and the server's
// version from the cluster the kubeconfig names.
func TestVersion(t *testing.T) {
	out, errOut, code := runCLI(t, "version")
	if code != 0 || !strings.Contains(out, "Client Version: ") || !strings.Contains(out, "Go Version: go") || strings.Contains(out, "Server Version") {
		t.Errorf("version without a cluster: exit %d:\n%s%s", code, out, errOut)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"major": "1", "minor": "35", "gitVersion": "v1.35.4", "platform": "linux/amd64"}`)
	}))
	defer srv.Close()
	kc := kubeconfigFor(t, srv.URL)
	out, errOut, code = runCLI(t, "version", "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "Server Version: v1.35.4\n") {
		t.Errorf("version --kubeconfig: exit %d:\n%s%s", code, out, errOut)
	}
	t.Setenv("KUBECONFIG", kc)
	out, _, code = runCLI(t, "version", "-o", "json")
	var v struct {
		Client struct{ Version, GoVersion, Platform, Module string } `json:"clientVersion"`
		Server struct{ GitVersion string }                           `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("version -o json: exit %d, %v:\n%s", code, err, out)
	}
	if v.Client.Module != "github.com/payload-apply/payload-apply" || v.Client.GoVersion == "" || v.Server.GitVersion != "v1.35.4" {
		t.Errorf("version -o json: %+v", v)
	}
	if out, _, code := runCLI(t, "version", "--client"); code != 0 || strings.Contains(out, "Server") {
		t.Errorf("version --client asked the server:\n%s", out)
	}
	if out, _, code := runCLI(t, "--version"); code != 0 || !strings.HasPrefix(out, "payload-apply ") {
		t.Errorf("--version: exit %d: %s", code, out)
	}
}

// TestRenderOutputDirNotEmpty: render --output-dir refuses a directory
// with files in it; --clean removes an earlier render, and nothing else.
func TestRenderOutputDirNotEmpty(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, "render", "--output-dir", dir); code != 0 {
		t.Fatalf("first render: exit %d: %s", code, errOut)
	}
	stale := filepath.Join(dir, "release-manifests", "0000_99_stale_00_old.yaml")
	if err := os.WriteFile(stale, []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, "render", "--output-dir", dir); code != exitUsage || !strings.Contains(errOut, "not empty (generated, manifests, release-manifests): files of an earlier render would mix with this one; pass --clean") {
		t.Errorf("second render: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "render", "--output-dir", dir, "--clean"); code != 0 {
		t.Errorf("--clean: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale file kept: %v", err)
	}
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, "render", "--output-dir", dir, "--clean"); code != exitUsage || !strings.Contains(errOut, "--clean removes only what render writes, and "+mine+" is not") {
		t.Errorf("--clean with a file of mine: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("my file: %v", err)
	}
}

// TestRenderFormats: -o yaml, json (a v1 List) and name print the same
// objects.
func TestRenderFormats(t *testing.T) {
	list, _, _ := runCLI(t, "render", "--list")
	n := strings.Count(list, "\n")
	yamlOut, _, code := runCLI(t, "render", "-o", "yaml")
	if def, _, _ := runCLI(t, "render"); code != 0 || yamlOut != def {
		t.Errorf("-o yaml is not the default")
	}
	jsonOut, _, code := runCLI(t, "render", "-o", "json")
	var l struct {
		Kind  string
		Items []map[string]any
	}
	if err := json.Unmarshal([]byte(jsonOut), &l); err != nil || code != 0 || l.Kind != "List" || len(l.Items) != n {
		t.Errorf("-o json: exit %d, %v: kind %q, %d items, want %d", code, err, l.Kind, len(l.Items), n)
	}
	names, _, code := runCLI(t, "render", "-o", "name")
	if code != 0 || strings.Count(names, "\n") != n || !strings.Contains(names, "\ncustomresourcedefinition.apiextensions.k8s.io/clusteroperators.config.openshift.io\n") ||
		!strings.HasPrefix(names, "namespace/openshift-cluster-version\n") {
		t.Errorf("-o name: exit %d:\n%s", code, names)
	}
}

// TestMessagesPointAtTheRightThing: errors name the flag and the path the
// user gave.
func TestMessagesPointAtTheRightThing(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "0000_50_x_cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	real := realpayload.Dir(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"broken extra manifest", []string{"render", "--extra-manifests", bad + "/"}, 1, "error: " + filepath.Join(bad, "0000_50_x_cm.yaml") + "#0: yaml: line 3"},
		{"validate a broken extra manifest", []string{"validate", "--extra-manifests", bad}, 1, "1 error, 0 warnings"},
		{"a payload's release-manifests", []string{"render", "--payload", filepath.Join(real, "release-manifests")}, 2,
			"error: --payload " + filepath.Join(real, "release-manifests") + ": this is the release-manifests/ directory of a payload, not a payload: pass the directory above it, --payload " + real},
		{"not a payload", []string{"graph", "--payload", bad}, 2, "error: --payload " + bad + ": holds neither manifests/ nor release-manifests/"},
		{"against another profile", []string{"diff", "--against-profile", "nosuch"}, 2, `error: --against-profile: unknown profile "nosuch"`},
		{"dry run value apart", []string{"apply", "--dry-run", "server"}, 2, `unexpected argument "server": give --dry-run its value with '=': --dry-run=server`},
		{"client dry run", []string{"apply", "--dry-run=client"}, 2, "'payload-apply render' and 'diff' show what would be applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d and %q:\n%s", code, tc.code, tc.want, errOut)
			}
			if strings.Contains(errOut, "extra/") {
				t.Errorf("stderr names the plan's extra/ instead of the directory:\n%s", errOut)
			}
		})
	}
	// validate names the file on stdout too.
	out, _, _ := runCLI(t, "validate", "--extra-manifests", bad)
	if !strings.HasPrefix(out, filepath.Join(bad, "0000_50_x_cm.yaml")+"#0: error: ") {
		t.Errorf("validate:\n%s", out)
	}
}

// TestErrorLines: joined errors, also when wrapped, print one per line,
// each with the prefix of what wrapped them.
func TestErrorLines(t *testing.T) {
	a, b := errors.New("a.yaml#0: bad"), errors.New("b.yaml#1: worse")
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"one", a, []string{"a.yaml#0: bad"}},
		{"joined", errors.Join(a, b), []string{"a.yaml#0: bad", "b.yaml#1: worse"}},
		{"wrapped join", fmt.Errorf("component x: %w", errors.Join(a, b)), []string{"component x: a.yaml#0: bad", "component x: b.yaml#1: worse"}},
		{"join of wrapped joins", errors.Join(fmt.Errorf("p: %w", errors.Join(a, b)), b), []string{"p: a.yaml#0: bad", "p: b.yaml#1: worse", "b.yaml#1: worse"}},
		{"multi-line message", errors.New("first\nsecond"), []string{"first", "second"}},
	} {
		if diff := cmp.Diff(tc.want, errorLines(tc.err)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestClientGoErrorsNotRaw: client-go's own error reports ("Unhandled
// Error") print nothing at the default verbosity, and are logged at -v=4.
func TestClientGoErrorsNotRaw(t *testing.T) {
	var logged bytes.Buffer
	klog.LogToStderr(false)
	klog.SetOutput(&logged)
	defer klog.LogToStderr(true)
	runCLI(t, "version", "--client")
	utilruntime.HandleError(errors.New("couldn't get current server API group list: connection refused"))
	klog.Flush()
	if logged.Len() != 0 {
		t.Errorf("printed at -v=0: %q", logged.String())
	}
	runCLI(t, "-v", "4", "version", "--client")
	utilruntime.HandleError(errors.New("couldn't get current server API group list: connection refused"))
	klog.Flush()
	if !strings.Contains(logged.String(), "client-go: Unhandled Error") || !strings.Contains(logged.String(), "connection refused") {
		t.Errorf("not logged at -v=4: %q", logged.String())
	}
	runCLI(t, "version", "--client")
}
