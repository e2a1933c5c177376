package plan

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// BenchmarkRenderOverlays renders the real payload (loaded once) as `render` does
// (plan.Build, then the YAML to io.Discard), with and without the overlay
// stage: the bench profile of testdata/BenchmarkRenderOverlays patches every
// Deployment, and single-node-developer applies its embedded overlay.
// docs/benchmarks.md reports the ratio.
func BenchmarkRenderOverlays(b *testing.B) {
	loaded, err := payload.Load(context.Background(), os.DirFS(realpayload.Dir(b)), payload.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	set, err := profiles.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	if set, err = set.WithDir(os.DirFS("testdata/BenchmarkRenderOverlays/profiles"), "testdata/BenchmarkRenderOverlays/profiles/"); err != nil {
		b.Fatal(err)
	}
	extra := []overlay.Source{{FS: os.DirFS("testdata/BenchmarkRenderOverlays/overlays"), Label: "testdata/BenchmarkRenderOverlays/overlays/"}}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"bench/without-overlays", Options{Profile: "bench", SkipOverlays: true}},
		{"bench/with-overlays", Options{Profile: "bench"}},
		{"single-node-developer/without-overlays", Options{Profile: "single-node-developer", SkipOverlays: true}},
		{"single-node-developer/with-overlays", Options{Profile: "single-node-developer"}},
	} {
		opts := tc.opts
		opts.Loaded, opts.Profiles, opts.ExtraOverlays = loaded, set, extra
		b.Run(tc.name, func(b *testing.B) {
			var objects, changes int
			for b.Loop() {
				p, err := Build(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.WriteYAML(io.Discard); err != nil {
					b.Fatal(err)
				}
				objects, changes = len(p.Objects), len(p.OverlayChanges)
			}
			b.ReportMetric(float64(objects), "objects")
			b.ReportMetric(float64(changes), "changed")
		})
	}
}
