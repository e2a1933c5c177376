package overlay_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/payload-apply/payload-apply/internal/genpayload"
	"github.com/payload-apply/payload-apply/internal/race"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/profiles"
)

// sameResult fails t unless a and b hold the same objects and changes:
// the same pointers for objects no overlay changed, equal objects at the
// same positions for the others.
func sameResult(t *testing.T, a, b *overlay.Result) {
	t.Helper()
	same := func(x, y *manifest.Manifest) bool {
		if x == y {
			return true
		}
		return x != nil && y != nil && x.File == y.File && x.Doc == y.Doc && x.OriginalFilename == y.OriginalFilename &&
			x.GVK == y.GVK && reflect.DeepEqual(x.Obj.Object, y.Obj.Object)
	}
	if len(a.Objects) != len(b.Objects) {
		t.Fatalf("%d objects, want %d", len(b.Objects), len(a.Objects))
	}
	for i := range a.Objects {
		if !same(a.Objects[i], b.Objects[i]) {
			t.Fatalf("object %d: %s, want %s", i, b.Objects[i], a.Objects[i])
		}
	}
	if len(a.Changes) != len(b.Changes) {
		t.Fatalf("%d changes, want %d", len(b.Changes), len(a.Changes))
	}
	for i, c := range a.Changes {
		d := b.Changes[i]
		if c.Overlay != d.Overlay || c.Action != d.Action || c.Source != d.Source || !same(c.Object, d.Object) {
			t.Fatalf("change %d: %+v, want %+v", i, d, c)
		}
	}
}

// TestNarrowingMatchesFullBuild: for the real payload and a generated one
// (only the embedded one under -race),
// and the overlays of every profile (the embedded ones, and the test
// profiles bench and crc of package plan, whose overlays patch by name),
// giving kustomize only the objects the overlays may touch gives what
// giving it every object gives, and so does a Cache shared by the
// selections.
func TestNarrowingMatchesFullBuild(t *testing.T) {
	set, err := profiles.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var extra []overlay.Source
	for _, dir := range []string{"BenchmarkRenderOverlays", "crc"} {
		root := "../../plan/testdata/" + dir
		if set, err = set.WithDir(os.DirFS(root+"/profiles"), root+"/profiles/"); err != nil {
			t.Fatal(err)
		}
		extra = append(extra, overlay.Source{FS: os.DirFS(root + "/overlays"), Label: root + "/overlays/"})
	}
	payloads := map[string]fs.FS{"embedded": payload.Embedded()}
	if !race.Enabled {
		// Full builds of a release payload take minutes under -race.
		gen := fstest.MapFS{}
		for _, f := range genpayload.Generate(genpayload.Options{Seed: 1, Scale: 1}) {
			gen[f.Path] = &fstest.MapFile{Data: f.Data}
		}
		payloads["real"], payloads["generated"] = os.DirFS(realpayload.Dir(t)), gen
	}
	for name, fsys := range payloads {
		p, err := payload.Load(context.Background(), fsys, payload.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// One cache across the selections of a payload: later selections
		// reuse earlier builds, whole or object by object.
		cache := overlay.NewCache()
		for _, profile := range []string{"single-node-developer", "ibm-cloud-managed", "hypershift", "bench", "crc"} {
			for _, fset := range []string{"Default", "TechPreviewNoUpgrade", "OKD"} {
				if (name != "real" || profile != "single-node-developer") && fset != "Default" {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%s", name, profile, fset), func(t *testing.T) {
					pl, err := plan.Build(context.Background(), plan.Options{Loaded: p, Profiles: set, ExtraOverlays: extra, Profile: profile, FeatureSet: fset, SkipOverlays: true})
					if err != nil {
						t.Fatal(err)
					}
					var ovs []*overlay.Overlay
					for _, ref := range pl.ClusterProfile.Overlays {
						o, err := overlay.Find(append([]overlay.Source{plan.EmbeddedOverlays()}, extra...), ref.Name, ref.Path)
						if err != nil {
							t.Fatal(err)
						}
						ovs = append(ovs, o)
					}
					if len(ovs) == 0 {
						t.Fatal("the profile has no overlays: the test is broken")
					}
					full, fullErr := overlay.ApplyFull(pl.Selection.Included, ovs)
					narrow, err := overlay.Apply(context.Background(), pl.Selection.Included, ovs)
					if fullErr != nil || err != nil {
						// The generated payload lacks the Deployments bench
						// and crc patch by name: both ways must say so.
						if fmt.Sprint(fullErr) != fmt.Sprint(err) {
							t.Fatalf("error %v, without narrowing %v", err, fullErr)
						}
						return
					}
					sameResult(t, full, narrow)
					cached, err := cache.Apply(context.Background(), pl.Selection.Included, ovs)
					if err != nil {
						t.Fatal(err)
					}
					sameResult(t, full, cached)
					if len(full.Changes) == 0 && profile != "hypershift" && name == "real" {
						t.Error("no overlay changed anything: the comparison proves little")
					}
				})
			}
		}
	}
}
