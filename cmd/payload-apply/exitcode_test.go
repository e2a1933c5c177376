package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// commandArgs are the arguments each command needs to get past its own
// checks of what it is given. Every command must have an entry:
// TestExitCodes fails for one without, so a new command is held to the
// table too.
func commandArgs(t *testing.T) map[string][]string {
	dir := t.TempDir()
	comp := filepath.Join(dir, "component")
	if err := os.MkdirAll(comp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(comp, "configmap.yaml"), []byte(testConfigMap), 0o644); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "payload")
	for name, data := range map[string]string{
		"release-manifests/release-metadata":         `{"kind": "cincinnati-metadata-v0", "version": "4.22.0"}`,
		"release-manifests/image-references":         `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.22.0"}, "spec": {"tags": []}}`,
		"release-manifests/0000_50_x_00_config.yaml": strings.Replace(testConfigMap, "metadata:", "metadata:\n  annotations: {include.release.openshift.io/self-managed-high-availability: \"true\"}", 1),
	} {
		path := filepath.Join(small, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return map[string][]string{
		"apply":        nil,
		"extract":      {small, "--output-dir", filepath.Join(dir, "extracted"), "--included"},
		"info":         {small},
		"operator":     {"--payload", small},
		"sign":         nil,
		"verify":       nil,
		"build":        {"--from", comp, "--version", "1.0.0", "--output-dir", filepath.Join(dir, "image")},
		"completion":   {"bash"},
		"diff":         nil,
		"graph":        nil,
		"profiles":     nil,
		"rbac":         nil,
		"render":       nil,
		"status":       nil,
		"upgrade":      {"--to", small},
		"update-graph": {"--release-dir", dir},
		"validate":     nil,
		"version":      nil,
	}
}

// deadServer returns the URL of a port nothing listens on.
func deadServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "https://" + addr
}

// kubeconfigFor writes a kubeconfig for server and returns its path.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, server)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExitCodes holds every command to the one exit-code table
// (exitcode.go, docs/cli.md): the same mistake ends the same way in every
// command that can make it.
func TestExitCodes(t *testing.T) {
	all := commandArgs(t)
	dead := deadServer(t)
	deadConfig := kubeconfigFor(t, dead)
	noContext := filepath.Join(t.TempDir(), "no-context.yaml")
	if err := os.WriteFile(noContext, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \""+dead+"\"}}]\n"+
		"users: [{name: u, user: {token: x}}]\ncontexts: [{name: ctx, context: {cluster: c, user: u}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands() {
		args, ok := all[c.name]
		if !ok {
			t.Errorf("command %s: no entry in commandArgs: add the arguments it needs", c.name)
			continue
		}
		fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
		c.flags(fs)
		type tc struct {
			name string
			env  map[string]string
			args []string
			code int
			want string
		}
		cases := []tc{
			{name: "unknown flag", args: []string{"--no-such-flag"}, code: exitUsage, want: "unknown flag: --no-such-flag"},
		}
		visible := func(name string) bool { f := fs.Lookup(name); return f != nil && !f.Hidden }
		if visible("output") {
			cases = append(cases, tc{name: "unknown output format", args: []string{"-o", "no-such-format"}, code: exitUsage, want: `invalid argument "no-such-format" for "-o, --output" flag: want `})
		}
		if visible("profile") {
			cases = append(cases, tc{name: "unknown profile", args: []string{"--profile", "no-such-profile"}, code: exitUsage, want: `--profile: unknown profile "no-such-profile"`})
		}
		if visible("feature-set") {
			cases = append(cases, tc{name: "unknown feature set", args: []string{"--feature-set", "NoSuchSet"}, code: exitUsage, want: `--feature-set: unknown feature set "NoSuchSet"`})
		}
		if visible("payload") {
			cases = append(cases, tc{name: "missing payload", args: []string{"--payload", "/no/such/payload"}, code: exitUsage, want: "--payload: stat /no/such/payload"})
		}
		if visible("kubeconfig") {
			unreachable := "cannot reach the cluster at " + dead
			cases = append(cases,
				tc{name: "missing --kubeconfig", args: []string{"--kubeconfig", "/no/such/kubeconfig"}, code: exitUsage, want: "--kubeconfig: stat /no/such/kubeconfig"},
				tc{name: "unreachable by --kubeconfig", args: []string{"--kubeconfig", deadConfig}, code: exitUsage, want: unreachable},
				tc{name: "unreachable by KUBECONFIG", env: map[string]string{"KUBECONFIG": deadConfig}, code: exitUsage, want: unreachable},
				tc{name: "unreachable by ~/.kube/config", env: map[string]string{"HOME": filepath.Dir(filepath.Dir(homeConfig(t, deadConfig)))}, code: exitUsage, want: unreachable},
				tc{name: "unreachable by --server", args: []string{"--server", dead, "--insecure-skip-tls-verify"}, code: exitUsage, want: unreachable},
				tc{name: "--kubeconfig without a current context", args: []string{"--kubeconfig", noContext}, code: exitUsage,
					want: "--kubeconfig " + noContext + " names no cluster: it has no current-context and --context is not given (contexts: ctx): pass --context NAME"},
			)
			if c.name != "version" {
				// version without any cluster prints the client's.
				cases = append(cases, tc{name: "no cluster configured", code: exitUsage,
					want: "no cluster configured (KUBECONFIG is not set; "})
			}
		}
		for _, tc := range cases {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				for k, v := range tc.env {
					t.Setenv(k, v)
				}
				line := append(append([]string{c.name}, args...), tc.args...)
				_, errOut, code := runCLI(t, line...)
				if code != tc.code || !strings.Contains(errOut, tc.want) {
					t.Errorf("%s: exit %d, want %d and %q; stderr:\n%s", strings.Join(line, " "), code, tc.code, tc.want, errOut)
				}
				for _, raw := range []string{"KUBERNETES_MASTER", "Unhandled Error", "cluster-profile", "\n\n"} {
					if strings.Contains(errOut, raw) {
						t.Errorf("%s: stderr has %q:\n%s", strings.Join(line, " "), raw, errOut)
					}
				}
			})
		}
	}
}

// homeConfig writes kubeconfig as ~/.kube/config of a new home and
// returns its path.
func homeConfig(t *testing.T, kubeconfig string) string {
	t.Helper()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ".kube", "config")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// closedPipe is a stdout whose reader went away: every write fails with
// EPIPE, as on a pipe after 'head' exited.
type closedPipe struct{ writes int }

func (c *closedPipe) Write(p []byte) (int, error) {
	c.writes++
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

// TestStdoutClosed: a command whose stdout's reader went away stops as on
// an interrupt (exit 130), quietly, never with a write error.
func TestStdoutClosed(t *testing.T) {
	for name, args := range map[string][]string{
		"render":   {"render"},
		"json":     {"render", "-o", "json"},
		"graph":    {"graph", "-o", "dot"},
		"profiles": {"profiles"},
		"version":  {"version", "--client"},
	} {
		t.Run(name, func(t *testing.T) {
			out := &closedPipe{}
			var errOut bytes.Buffer
			code := run(context.Background(), args, IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errOut})
			if code != exitInterrupted || out.writes != 1 {
				t.Errorf("exit %d after %d writes, want %d after 1", code, out.writes, exitInterrupted)
			}
			if strings.Contains(errOut.String(), "broken pipe") || strings.Contains(errOut.String(), "error:") {
				t.Errorf("stderr:\n%s", errOut.String())
			}
		})
	}
}

// TestInterrupted: a command interrupted before it finished exits 130,
// whatever it would have exited with otherwise (validate: 2 for a payload
// it could not read).
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"validate", "--payload", realpayload.Dir(t)}, IOStreams{Out: &out, ErrOut: &errOut}); code != exitInterrupted {
		t.Errorf("exit %d, want %d:\n%s", code, exitInterrupted, errOut.String())
	}
}
