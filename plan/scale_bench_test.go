package plan

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payload-apply/payload-apply/internal/genpayload"
)

var benchScales = flag.String("bench-scales", "1,10", "payload scales BenchmarkRenderScale renders (add 100 on demand: about 1 GB in memory)")

// BenchmarkRenderScale renders generated payloads (internal/genpayload,
// seed 1) of -bench-scales times the size of a release as `render --list`
// does: load for the default selection (Lean), Build, WriteList. The
// payload is generated in memory before the timer starts; MB/s is
// throughput over the payload's bytes, so equal MB/s across scales is
// linear time. Peak memory of the command is hack/benchscale's job: heap
// statistics of a test binary are not a process's RSS.
func BenchmarkRenderScale(b *testing.B) {
	for _, s := range strings.Split(*benchScales, ",") {
		scale, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			b.Fatalf("-bench-scales: %v", err)
		}
		b.Run(fmt.Sprintf("%dx", scale), func(b *testing.B) {
			fsys := fstest.MapFS{}
			var size int64
			for _, f := range genpayload.Generate(genpayload.Options{Seed: 1, Scale: scale}) {
				fsys[f.Path] = &fstest.MapFile{Data: f.Data}
				size += int64(len(f.Data))
			}
			b.SetBytes(size)
			b.ReportAllocs()
			objects := 0
			for b.Loop() {
				p, err := Build(context.Background(), Options{Payload: fsys, Lean: true})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.WriteList(io.Discard); err != nil {
					b.Fatal(err)
				}
				objects = len(p.Objects)
			}
			b.ReportMetric(float64(objects), "objects")
		})
	}
}
