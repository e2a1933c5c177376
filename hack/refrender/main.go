// Command refrender is the reference path for `render --list`, as a whole
// process: what the CVO does to decide what a release installs, written
// with library-go alone. For each manifest file of the payload, serially:
// render the manifests/ templates with text/template, parse with
// library-go's ParseManifests, keep what Include accepts for the default
// profile, feature set and major version 4, and print one line per
// included object. It has no positions, no graph, no overlays: it is the
// floor a render --list is measured against (docs/benchmarks.md), in time
// and in peak memory.
//
// Usage:
//
//	go run ./hack/refrender PAYLOAD_DIR
//
// May import: nothing.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"text/template"

	"github.com/openshift/api/features"
	lgmanifest "github.com/openshift/library-go/pkg/manifest"
	"k8s.io/apimachinery/pkg/util/sets"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: refrender PAYLOAD_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "refrender:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	gates := sets.New[string]()
	for _, g := range features.FeatureSets(4, features.SelfManaged, "").Enabled {
		gates.Insert(string(g.FeatureGateAttributes.Name))
	}
	profile, featureSet, major := "self-managed-high-availability", "Default", uint64(4)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, sub := range []string{"manifests", "release-manifests"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
				continue
			}
			name := filepath.Join(dir, sub, e.Name())
			raw, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			if sub == "manifests" {
				// The CVO renders its own manifests; one that does not
				// render is skipped, as render --list reports and skips it.
				tmpl, err := template.New(e.Name()).Parse(string(raw))
				if err != nil {
					continue
				}
				var b bytes.Buffer
				if err := tmpl.Execute(&b, map[string]any{"ReleaseImage": "x", "ClusterProfile": profile, "Images": map[string]string{}}); err != nil {
					continue
				}
				raw = b.Bytes()
			}
			ms, err := lgmanifest.ParseManifests(bytes.NewReader(raw))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for _, m := range ms {
				if m.Include(nil, &featureSet, &profile, nil, nil, gates, &major) == nil {
					fmt.Fprintln(out, m.String())
				}
			}
		}
	}
	return nil
}
