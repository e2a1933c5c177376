// Command gen-complete writes a complete release of a partial payload (see
// internal/gencomplete): its files, plus a CustomResourceDefinition for
// every kind neither kube-apiserver nor the payload serves and a Namespace
// for every namespace no manifest creates.
//
//	go run ./hack/gen-complete -o /tmp/payload-complete
//
// -from is the payload to start from (default ../shared/testdata/ocp-payload).
//
// May import: internal/gencomplete.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/payload-apply/payload-apply/internal/gencomplete"
)

func main() {
	from := flag.String("from", "../shared/testdata/ocp-payload", "the payload to complete")
	out := flag.String("o", "", "output directory (created)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen-complete -o DIR [-from DIR]")
		os.Exit(2)
	}
	a, err := gencomplete.Write(context.Background(), *from, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-complete:", err)
		os.Exit(1)
	}
	for _, k := range a.Kinds {
		fmt.Printf("CustomResourceDefinition for %s %v (%d objects; required: %v)\n", k.GroupKind, k.Versions, k.Objects, k.Required)
	}
	fmt.Printf("%s: %d CustomResourceDefinitions, %d namespaces %v\n", *out, len(a.Kinds), len(a.Namespaces), a.Namespaces)
}
