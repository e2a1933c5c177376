//go:build e2e

package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/hostile"
	"github.com/payload-apply/payload-apply/test/clitest"
)

// bounded is how a run of the command ended, with what it cost.
type bounded struct {
	result
	took   time.Duration
	peakMB int64 // peak resident memory
}

// runBounded runs the command with a deadline of its own and measures its
// time and peak memory (its own: clitest.PeakHelper); a run that does not
// end by the deadline fails the test (it is killed).
func runBounded(t *testing.T, deadline time.Duration, args ...string) bounded {
	t.Helper()
	b := clitest.RunBounded(t, deadline, clitest.RunOptions{}, binary, args...)
	return bounded{result: b.Result, took: b.Took, peakMB: b.PeakMB}
}

// classCase is one hostile input of a class and what the command must do
// with it.
type classCase struct {
	name  string
	files map[string]string // under a new root; see hostile.WriteTree
	args  []string          // "@" is the root
	Code  int
	want  []string // each in stdout or stderr
	// maxTime and maxMB bound the run (zero: 10 s, 400 MB).
	maxTime time.Duration
	maxMB   int64
	check   func(t *testing.T, root string, r bounded)
}

// runClass runs each case of a class in a fresh directory.
func runClass(t *testing.T, cases []classCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			hostile.WriteTree(t, root, c.files)
			var args []string
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "@", root))
			}
			maxTime, maxMB := c.maxTime, c.maxMB
			if maxTime == 0 {
				maxTime = 10 * time.Second
			}
			if maxMB == 0 {
				maxMB = 400
			}
			r := runBounded(t, 6*maxTime, args...)
			t.Logf("exit %d in %s, peak %d MB", r.Code, r.took.Round(time.Millisecond), r.peakMB)
			if r.Code != c.Code {
				t.Errorf("exit %d, want %d; stderr:\n%.3000s", r.Code, c.Code, r.Stderr)
			}
			for _, w := range c.want {
				w = strings.ReplaceAll(w, "@", root)
				if !strings.Contains(r.Stdout+r.Stderr, w) {
					t.Errorf("output lacks %q; stdout:\n%.2000s\nstderr:\n%.3000s", w, r.Stdout, r.Stderr)
				}
			}
			if r.took > maxTime {
				t.Errorf("took %s, want at most %s", r.took, maxTime)
			}
			if r.peakMB > maxMB {
				t.Errorf("peak memory %d MB, want at most %d MB", r.peakMB, maxMB)
			}
			if strings.Contains(r.Stderr, "panic:") {
				t.Errorf("panic:\n%.4000s", r.Stderr)
			}
			if c.check != nil {
				c.check(t, root, r)
			}
		})
	}
}

// smallPayload is a good payload of a Namespace, with four images, which
// the cases add to.
var smallPayload = map[string]string{
	"p/release-manifests/release-metadata": `{"kind": "cincinnati-metadata-v0", "version": "4.22.0"}`,
	"p/release-manifests/image-references": `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.22.0"}, "spec": {"tags": [` +
		`{"name": "cli", "from": {"kind": "DockerImage", "name": "quay.io/x/cli@sha256:0000000000000000000000000000000000000000000000000000000000000001"}},` +
		`{"name": "oauth", "from": {"kind": "DockerImage", "name": "quay.io/x/oauth@sha256:0000000000000000000000000000000000000000000000000000000000000002"}},` +
		`{"name": "router", "from": {"kind": "DockerImage", "name": "quay.io/x/router@sha256:0000000000000000000000000000000000000000000000000000000000000003"}},` +
		`{"name": "vpn", "from": {"kind": "DockerImage", "name": "quay.io/x/vpn@sha256:0000000000000000000000000000000000000000000000000000000000000004"}}]}}`,
	"p/release-manifests/0000_50_rel_00_ns.yaml": included("Namespace", "rel-e2e", ""),
}

func with(files ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for k, v := range f {
			out[k] = v
		}
	}
	return out
}

// templated is a manifests/ file whose data holds body.
func templated(body string) map[string]string {
	return map[string]string{"p/manifests/0000_00_cluster-version-operator_99_x.yaml": included("ConfigMap", "x", "openshift-config") + "data:\n  x: '" + body + "'\n"}
}

const templateFile = "manifests/0000_00_cluster-version-operator_99_x.yaml"

func nested(open, body, close string, n int) string {
	return strings.Repeat(open, n) + body + strings.Repeat(close, n)
}

// perfProfile is a PerformanceProfile extra manifest (node tuning renders
// it with the embedded payload) with the isolated CPU list and huge pages
// given.
func perfProfile(isolated, pages string) map[string]string {
	return map[string]string{"extra/0000_50_x_01_pp.yaml": "apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata:\n  name: pp\nspec:\n" +
		"  cpu: {isolated: '" + isolated + "', reserved: '0'}\n  hugepages:\n    defaultHugepagesSize: 2M\n    pages:\n" + pages +
		"  nodeSelector: {node-role.kubernetes.io/worker: ''}\n"}
}

const ppError = "extra/0000_50_x_01_pp.yaml#0: PerformanceProfile/pp: "

// TestWorkWithoutBudget: templates that would run for hours, recurse or
// build gigabytes, and CPU lists that would expand to billions of CPUs,
// stop fast, with an error naming the file, in little memory.
func TestWorkWithoutBudget(t *testing.T) {
	render := []string{"render", "--payload", "@/p"}
	fail := func(name, body, want string) classCase {
		return classCase{name: name, files: with(smallPayload, templated(body)), args: render, Code: 1, want: []string{templateFile + ": " + want}, maxTime: 5 * time.Second}
	}
	runClass(t, []classCase{
		fail("range over a trillion", "{{range 1000000000000}}{{end}}", "template execution stopped after 1000000 operations"),
		fail("range over a trillion in a variable", "{{$n := 1000000000000}}{{range $n}}{{end}}", "template execution stopped after 1000000 operations"),
		fail("nested ranges over .Images writing nothing", nested("{{range $.Images}}", "", "{{end}}", 12), "template execution stopped after 1000000 operations"),
		fail("nested ranges over .Images writing", nested("{{range $.Images}}", "{{$.ReleaseImage}}", "{{end}}", 12), "template execution stopped after 1000000 operations"),
		fail("recursive template", `{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}`, "template calls nested more than 100000 deep"),
		fail("printf of a billion bytes", `{{$x := printf "%0999999999d" 0}}`, "template function would build a string of"),
		fail("a string doubled", `{{$s := "0123456789"}}{{range 100}}{{$s = printf "%s%s" $s $s}}{{end}}`, "template function would build a string of"),
		fail("nesting a hundred thousand deep", nested("{{if 1}}", "", "{{end}}", 100_000), "template control structures nested more than 100 levels deep"),
	})
	render = []string{"render", "--list", "--extra-manifests", "@/extra"}
	page := "      - {size: 2M, count: 1}\n"
	cpus := func(name, list, want string) classCase {
		return classCase{name: name, files: perfProfile(list, page), args: render, Code: 1, maxTime: 5 * time.Second, maxMB: 200,
			want: []string{ppError + `spec.cpu.isolated "` + list + `" is not a CPU list such as "0-3,8": ` + want}}
	}
	runClass(t, []classCase{
		cpus("a CPU range of two billion", "2-2000000000", `"2-2000000000": CPU 2000000000 is above the highest CPU id 8191`),
		cpus("a CPU beyond int64", "1-3,4-99999999999999999999", `"4-99999999999999999999": CPU 99999999999999999999 is above the highest CPU id 8191`),
		{name: "ten thousand ranges of every CPU", files: perfProfile(strings.TrimSuffix(strings.Repeat("0-8191,", 10_000), ","), page), args: render, Code: 1,
			maxTime: 5 * time.Second, maxMB: 200, want: []string{ppError + `spec.cpu.isolated "0-8191,0-8191,`, `"... (69999 bytes) is not a CPU list such as "0-3,8": 69999 characters, more than 65536`},
			check: func(t *testing.T, root string, r bounded) {
				if len(r.Stderr) > 2000 {
					t.Errorf("the error is %d bytes long: it quotes the whole list", len(r.Stderr))
				}
			}},
		{name: "every CPU there may be", files: perfProfile("1-8191", page), args: render, Code: 0, maxTime: 5 * time.Second, maxMB: 200},
	})
}

// TestBlockingOpens: a named pipe wherever a file is read is refused
// before it is opened (an open would block for good), naming it.
func TestBlockingOpens(t *testing.T) {
	const pipe = "not a regular file: a named pipe (FIFO)"
	runClass(t, []classCase{
		{name: "payload manifest", files: with(smallPayload, map[string]string{"p/release-manifests/0000_50_rel_01_x.yaml": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p"}, Code: 1, want: []string{"release-manifests/0000_50_rel_01_x.yaml: " + pipe}},
		{name: "manifests/ template", files: with(smallPayload, map[string]string{"p/manifests/0000_00_cvo_x.yaml": hostile.FIFO}),
			args: []string{"validate", "--payload", "@/p"}, Code: 1, want: []string{"manifests/0000_00_cvo_x.yaml: error: " + pipe}},
		{name: "release-metadata", files: with(smallPayload, map[string]string{"p/release-manifests/release-metadata": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p"}, Code: 1, want: []string{"release-manifests/release-metadata: " + pipe}},
		{name: "image-references", files: with(smallPayload, map[string]string{"p/release-manifests/image-references": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p"}, Code: 1, want: []string{"release-manifests/image-references: " + pipe}},
		{name: "linked to a pipe", files: with(smallPayload, map[string]string{"p/release-manifests/fifo": hostile.FIFO, "p/release-manifests/0000_50_rel_01_x.yaml": "-> fifo"}),
			args: []string{"render", "--payload", "@/p"}, Code: 1, want: []string{"release-manifests/0000_50_rel_01_x.yaml: " + pipe}},
		{name: "--payload", files: map[string]string{"fifo": hostile.FIFO},
			args: []string{"render", "--payload", "@/fifo"}, Code: 2, want: []string{"--payload @/fifo: " + pipe}},
		{name: "--cluster-config", files: with(smallPayload, map[string]string{"cc.yaml": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p", "--cluster-config", "@/cc.yaml"}, Code: 2, want: []string{"--cluster-config: @/cc.yaml: " + pipe}},
		{name: "--feature-gate-manifest", files: with(smallPayload, map[string]string{"fg.yaml": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p", "--feature-gate-manifest", "@/fg.yaml"}, Code: 2, want: []string{"--feature-gate-manifest: @/fg.yaml: " + pipe}},
		{name: "--extra-manifests", files: with(smallPayload, map[string]string{"extra/0000_50_x_01_pp.yaml": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p", "--extra-manifests", "@/extra"}, Code: 1, want: []string{"extra/0000_50_x_01_pp.yaml: " + pipe}},
		{name: "--catalog", files: map[string]string{"catalog/index.yaml": hostile.FIFO,
			"extra/0000_50_po_01_po.yaml": "apiVersion: platform.openshift.io/v1alpha1\nkind: PlatformOperator\nmetadata: {name: cert-manager}\nspec: {package: {name: cert-manager}}\n"},
			// The embedded payload has the platform operators manager.
			args: []string{"render", "--catalog", "@/catalog", "--extra-manifests", "@/extra", "--feature-set", "TechPreviewNoUpgrade"}, Code: 1, want: []string{"index.yaml", pipe}},
		{name: "--profiles-dir", files: with(smallPayload, map[string]string{"profiles/evil.yaml": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p", "--profiles-dir", "@/profiles"}, Code: 1, want: []string{"evil.yaml", pipe}},
		{name: "--overlays-dir", files: with(smallPayload, map[string]string{
			"profiles/o.yaml":               "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata: {name: o}\nspec:\n  parent: self-managed-high-availability\n  overlays: [{name: o}]\n",
			"overlays/o/kustomization.yaml": "patches: [{path: p.yaml}]\n",
			"overlays/o/p.yaml":             hostile.FIFO}),
			args: []string{"render", "--payload", "@/p", "--profile", "o", "--profiles-dir", "@/profiles", "--overlays-dir", "@/overlays"}, Code: 1, want: []string{"p.yaml", "not a regular file"}},
		{name: "--payload an image tarball that is a pipe", files: map[string]string{"img.tar": hostile.FIFO},
			args: []string{"validate", "--payload", "@/img.tar"}, Code: 2, want: []string{pipe}},
		{name: "--payload, its manifests/ a pipe", files: with(smallPayload, map[string]string{"p/manifests": hostile.FIFO}),
			args: []string{"render", "--payload", "@/p"}, Code: 1, want: []string{"error: manifests: not a directory: a named pipe (FIFO)"}},
		{name: "--kubeconfig", files: with(smallPayload, map[string]string{"kc": hostile.FIFO}),
			args: []string{"apply", "--payload", "@/p", "--kubeconfig", "@/kc"}, Code: 2, want: []string{"--kubeconfig: @/kc: " + pipe}},
		{name: "a kubeconfig's token file", files: with(smallPayload, map[string]string{"token": hostile.FIFO,
			"kc": "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {tokenFile: token}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"}),
			args: []string{"status", "--kubeconfig", "@/kc"}, Code: 2, want: []string{"kubeconfig: token file: @/token: " + pipe}},
		{name: "build --from", files: map[string]string{"src/0000_50_x_01_a.yaml": hostile.FIFO},
			args: []string{"build", "--from", "@/src", "--version", "4.22.0", "--output-file", "@/out.tar"}, Code: 1, want: []string{pipe}},
	})
}

// TestSilentWrongResults: what used to pass with exit 0 and a wrong
// result is an error, or quoted, or masked.
func TestSilentWrongResults(t *testing.T) {
	weird := []string{"a\nb", "tab\there", "\x1b[31mred\x1b[0m", "rtl\u202egnp.yaml", `quote"d`, `back\slash`, "bell\x07"}
	names := map[string]string{}
	for i, w := range weird {
		names["p/release-manifests/0000_50_rel_0"+strconv.Itoa(i+1)+"_"+w+".yaml"] = included("ConfigMap", "cm-"+strconv.Itoa(i), "rel-e2e")
	}
	planted := "PlantedListSecretValue7"
	secretList := "apiVersion: v1\nkind: List\nmetadata:\n  name: l\n  annotations:\n    include.release.openshift.io/single-node-developer: \"true\"\nitems:\n" +
		"- apiVersion: v1\n  kind: Secret\n  metadata: {name: s, namespace: rel-e2e}\n  data: {password: " + base64.StdEncoding.EncodeToString([]byte(planted)) + "}\n  stringData: {token: " + planted + "-token}\n"
	runClass(t, []classCase{
		{name: "a missing image, by index", files: with(smallPayload, templated(`{{index .Images "missing"}}`)),
			args: []string{"render", "--payload", "@/p"}, Code: 1, want: []string{templateFile + `: image-references has no such tag: "missing"`}},
		{name: "a missing image, as a field", files: with(smallPayload, templated(`{{.Images.nope}}`)),
			args: []string{"render", "--payload", "@/p"}, Code: 1, want: []string{templateFile + ": image-references has no such tag"}},
		{name: "a missing image in apply's payload", files: with(smallPayload, templated(`{{index .Images "missing"}}`)),
			args: []string{"validate", "--payload", "@/p"}, Code: 1, want: []string{templateFile + `: error: image-references has no such tag: "missing"`}},
		{name: "file names with newlines, tabs and escapes, listed", files: with(smallPayload, names),
			args: []string{"render", "--list", "--payload", "@/p"}, Code: 0,
			check: func(t *testing.T, root string, r bounded) {
				lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
				if len(lines) != len(weird)+2 { // the Namespace and the generated cluster-profile ConfigMap
					t.Errorf("%d records, want %d:\n%s", len(lines), len(weird)+2, r.Stdout)
				}
				for _, l := range lines {
					if f := strings.Split(l, "\t"); len(f) != 7 {
						t.Errorf("record with %d fields, want 7: %q", len(f), l)
					}
				}
				for i, w := range weird {
					q := strconv.Quote("release-manifests/0000_50_rel_0" + strconv.Itoa(i+1) + "_" + w + ".yaml")
					if !strings.Contains(r.Stdout, "\t"+q+"\t") {
						t.Errorf("no record names %s", q)
					}
				}
				noRaw(t, r)
			}},
		{name: "file names with escapes, in errors", files: with(smallPayload, map[string]string{"p/release-manifests/0000_50_rel_01_\x1b]0;owned\x07.yaml": "kind: [\n"}),
			args: []string{"validate", "--payload", "@/p"}, Code: 1, want: []string{`"release-manifests/0000_50_rel_01_\x1b]0;owned\a.yaml"#0: error: `},
			check: func(t *testing.T, root string, r bounded) { noRaw(t, r) }},
		{name: "a huge page count above int32", files: perfProfile("1", "      - {size: 2M, count: 4294967297}\n"),
			args: []string{"render", "--list", "--extra-manifests", "@/extra"}, Code: 1,
			want: []string{ppError + "spec.hugepages.pages[0].count: 4294967297 is out of range: want a 32-bit integer"}},
		{name: "a NUMA node above int32", files: perfProfile("1", "      - {size: 2M, count: 1, node: 2147483648}\n"),
			args: []string{"render", "--list", "--extra-manifests", "@/extra"}, Code: 1,
			want: []string{ppError + "spec.hugepages.pages[0].node: 2147483648 is out of range: want a 32-bit integer"}},
		{name: "a huge page count below zero", files: perfProfile("1", "      - {size: 2M, count: -1}\n"),
			args: []string{"render", "--list", "--extra-manifests", "@/extra"}, Code: 1,
			want: []string{ppError + `spec.hugepages.pages[0].count "-1" must not be negative`}},
		{name: "a Secret in a List, diffed", files: with(smallPayload, map[string]string{"p/release-manifests/0000_50_rel_02_list.yaml": secretList}),
			args: []string{"diff", "--payload", "@/p", "--profile", "self-managed-high-availability", "--against-profile", "single-node-developer"}, Code: 1,
			want: []string{"password: '***'", "token: '***'"},
			check: func(t *testing.T, root string, r bounded) {
				for _, leak := range []string{planted, base64.StdEncoding.EncodeToString([]byte(planted))} {
					if strings.Contains(r.Stdout+r.Stderr, leak) {
						t.Errorf("diff shows the Secret's value %q:\n%s", leak, r.Stdout)
					}
				}
			}},
	})
}

// noRaw fails when the output has a control character other than a tab
// or newline, or a bidirectional override: nothing from the input may
// reach the terminal raw.
func noRaw(t *testing.T, r bounded) {
	t.Helper()
	for _, s := range []string{r.Stdout, r.Stderr} {
		for _, c := range s {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == '\u202e' {
				t.Errorf("output has a raw %U:\n%q", c, s)
				return
			}
		}
	}
}

// TestOutputConfined: render --output-dir writes nothing outside its
// directory, whatever links stand in it, and never blocks on a pipe: a
// directory holding anything is refused (--clean removes only an earlier
// render's regular files, never a link or a pipe), and the writes go
// through os.Root (lib/safefs.TestOutputConfines: a link that appears
// after the check is refused too).
func TestOutputConfined(t *testing.T) {
	outsideUntouched := func(t *testing.T, root string, r bounded) {
		entries, _ := os.ReadDir(filepath.Join(root, "outside"))
		if len(entries) != 1 {
			t.Errorf("files appeared outside: %v", entries)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "outside", "victim.yaml")); string(b) != "untouched" {
			t.Errorf("the file outside was written: %q", b)
		}
	}
	base := with(smallPayload, map[string]string{"outside/victim.yaml": "untouched"})
	render := []string{"render", "--payload", "@/p", "--output-dir", "@/out"}
	clean := append(render[:len(render):len(render)], "--clean")
	const notEmpty, notRender = "not empty (release-manifests)", "--clean removes only what render writes"
	runClass(t, []classCase{
		{name: "a directory linked out", files: with(base, map[string]string{"out/release-manifests": "-> ../outside"}),
			args: render, Code: 2, want: []string{notEmpty}, check: outsideUntouched},
		{name: "a directory linked out, --clean", files: with(base, map[string]string{"out/release-manifests": "-> ../outside"}),
			args: clean, Code: 2, want: []string{notRender, "@/out/release-manifests is not"}, check: outsideUntouched},
		{name: "a directory linked out by an absolute path, --clean", files: with(base, map[string]string{"out/release-manifests": "-> /tmp"}),
			args: clean, Code: 2, want: []string{notRender}, check: outsideUntouched},
		{name: "a file linked out, --clean", files: with(base, map[string]string{"out/release-manifests/0000_50_rel_00_ns.yaml": "-> ../../outside/victim.yaml"}),
			args: clean, Code: 2, want: []string{notRender, "0000_50_rel_00_ns.yaml (not a regular file) is not"}, check: outsideUntouched},
		{name: "a pipe at a file's place, --clean", files: with(base, map[string]string{"out/release-manifests/0000_50_rel_00_ns.yaml": hostile.FIFO}),
			args: clean, Code: 2, maxTime: 5 * time.Second, want: []string{notRender, "0000_50_rel_00_ns.yaml (not a regular file) is not"},
			check: func(t *testing.T, root string, r bounded) {
				// Lstat, never a read: the test must not block on it either.
				if st, err := os.Lstat(filepath.Join(root, "out", "release-manifests", "0000_50_rel_00_ns.yaml")); err != nil || st.Mode().Type()&os.ModeNamedPipe == 0 {
					t.Errorf("the pipe was replaced or removed: %v, %v", st, err)
				}
			}},
		{name: "an earlier render, --clean", files: with(base, map[string]string{"out/release-manifests/old.yaml": "old: true\n"}),
			args: clean, Code: 0, check: func(t *testing.T, root string, r bounded) {
				outsideUntouched(t, root, r)
				if _, err := os.Lstat(filepath.Join(root, "out", "release-manifests", "old.yaml")); err == nil {
					t.Error("the earlier render's file is still there")
				}
				b, err := os.ReadFile(filepath.Join(root, "out", "release-manifests", "0000_50_rel_00_ns.yaml"))
				if err != nil || !strings.Contains(string(b), "name: rel-e2e") {
					t.Errorf("the file was not written: %q, %v", b, err)
				}
			}},
	})
}

// TestServerChecksOffline: what the API server would refuse, validate
// reports, naming the file, the document, the object and the field.
func TestServerChecksOffline(t *testing.T) {
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations: {include.release.openshift.io/self-managed-high-availability: "true"}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer}
              color: {type: string, enum: [red, blue]}
`
	bad := func(name, doc, want string) classCase {
		return classCase{name: name, Code: 1, args: []string{"validate", "--payload", "@/p"},
			files: with(smallPayload, map[string]string{"p/release-manifests/0000_40_rel_00_crd.yaml": crd, "p/release-manifests/0000_50_rel_09_bad.yaml": doc}),
			want:  []string{"release-manifests/0000_50_rel_09_bad.yaml#0: error: " + want}}
	}
	ann := "  annotations: {include.release.openshift.io/self-managed-high-availability: \"true\"}\n"
	runClass(t, []classCase{
		bad("namespace a number", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: 7\n"+ann,
			"ConfigMap/c: metadata.namespace: must be a string, not the number 7"),
		bad("spaces in apiVersion", "apiVersion: 'apps/ v1'\nkind: Deployment\nmetadata:\n  name: d\n  namespace: rel-e2e\n"+ann,
			`Deployment.apps/rel-e2e/d: apiVersion: "apps/ v1" has white space in it`),
		bad("spaces in kind", "apiVersion: v1\nkind: 'Config Map'\nmetadata:\n  name: c\n  namespace: rel-e2e\n"+ann,
			`Config Map/rel-e2e/c: kind: "Config Map" has white space in it`),
		bad("annotation a number", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: rel-e2e\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n    x: 1\n",
			"ConfigMap/c: metadata.annotations[x]: must be a string, not the number 1 (quote it)"),
		bad("kind List", "apiVersion: v1\nkind: List\nmetadata:\n  name: l\n"+ann+"items: []\n",
			"List/l: kind: List is a client-side list"),
		bad("replicas three", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: rel-e2e\n"+ann+"spec: {replicas: three}\n",
			"Deployment.apps/rel-e2e/d: spec.replicas: must be of type int32, not string"),
		bad("a custom resource's unknown field", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: rel-e2e\n"+ann+"spec: {size: 1, colour: red}\n",
			"Widget.example.com/rel-e2e/w: spec.colour: field not declared in the schema of Widget"),
		bad("a custom resource's field of the wrong type", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: rel-e2e\n"+ann+"spec: {size: big}\n",
			`Widget.example.com/rel-e2e/w: spec.size: Invalid value: "string": spec.size in body must be of type integer`),
		bad("a custom resource without a required field", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: rel-e2e\n"+ann+"spec: {color: red}\n",
			"Widget.example.com/rel-e2e/w: spec.size: Required value"),
		bad("a custom resource outside its enum", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: rel-e2e\n"+ann+"spec: {size: 1, color: green}\n",
			`Widget.example.com/rel-e2e/w: spec.color: Unsupported value: "green"`),
	})
}
