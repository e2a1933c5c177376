package gobuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// moduleRoot is the directory of go.mod, two levels up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// deps lists the packages cmd/payload-apply links, built with tags.
func deps(t *testing.T, tags string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", tags, "./cmd/payload-apply")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -tags %q: %v", tags, err)
	}
	return strings.Fields(string(out))
}

// TestTagsLeaveOutPlugin: built with Tags, the binary does not link the
// plugin package (which makes the linker export every symbol); without
// them it does, which is why the tags are there. When a dependency stops
// needing the tag, the second half says so.
func TestTagsLeaveOutPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("go list of the whole binary")
	}
	if with := deps(t, Tags); slices.Contains(with, "plugin") {
		var by []string
		cmd := exec.Command("go", "list", "-deps", "-tags", Tags, "-f", `{{.ImportPath}}{{range .Imports}}{{if eq . "plugin"}} imports plugin{{end}}{{end}}`, "./cmd/payload-apply")
		cmd.Dir = moduleRoot(t)
		out, _ := cmd.Output()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasSuffix(line, " imports plugin") {
				by = append(by, strings.TrimSuffix(line, " imports plugin"))
			}
		}
		t.Errorf("built with -tags %s, cmd/payload-apply links the plugin package (imported by %v): leave it out with that package's own build tag, and add the tag to Tags", Tags, by)
	}
	if without := deps(t, ""); !slices.Contains(without, "plugin") {
		t.Errorf("without -tags %s cmd/payload-apply no longer links the plugin package: the tag is not needed any more", Tags)
	}
}

// TestMakefileTags: the Makefile builds and tests with the same tags.
func TestMakefileTags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TAGS := (.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile: no line TAGS := ...")
	}
	if got := strings.TrimSpace(string(m[1])); got != Tags {
		t.Errorf("Makefile TAGS = %q, gobuild.Tags = %q", got, Tags)
	}
}
