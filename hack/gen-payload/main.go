// Command gen-payload writes a synthetic release payload shaped like a real
// one (see internal/genpayload) for benchmarks:
//
//	go run ./hack/gen-payload -scale 10 -seed 1 -o /tmp/payload-10x
//
// -scale 1 is the size of a release (about 600 files, 11 MB), N is N times
// that (the benchmarks use 1, 10, 30 and 100). The same -seed and -scale give the same
// bytes. It prints the number of files and bytes written. The directory
// then holds exactly that payload: files of an older one in its manifests/
// and release-manifests/ are removed (and counted).
//
// May import: internal/genpayload.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/payload-apply/payload-apply/internal/genpayload"
)

func main() {
	seed := flag.Uint64("seed", 1, "random seed: the same seed and scale give the same payload")
	scale := flag.Int("scale", 1, "size in releases: any N from 1 (the benchmarks use 1, 10, 30 and 100)")
	out := flag.String("o", "", "output directory (created; it then holds exactly the payload: other files of its manifests/ and release-manifests/ are removed)")
	flag.Parse()
	if *out == "" || *scale < 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen-payload -o DIR [-scale N] [-seed N]")
		os.Exit(2)
	}
	files, bytes, stale, err := genpayload.Write(*out, genpayload.Options{Seed: *seed, Scale: *scale})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-payload:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d files, %d bytes (scale %d, seed %d, version %s)", *out, files, bytes, *scale, *seed,
		genpayload.Version(genpayload.Options{Seed: *seed, Scale: *scale}))
	if stale > 0 {
		fmt.Printf("; %d files of an older payload removed", stale)
	}
	fmt.Println()
}
