//go:build e2e

package updategraph_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/payload-apply/payload-apply/internal/genupgrade"
	"github.com/payload-apply/payload-apply/internal/updatefixture"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/registry"
	"github.com/payload-apply/payload-apply/lib/safefs"
	testregistry "github.com/payload-apply/payload-apply/test/registry"
	"github.com/payload-apply/payload-apply/updategraph"
)

func TestMain(m *testing.M) {
	os.Exit(testregistry.Run(m))
}

// graphData is the tests' graph-data: two channels, a blocked edge, and
// two conditional ones.
var graphData = map[string]string{
	"version":                          "1.1.0\n",
	"channels/stable-4.22.yaml":        "name: stable-4.22\nversions:\n" + versions("4.22.", 0, 20),
	"channels/fast-4.23.yaml":          "name: fast-4.23\nversions:\n" + versions("4.22.", 10, 20) + "- 4.23.0\n- 4.23.1\n",
	"blocked-edges/4.22.5.yaml":        "to: 4.22.5\nfrom: .*\n",
	"blocked-edges/4.22.19-Risky.yaml": "to: 4.22.19\nfrom: 4[.]22[.](1[0-8])[+].*\nurl: https://bugs.example.com/1\nname: Risky\nmessage: |\n  Risky hurts some clusters.\nmatchingRules:\n- type: PromQL\n  promql:\n    promql: max(up) == bool 1\n",
	"blocked-edges/4.23.0-Minor.yaml":  "to: 4.23.0\nfrom: .*\nurl: https://bugs.example.com/2\nname: Minor\nmessage: Every cluster.\nmatchingRules:\n- type: Always\n",
}

func versions(prefix string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "- %s%d\n", prefix, i)
	}
	return b.String()
}

// TestRegistryGraph: the graph of 22 releases pushed to a real registry
// (with, beside them, a component image, a signature tag, a release whose
// label contradicts its metadata and a second image of one version), read
// once by digest, with the graph-data above: every edge the metadata
// gives, less the blocked ones, the conditional ones with their risks.
func TestRegistryGraph(t *testing.T) {
	r := testregistry.Shared(t)
	c := registry.New(registry.Options{Keychain: registry.DefaultKeychain(r.AuthFile, nil), RootCAs: r.CertPool})
	ctx := context.Background()
	repo := r.Host + "/ocp/release"
	dir := t.TempDir()
	start := time.Now()
	dirs, err := updatefixture.Write("../payload", filepath.Join(dir, "releases"))
	if err != nil {
		t.Fatal(err)
	}
	if err := updatefixture.Push(ctx, c, repo, dirs); err != nil {
		t.Fatal(err)
	}
	// Beside the releases: a component image (no release label), a
	// signature tag, a release whose label says another version than its
	// metadata, and another image of 4.22.3.
	push := func(tag string, build func() (string, error)) {
		t.Helper()
		d, err := build()
		if err != nil {
			t.Fatal(err)
		}
		var img = must(image.Build(os.DirFS(d), image.BuildOptions{Version: strings.TrimSuffix(tag, "-respin")}))
		if tag == "bad" {
			img = must(image.Build(os.DirFS(d), image.BuildOptions{Version: "4.22.99"}))
		}
		ref := must(c.ParseReference(repo + ":" + tag))
		if _, err := c.Push(ctx, ref, img); err != nil {
			t.Fatal(err)
		}
	}
	push("bad", func() (string, error) {
		d := filepath.Join(dir, "bad")
		return d, genupgrade.Release("../payload", d, genupgrade.Metadata{Version: "4.22.98"})
	})
	push("4.22.3-respin", func() (string, error) {
		d := filepath.Join(dir, "respin")
		return d, genupgrade.Release("../payload", d, genupgrade.Metadata{Version: "4.22.3", Metadata: map[string]string{"respin": "true"}})
	})
	for _, tag := range []string{"4.22.0-x86_64-etcd", "sha256-0123.sig"} {
		if _, err := c.Push(ctx, must(c.ParseReference(repo+":"+tag)), must(random.Image(512, 1))); err != nil {
			t.Fatal(err)
		}
	}
	pushed := time.Since(start)

	rd := updategraph.NewReader(c)
	start = time.Now()
	rels, readErr := rd.Repository(ctx, repo)
	read := time.Since(start)
	if len(rels) != 23 || readErr == nil || !strings.Contains(readErr.Error(), repo+":bad: release-manifests/release-metadata: version 4.22.98, but the image's io.openshift.release label says 4.22.99") {
		t.Fatalf("%d releases (want 23: 22 and a respin), error %v", len(rels), readErr)
	}
	reads := rd.Reads()
	if reads != 25 {
		t.Errorf("%d images read, want 25 (the signature tag skipped)", reads)
	}
	data, err := updategraph.ReadGraphData(dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	g, err := updategraph.Build(rels, data)
	if err == nil || !strings.Contains(err.Error(), repo+":4.22.3-respin (sha256:") || !strings.Contains(err.Error(), "version 4.22.3 for amd64, as "+repo+":4.22.3 (sha256:") {
		t.Errorf("Build: %v, want the respin named", err)
	}

	for _, tc := range []struct {
		channel      string
		nodes, edges int
		conditional  map[string]int // risk names to edges
		absent       []string       // edges removed
		present      []string
		risky, minor int
	}{
		// 190 pairs of 4.22 releases, less 5 into 4.22.5, less 9 into 4.22.19 now conditional.
		{channel: "stable-4.22", nodes: 20, edges: 176, conditional: map[string]int{"Risky": 9},
			absent: []string{"4.22.0 -> 4.22.5", "4.22.4 -> 4.22.5", "4.22.10 -> 4.22.19"}, present: []string{"4.22.0 -> 4.22.19", "4.22.5 -> 4.22.6", "4.22.0 -> 4.22.1"}},
		// 45 pairs of 4.22.10-19 less 9, 4.23.1's 4; 4.23.0's 5 conditional.
		{channel: "fast-4.23", nodes: 12, edges: 40, conditional: map[string]int{"Risky": 9, "Minor": 5},
			absent: []string{"4.22.15 -> 4.23.0"}, present: []string{"4.23.0 -> 4.23.1", "4.22.19 -> 4.23.1"}},
	} {
		gr := g.Get(tc.channel, "amd64")
		if gr == nil {
			t.Fatalf("no graph of %s", tc.channel)
		}
		edges := map[string]bool{}
		for _, e := range gr.Edges {
			edges[gr.Nodes[e[0]].Version+" -> "+gr.Nodes[e[1]].Version] = true
		}
		if len(gr.Nodes) != tc.nodes || len(gr.Edges) != tc.edges {
			t.Errorf("%s: %d nodes, %d edges; want %d, %d", tc.channel, len(gr.Nodes), len(gr.Edges), tc.nodes, tc.edges)
		}
		for _, e := range tc.absent {
			if edges[e] {
				t.Errorf("%s: edge %s, want it blocked", tc.channel, e)
			}
		}
		for _, e := range tc.present {
			if !edges[e] {
				t.Errorf("%s: no edge %s", tc.channel, e)
			}
		}
		got := map[string]int{}
		for _, ce := range gr.ConditionalEdges {
			if len(ce.Risks) != 1 {
				t.Errorf("%s: conditional edges with %d risks, want 1", tc.channel, len(ce.Risks))
				continue
			}
			got[ce.Risks[0].Name] += len(ce.Edges)
			if ce.Risks[0].Name == "Risky" && (ce.Risks[0].URL != "https://bugs.example.com/1" || ce.Risks[0].Message != "Risky hurts some clusters.\n" || ce.Risks[0].MatchingRules[0].PromQL.PromQL != "max(up) == bool 1") {
				t.Errorf("%s: risk %+v", tc.channel, ce.Risks[0])
			}
		}
		for name, n := range tc.conditional {
			if got[name] != n {
				t.Errorf("%s: %d conditional edges with %s, want %d", tc.channel, got[name], name, n)
			}
		}
		// What a cluster at 4.22.12 reads of it.
		res, err := gr.Updates("4.22.12", tc.channel)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Conditional) == 0 || res.Conditional[0].Release.Version != "4.22.19" || !strings.HasPrefix(res.Conditional[0].Release.Image, repo+"@sha256:") {
			t.Errorf("%s: conditional updates of 4.22.12: %+v", tc.channel, res.Conditional)
		}
		for _, u := range res.Updates {
			if u.Version == "4.22.19" || string(u.URL) != "https://errata.example.com/"+u.Version || u.Channels[len(u.Channels)-1] != "stable-4.22" {
				t.Errorf("%s: update %+v", tc.channel, u)
			}
		}
	}

	// Again: every image is remembered by its digest.
	start = time.Now()
	if _, err := rd.Repository(ctx, repo); err == nil || !strings.Contains(err.Error(), repo+":bad: release-manifests/release-metadata: version 4.22.98") {
		t.Errorf("the bad release is not reported again: %v", err)
	}
	if rd.Reads() != reads {
		t.Errorf("reading the repository again read %d images, want none", rd.Reads()-reads)
	}
	t.Logf("pushed 26 images in %s; read 25 in %s, again (resolving the tags only) in %s", pushed.Round(time.Millisecond), read.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// dataDir writes graphData to a directory.
func dataDir(t *testing.T) safefs.Dir {
	t.Helper()
	dir := t.TempDir()
	for name, data := range graphData {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return safefs.Dir(dir)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
