package nodetuning_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// readManifests parses a file of testdata as an extra manifest would be
// (File "extra/<name>").
func readManifests(t *testing.T, path string) []*manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := manifest.Parse("extra/"+filepath.Base(path), data, manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*manifest.Manifest, len(ms))
	for i := range ms {
		out[i] = &ms[i]
	}
	return out
}

// yamlStream prints manifests as render does: "# Source: FILE#DOC" and the
// object.
func yamlStream(t *testing.T, ms []*manifest.Manifest) string {
	t.Helper()
	var b bytes.Buffer
	for _, m := range ms {
		data, err := yaml.Marshal(m.Obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s", m.Position(), data)
	}
	return b.String()
}

// ignitionFiles prints the files of every MachineConfig among ms, decoded,
// so that reviews can read the scripts and configuration.
func ignitionFiles(t *testing.T, ms []*manifest.Manifest) string {
	t.Helper()
	var b strings.Builder
	for _, m := range ms {
		if m.GVK.Kind != "MachineConfig" {
			continue
		}
		files, _, _ := unstructured.NestedSlice(m.Obj.Object, "spec", "config", "storage", "files")
		for _, f := range files {
			file := f.(map[string]any)
			source := file["contents"].(map[string]any)["source"].(string)
			encoded, ok := strings.CutPrefix(source, "data:text/plain;charset=utf-8;base64,")
			if !ok {
				t.Fatalf("%s: %s: not a base64 data URL: %s", m.Obj.GetName(), file["path"], source)
			}
			data, err := base64.StdEncoding.DecodeString(encoded)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "=== %s %s (mode %o)\n%s", m.Obj.GetName(), file["path"], file["mode"], data)
		}
	}
	return b.String()
}
