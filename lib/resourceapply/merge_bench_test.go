package resourceapply

import (
	"os"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// BenchmarkCompareRealPayload compares every object of the real payload
// with itself as the live object (in sync: what a no-op apply does per
// object, less the managed fields).
func BenchmarkCompareRealPayload(b *testing.B) {
	p, err := payload.Load(b.Context(), os.DirFS(realpayload.Dir(b)), payload.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var objs []*manifest.Manifest
	for i := range p.Files {
		for j := range p.Files[i].Manifests {
			objs = append(objs, &p.Files[i].Manifests[j])
		}
	}
	b.ResetTimer()
	for range b.N {
		for _, m := range objs {
			if d := compare(m.Obj, m.Obj, DefaultFieldManager); !d.inSync() {
				b.Fatalf("%s: %s", m.ID(), d.apply)
			}
		}
	}
}
