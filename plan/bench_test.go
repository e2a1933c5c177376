package plan

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"text/template"

	"github.com/openshift/api/features"
	lgmanifest "github.com/openshift/library-go/pkg/manifest"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// referencePath is what the CVO does to load a payload: per file, serially,
// library-go ParseManifests then Include for one selection. It returns the
// number of included manifests.
func referencePath(tb testing.TB, dir string, gates sets.Set[string]) int {
	profile, featureSet, major := "self-managed-high-availability", "Default", uint64(4)
	n := 0
	for _, sub := range []string{"manifests", "release-manifests"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(dir, sub, e.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			if sub == "manifests" {
				tmpl, err := template.New(e.Name()).Parse(string(raw))
				if err != nil {
					continue
				}
				var b bytes.Buffer
				if err := tmpl.Execute(&b, map[string]any{"ReleaseImage": "x", "ClusterProfile": profile, "Images": map[string]string{}}); err != nil {
					continue
				}
				raw = b.Bytes()
			}
			ms, err := lgmanifest.ParseManifests(bytes.NewReader(raw))
			if err != nil {
				tb.Fatal(err)
			}
			for _, m := range ms {
				if m.Include(nil, &featureSet, &profile, nil, nil, gates, &major) == nil {
					n++
				}
			}
		}
	}
	return n
}

// BenchmarkLoadSelectGraph compares, in one run, our `render --list` of the
// real payload (parsing with positions, templates, metadata checks,
// selection, overlays, components, the task graph and the list, for the
// default profile and feature set) with the reference path (library-go
// ParseManifests + Include per file, serially). Run with -count to alternate them; hack/benchratio turns
// the output into medians and a ratio.
func BenchmarkLoadSelectGraph(b *testing.B) {
	dir := realpayload.Dir(b)
	fsys := os.DirFS(dir)
	gates := sets.New[string]()
	for _, g := range features.FeatureSets(4, features.SelfManaged, "").Enabled {
		gates.Insert(string(g.FeatureGateAttributes.Name))
	}
	var ours, ref int
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			// What `render --list` does.
			p, err := Build(context.Background(), Options{Payload: fsys, Lean: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := p.WriteList(io.Discard); err != nil {
				b.Fatal(err)
			}
			ours = len(p.Selection.Included)
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ref = referencePath(b, dir, gates)
		}
	})
	if ours != ref && ours != 0 && ref != 0 {
		b.Fatalf("ours included %d objects, the reference %d", ours, ref)
	}
}
