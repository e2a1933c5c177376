package main

import (
	"archive/tar"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/hostile"
)

// hostileCase is a payload (and profile and overlay directories) made
// hostile in one way, and what the command must say about it.
type hostileCase struct {
	name  string
	files map[string]string // under a temporary root; "-> TARGET" is a symbolic link
	args  []string          // after the command; "@/" is the temporary root
	only  string            // the one command to run, when not both
	code  int
	where string // the file (and document) the error names
	what  string // what the error says, after where on the same line
}

// hostilePayload is a small good payload under payload/, with a Secret
// beside it that nothing may read.
var hostilePayload = map[string]string{
	"payload/release-manifests/release-metadata":           `{"kind": "cincinnati-metadata-v0", "version": "4.22.0"}`,
	"payload/release-manifests/image-references":           `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.22.0"}, "spec": {"tags": []}}`,
	"payload/release-manifests/0000_50_hostile_00_ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: hostile\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n",
	"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen, namespace: hostile}\n",
}

var hostileCases = []hostileCase{
	{name: "alias bomb", files: map[string]string{"payload/release-manifests/0000_50_hostile_01_bomb.yaml": hostile.AliasBombConfigMap("lol", "default")},
		code: 1, where: "release-manifests/0000_50_hostile_01_bomb.yaml#0", what: "yaml: document contains excessive aliasing"},
	{name: "deep nesting", files: map[string]string{"payload/release-manifests/0000_50_hostile_01_deep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep, namespace: hostile}\ndata: {x: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "}\n"},
		code: 1, where: "release-manifests/0000_50_hostile_01_deep.yaml#0", what: "nested more than 128 levels deep (the depth limit)"},
	{name: "not UTF-8", files: map[string]string{"payload/release-manifests/0000_50_hostile_01_latin1.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9, namespace: hostile}\n"},
		code: 1, where: "release-manifests/0000_50_hostile_01_latin1.yaml", what: "file is not valid UTF-8"},
	{name: "symbolic link out of the payload", files: map[string]string{"payload/release-manifests/0000_50_hostile_01_link.yaml": "-> ../../secret.yaml"},
		code: 1, where: "release-manifests/0000_50_hostile_01_link.yaml", what: "symbolic link leads outside the payload directory: release-manifests/0000_50_hostile_01_link.yaml -> ../../secret.yaml"},
	{name: "overlay reaching out", files: map[string]string{
		"profiles/evil.yaml":                 "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata: {name: evil}\nspec:\n  overlays: [{name: evil}]\n",
		"overlays/evil/kustomization.yaml":   "resources: [../../secret.yaml]\n",
		"payload/release-manifests/x.yml.no": ""},
		args: []string{"--profile", "evil", "--profiles-dir", "@/profiles", "--overlays-dir", "@/overlays"},
		code: 1, where: "overlays/evil/kustomization.yaml", what: `resources[0] "../../secret.yaml": refers outside the overlay directory evil`},
	{name: "overlay with a remote resource", files: map[string]string{
		"profiles/evil.yaml":               "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata: {name: evil}\nspec:\n  overlays: [{name: evil}]\n",
		"overlays/evil/kustomization.yaml": "resources: [https://example.com/evil.yaml]\n"},
		args: []string{"--profile", "evil", "--profiles-dir", "@/profiles", "--overlays-dir", "@/overlays"},
		code: 1, where: "overlays/evil/kustomization.yaml", what: `resources[0] "https://example.com/evil.yaml": remote resources are not allowed`},
	{name: "overlay linked out", files: map[string]string{
		"profiles/evil.yaml":               "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata: {name: evil}\nspec:\n  overlays: [{name: evil}]\n",
		"overlays/evil/kustomization.yaml": "resources: [s.yaml]\n",
		"overlays/evil/s.yaml":             "-> ../../secret.yaml"},
		args: []string{"--profile", "evil", "--profiles-dir", "@/profiles", "--overlays-dir", "@/overlays"},
		code: 1, where: "overlays/evil/kustomization.yaml", what: `resources[0] "s.yaml": statat evil/s.yaml: path escapes from parent`},
	{name: "extra manifest linked out", files: map[string]string{"extra/0000_50_hostile_01_x.yaml": "-> ../secret.yaml"},
		args: []string{"--extra-manifests", "@/extra"},
		only: "render", // validate does not read --extra-manifests
		code: 1, where: "extra/0000_50_hostile_01_x.yaml", what: "0000_50_hostile_01_x.yaml: path escapes from parent"},
	{name: "profile with an unknown field", files: map[string]string{
		"profiles/evil.yaml": "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata: {name: evil}\nspec:\n  overlay: []\n"},
		args: []string{"--profile", "evil", "--profiles-dir", "@/profiles"},
		code: 1, where: "profiles/evil.yaml", what: `error unmarshaling JSON: while decoding JSON: json: unknown field "overlay"`},
}

// hostileArgs returns the command line of c for command cmd, with its
// files written under a new temporary root.
func hostileArgs(t *testing.T, c hostileCase, cmd ...string) []string {
	t.Helper()
	root := t.TempDir()
	hostile.WriteTree(t, root, hostilePayload, c.files)
	args := append(append([]string(nil), cmd...), "--payload", filepath.Join(root, "payload"))
	for _, a := range c.args {
		args = append(args, strings.ReplaceAll(a, "@/", root+"/"))
	}
	return args
}

// TestHostileInputCLI: validate and render refuse each hostile input with
// its exit code and an error naming the file and what is wrong, and print
// no object. (test/e2e's TestApplyHostilePayload applies such payloads to
// a real API server: nothing is written.)
func TestHostileInputCLI(t *testing.T) {
	good := hostileArgs(t, hostileCase{}, "render")
	if out, errOut, code := runCLI(t, good...); code != 0 || !strings.Contains(out, "name: hostile") {
		t.Fatalf("the good payload does not render: exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range hostileCases {
		for _, cmd := range []string{"validate", "render"} {
			if c.only != "" && c.only != cmd {
				continue
			}
			t.Run(c.name+"/"+cmd, func(t *testing.T) {
				out, errOut, code := runCLI(t, hostileArgs(t, c, cmd)...)
				found := false
				for _, line := range strings.Split(out+errOut, "\n") {
					if i := strings.Index(line, c.where+": "); i >= 0 && strings.Contains(line[i:], c.what) {
						found = true
					}
				}
				if code != c.code || !found {
					t.Fatalf("exit %d, output:\n%s%s\nwant exit %d and a line with %q then %q", code, out, errOut, c.code, c.where, c.what)
				}
				if cmd == "render" && strings.Contains(out, "kind:") {
					t.Errorf("render printed objects:\n%s", out)
				}
				if strings.Contains(out+errOut, "name: stolen") {
					t.Errorf("the Secret beside the payload came through")
				}
			})
		}
	}
}

// hostileImage writes a docker-archive whose payload layer holds the good
// payload plus a symbolic link out of it, and returns its path.
func hostileImage(t *testing.T) string {
	var entries []hostile.Entry
	for _, name := range []string{"release-manifests/release-metadata", "release-manifests/image-references", "release-manifests/0000_50_hostile_00_ns.yaml"} {
		entries = append(entries, hostile.Entry{Name: name, Body: hostilePayload["payload/"+name]})
	}
	return hostile.Archive(t, append(entries, hostile.Entry{Name: "release-manifests/0000_50_hostile_01_link.yaml", Type: tar.TypeSymlink, Link: "/etc/passwd"})...)
}

// TestHostileImageCLI: a payload image with a symbolic link out of the
// payload is refused as a whole (exit 2), naming the archive and the
// entry.
func TestHostileImageCLI(t *testing.T) {
	archive := hostileImage(t)
	for _, cmd := range []string{"validate", "render"} {
		t.Run(cmd, func(t *testing.T) {
			out, errOut, code := runCLI(t, cmd, "--payload", archive)
			want := "--payload " + archive + `: entry "release-manifests/0000_50_hostile_01_link.yaml": refused: link leaves the image root`
			if code != exitUsage || !strings.Contains(errOut, want) {
				t.Fatalf("exit %d, output:\n%s%s\nwant exit 2 and %q", code, out, errOut, want)
			}
			if out != "" {
				t.Errorf("stdout:\n%s", out)
			}
		})
	}
}
