package plan

import (
	"io"
	"os"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// matrixProfiles are the four reference profiles.
var matrixProfiles = []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"}

// BenchmarkRenderMatrix compares rendering the real payload for one
// selection (load, plan.Build, WriteYAML: what `render` does for the
// default profile and feature set) with rendering it for all four
// reference profiles times five feature sets (load once, then Build and
// WriteYAML for each of the 20 selections, sharing one Cache). hack/benchratio alternates
// them: go run ./hack/benchratio -pkg ./plan -bench BenchmarkRenderMatrix -a all -b one
func BenchmarkRenderMatrix(b *testing.B) {
	fsys := os.DirFS(realpayload.Dir(b))
	render := func(b *testing.B, p *payload.Payload, c *Cache, profile, featureSet string) int {
		pl, err := Build(Options{Loaded: p, Cache: c, Profile: profile, FeatureSet: featureSet})
		if err != nil {
			b.Fatal(err)
		}
		if err := pl.WriteYAML(io.Discard); err != nil {
			b.Fatal(err)
		}
		return len(pl.Objects)
	}
	load := func(b *testing.B) *payload.Payload {
		p, err := payload.Load(fsys, payload.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	b.Run("one", func(b *testing.B) {
		for b.Loop() {
			render(b, load(b), nil, "", "")
		}
	})
	b.Run("all", func(b *testing.B) {
		objects := 0
		for b.Loop() {
			p, c := load(b), NewCache()
			objects = 0
			for _, profile := range matrixProfiles {
				for _, fs := range manifest.KnownFeatureSets() {
					objects += render(b, p, c, profile, fs)
				}
			}
		}
		b.ReportMetric(float64(objects), "objects")
	})
}
