package image_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/image"
)

// The real payload's figures go in docs/benchmarks.md ("Release images"):
//
//	go test ./lib/image -run '^$' -bench . -benchtime 20x

func BenchmarkBuildRealPayload(b *testing.B) {
	for _, format := range image.Formats() {
		b.Run(string(format), func(b *testing.B) {
			src := os.DirFS(realpayload.Dir(b))
			out := filepath.Join(b.TempDir(), "image")
			b.ReportAllocs()
			for b.Loop() {
				img, err := image.Build(src, image.BuildOptions{Version: "4.22.0-0.snapshot-2026-08", Format: format})
				if err != nil {
					b.Fatal(err)
				}
				if err := image.Write(img, out, image.WriteOptions{Format: format}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLoadRealPayload(b *testing.B) {
	for _, format := range image.Formats() {
		b.Run(string(format), func(b *testing.B) {
			img, err := image.Build(os.DirFS(realpayload.Dir(b)), image.BuildOptions{Version: "4.22.0-0.snapshot-2026-08", Format: format})
			if err != nil {
				b.Fatal(err)
			}
			out := filepath.Join(b.TempDir(), "image")
			if err := image.Write(img, out, image.WriteOptions{Format: format}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				fsys, err := image.Load(out, image.LoadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if n := len(fsys.Files()); n < 600 {
					b.Fatalf("%d files", n)
				}
			}
		})
	}
}
