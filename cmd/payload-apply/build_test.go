package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/payload"
)

// realVersion is the version of the shared real payload.
const realVersion = "4.22.0-0.snapshot-2026-08"

// runCmd runs the command line and returns the exit code, stdout and stderr.
func runCmd(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	return code, out, errOut
}

// mustRun runs the command line and fails the test unless it exits 0.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	code, out, errOut := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("payload-apply %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// imageFlag is the flag that writes an image of format.
func imageFlag(format image.Format) string {
	if format == image.FormatDockerArchive {
		return "--output-file"
	}
	return "--output-dir"
}

// buildReal builds the real payload into dst and returns the printed digest.
func buildReal(t testing.TB, dst string, format image.Format) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, "build", "--from", realpayload.Dir(t), "--version", realVersion, imageFlag(format), dst))
}

func TestBuildRealPayloadRendersTheSame(t *testing.T) {
	dir := realpayload.Dir(t)
	tmp := t.TempDir()
	images := map[string]string{
		"oci layout":     filepath.Join(tmp, "layout"),
		"docker-archive": filepath.Join(tmp, "release.tar"),
	}
	buildReal(t, images["oci layout"], image.FormatOCI)
	buildReal(t, images["docker-archive"], image.FormatDockerArchive)
	for profile := range referenceProfiles {
		want := mustRun(t, "render", "--list", "--profile", profile, "--payload", dir)
		if len(strings.Split(want, "\n")) < 100 {
			t.Fatalf("profile %s: only %d objects from the directory", profile, len(strings.Split(want, "\n")))
		}
		for kind, img := range images {
			t.Run(profile+"/"+kind, func(t *testing.T) {
				got := mustRun(t, "render", "--list", "--profile", profile, "--payload", img)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("render --list from the image (-directory +image):\n%s", diff)
				}
			})
		}
	}
	for kind, img := range images {
		t.Run("validate/"+kind, func(t *testing.T) {
			code, _, errOut := runCmd(t, "validate", "--payload", img)
			if code != 0 || !strings.Contains(errOut, "0 errors") {
				t.Errorf("validate --payload %s: exit %d, %s", kind, code, errOut)
			}
		})
	}
}

func TestBuildDigestStable(t *testing.T) {
	src := smallPayload(t)
	for _, format := range image.Formats() {
		t.Run(string(format), func(t *testing.T) {
			var digests []string
			for i := 0; i < 2; i++ {
				out := filepath.Join(t.TempDir(), "image")
				digests = append(digests, strings.TrimSpace(mustRun(t, "build", "--from", src, "--version", "4.22.0", imageFlag(format), out)))
			}
			if !strings.HasPrefix(digests[0], "sha256:") || digests[0] != digests[1] {
				t.Errorf("digests %v: want the same sha256 twice", digests)
			}
		})
	}
}

// skopeoInspect is what the tests read from `skopeo inspect`.
type skopeoInspect struct {
	Digest string
	Labels map[string]string
	Layers []string
}

func TestSkopeoReadsBuiltImages(t *testing.T) {
	skopeo, err := exec.LookPath("skopeo")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("skopeo is not installed; CI must run hack/install-test-deps.sh first")
		}
		t.Skip("skopeo is not installed (run hack/install-test-deps.sh); skipping the check with a tool nobody here wrote")
	}
	src := realpayload.Dir(t)
	tests := []struct {
		format    image.Format
		transport string
	}{
		{format: image.FormatOCI, transport: "oci:"},
		{format: image.FormatDockerArchive, transport: "docker-archive:"},
	}
	for _, tc := range tests {
		t.Run(string(tc.format), func(t *testing.T) {
			var digests []string
			for i := 0; i < 2; i++ {
				out := filepath.Join(t.TempDir(), "image")
				mustRun(t, "build", "--from", src, "--version", realVersion, imageFlag(tc.format), out)
				cmd := exec.Command(skopeo, "inspect", tc.transport+out)
				data, err := cmd.Output()
				if err != nil {
					t.Fatalf("skopeo inspect %s%s: %v\n%s", tc.transport, out, err, stderrOf(err))
				}
				var got skopeoInspect
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatalf("skopeo inspect output: %v\n%s", err, data)
				}
				if diff := cmp.Diff(map[string]string{image.ReleaseLabel: realVersion}, got.Labels); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
				if len(got.Layers) != 1 {
					t.Errorf("%d layers, want 1: %v", len(got.Layers), got.Layers)
				}
				digests = append(digests, got.Digest)
			}
			if digests[0] == "" || digests[0] != digests[1] {
				t.Errorf("skopeo's digests of two builds: %v, want the same", digests)
			}
		})
	}

	// And the other way: what skopeo writes, --payload reads.
	layout := filepath.Join(t.TempDir(), "layout")
	buildReal(t, layout, image.FormatOCI)
	want := mustRun(t, "render", "--list", "--payload", src)
	for _, dst := range []string{"oci-archive:" + filepath.Join(t.TempDir(), "oci.tar"), "docker-archive:" + filepath.Join(t.TempDir(), "docker.tar")} {
		t.Run("skopeo copy to "+strings.SplitN(dst, ":", 2)[0], func(t *testing.T) {
			if out, err := exec.Command(skopeo, "copy", "oci:"+layout, dst).CombinedOutput(); err != nil {
				t.Fatalf("skopeo copy: %v\n%s", err, out)
			}
			got := mustRun(t, "render", "--list", "--payload", strings.SplitN(dst, ":", 2)[1])
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("render --list (-directory +skopeo's copy):\n%s", diff)
			}
		})
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// smallPayload writes a component directory tree: two components and the
// CVO's manifests, all from the embedded reference payload.
func smallPayload(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, payload.Embedded()); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFiles(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const testConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: openshift-example
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
data:
  image: quay.io/example/operator:v1
`

const testRefs = `kind: ImageStream
apiVersion: image.openshift.io/v1
spec:
  tags:
  - name: example-operator
    from:
      kind: DockerImage
      name: %s
`

func TestBuildComponents(t *testing.T) {
	root := t.TempDir()
	example := writeFiles(t, filepath.Join(root, "example-operator"), map[string]string{
		"configmap.yaml":   testConfigMap,
		"image-references": strings.Replace(testRefs, "%s", "quay.io/example/operator:v1", 1),
		"README.md":        "not a manifest",
	})
	other := writeFiles(t, filepath.Join(root, "repo", "manifests"), map[string]string{
		"0000_30_other_configmap.yaml": strings.Replace(testConfigMap, "settings", "other", 1),
	})
	out := filepath.Join(root, "image")
	mustRun(t, "build", "--from", example, "--from", "other="+other, "--version", "4.22.0", "--output-dir", out)
	got := payloadLines(mustRun(t, "render", "--list", "--payload", out))
	want := "30\tother\trelease-manifests/0000_30_other_configmap.yaml\tv1\tConfigMap\topenshift-example\tother\n" +
		"50\texample-operator\trelease-manifests/0000_50_example-operator_configmap.yaml\tv1\tConfigMap\topenshift-example\tsettings\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render --list (-want +got):\n%s", diff)
	}
}

func payloadLines(list string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(list, "\n") {
		if line != "" && !strings.Contains(line, "\tgenerated/") {
			b.WriteString(line)
		}
	}
	return b.String()
}
