// Command gen-upgrade writes a release to upgrade the real payload to
// (see internal/genupgrade): its files at another version, with a changed
// Deployment image, a delete manifest, orphans, a moved file, a new CRD
// with a resource of it, and an object that changes capability.
//
//	go run ./hack/gen-upgrade -version 4.22.1 -o /tmp/payload-4.22.1
//	go run ./hack/gen-upgrade -version 4.23.0 -o /tmp/payload-4.23.0
//	go run ./hack/gen-upgrade -bump -from payload -version 4.22.1 -o /tmp/builtin-4.22.1
//	go run ./hack/gen-upgrade -bump -from payload -version 4.22.2 -previous 4.22.0,4.22.1 -o /tmp/builtin-4.22.2
//
// -bump changes the version only (genupgrade.Bump), of any payload: above,
// the one built into payload-apply (its files in ./payload). -previous
// lists the versions that update into it (default: -from's version),
// -channels the channels its metadata names (genupgrade.Release): the
// releases of an update graph (payload-apply update-graph).
//
// -from is the payload to start from (default ../shared/testdata/ocp-payload).
//
// May import: internal/genupgrade.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/payload-apply/payload-apply/internal/genupgrade"
)

func main() {
	from := flag.String("from", "../shared/testdata/ocp-payload", "the payload to start from (release A)")
	version := flag.String("version", "", "the release version of B, e.g. 4.22.1")
	out := flag.String("o", "", "output directory (created)")
	bump := flag.Bool("bump", false, "change the version only")
	previous := flag.String("previous", "", "with -bump: the versions that update into it, comma-separated (default: -from's version)")
	channels := flag.String("channels", "", "with -bump: the channels its metadata names, comma-separated")
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen-upgrade -version V -o DIR [-from DIR] [-bump]")
		os.Exit(2)
	}
	if *bump && (*previous != "" || *channels != "") {
		md := genupgrade.Metadata{Version: *version, Previous: strings.Split(*previous, ",")}
		if *previous == "" {
			md.Previous = nil
		}
		if *channels != "" {
			md.Metadata = map[string]string{"io.openshift.upgrades.graph.release.channels": *channels}
		}
		if err := genupgrade.Release(*from, *out, md); err != nil {
			fmt.Fprintln(os.Stderr, "gen-upgrade:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: release %s (previous %s), the same files\n", *out, *version, *previous)
		return
	}
	if *bump {
		prev, err := genupgrade.Bump(*from, *out, *version)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen-upgrade:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: release %s (from %s), the same files\n", *out, *version, prev)
		return
	}
	v, err := genupgrade.Write(*from, *out, *version)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-upgrade:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: release %s (from %s): image of %s/%s, delete of %s/%s, %d orphans, %s moved %s -> %s, new %s and %s, %s joins %s\n",
		*out, v.Version, v.Previous, v.Image.Namespace, v.Image.Name, v.Deleted.Namespace, v.Deleted.Name, len(v.Orphans),
		v.Moved.Name, v.MovedFrom, v.MovedTo, v.CRD.Name, v.CR.Name, v.Implicit.Name, v.Capability)
}
