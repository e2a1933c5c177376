package plan

import (
	"context"
	"io"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// matrixProfiles are the four reference profiles.
var matrixProfiles = []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"}

// BenchmarkRenderMatrix compares rendering the real payload for one
// selection (load, Build, WriteYAML: what `render` does for the default
// profile and feature set) with rendering it for all four reference
// profiles times five feature sets: load once, then Build and WriteYAML
// for each of the 20 selections with one shared Cache, one after the
// other ("all-serial") or GOMAXPROCS at a time ("all"). hack/benchratio
// alternates them:
//
//	go run ./hack/benchratio -pkg ./plan -bench BenchmarkRenderMatrix -a all -b one
func BenchmarkRenderMatrix(b *testing.B) {
	fsys := os.DirFS(realpayload.Dir(b))
	render := func(p *payload.Payload, c *Cache, profile, featureSet string) (int, error) {
		pl, err := Build(context.Background(), Options{Loaded: p, Cache: c, Profile: profile, FeatureSet: featureSet})
		if err != nil {
			return 0, err
		}
		return len(pl.Objects), pl.WriteYAML(io.Discard)
	}
	load := func(b *testing.B) *payload.Payload {
		p, err := payload.Load(context.Background(), fsys, payload.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	b.Run("one", func(b *testing.B) {
		for b.Loop() {
			if _, err := render(load(b), nil, "", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	matrix := func(b *testing.B, parallel int) {
		objects := 0
		for b.Loop() {
			p, c := load(b), NewCache()
			counts := make([]int, len(matrixProfiles)*len(manifest.KnownFeatureSets()))
			var g errgroup.Group
			g.SetLimit(parallel)
			i := 0
			for _, profile := range matrixProfiles {
				for _, fs := range manifest.KnownFeatureSets() {
					n := &counts[i]
					i++
					g.Go(func() (err error) {
						*n, err = render(p, c, profile, fs)
						return err
					})
				}
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
			objects = 0
			for _, n := range counts {
				objects += n
			}
		}
		b.ReportMetric(float64(objects), "objects")
	}
	b.Run("all", func(b *testing.B) { matrix(b, runtime.GOMAXPROCS(0)) })
	b.Run("all-serial", func(b *testing.B) { matrix(b, 1) })
}
