package manifest

import (
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// BenchmarkDepthCheck weighs the depth limit against parsing: "parse"
// parses every file of the real payload (depth check included),
// "depth-check" only walks the parsed objects as the check does. Compare
// them with hack/benchratio -a depth-check -b parse.
func BenchmarkDepthCheck(b *testing.B) {
	realpayload.Dir(b) // skips when the payload is absent
	files := realpayload.Sample(b, 0, 1<<30)
	var objs []map[string]any
	for _, f := range files {
		ms, _ := Parse(f.Path, f.Data, ParseOptions{})
		for _, m := range ms {
			objs = append(objs, m.Obj.Object)
		}
	}
	max := DefaultLimits().MaxDepth
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			for _, f := range files {
				if _, err := Parse(f.Path, f.Data, ParseOptions{}); err != nil && len(f.Data) == 0 {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("depth-check", func(b *testing.B) {
		for b.Loop() {
			for _, o := range objs {
				if tooDeep(o, max) {
					b.Fatal("too deep")
				}
			}
		}
	})
}
