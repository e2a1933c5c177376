package updategraph

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/blang/semver/v4"
	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

// rel is a release of version v for amd64 whose previous versions are
// prev; metadata from key=value pairs in prev ("k=v").
func rel(v string, prev ...string) Release {
	r := Release{Version: semver.MustParse(v), Arch: "amd64", Payload: "reg/ocp@sha256:" + v, Digest: "sha256:" + v, Source: "reg/ocp:" + v, Metadata: map[string]string{}}
	for _, p := range prev {
		if k, val, ok := strings.Cut(p, "="); ok {
			r.Metadata[k] = val
			continue
		}
		r.Previous = append(r.Previous, p)
	}
	return r
}

// describe prints a graph as lines: "nodes: a b c", "a -> b", and
// "a -> b ? Risk1,Risk2".
func describe(g *cincinnati.Graph) []string {
	if g == nil {
		return nil
	}
	var vs []string
	for _, n := range g.Nodes {
		vs = append(vs, n.Version)
	}
	out := []string{"nodes: " + strings.Join(vs, " ")}
	for _, e := range g.Edges {
		out = append(out, g.Nodes[e[0]].Version+" -> "+g.Nodes[e[1]].Version)
	}
	var cond []string
	for _, ce := range g.ConditionalEdges {
		var names []string
		for _, r := range ce.Risks {
			names = append(names, r.Name)
		}
		for _, e := range ce.Edges {
			cond = append(cond, e.From+" -> "+e.To+" ? "+strings.Join(names, ","))
		}
	}
	sort.Strings(cond)
	return append(out, cond...)
}

func riskBlock(to, from, name string) Block {
	return Block{To: semver.MustParse(to), From: regexp.MustCompile(from), Risk: &configv1.ConditionalUpdateRisk{
		Name: name, Message: name + " hurts.", URL: "https://bugs/" + name,
		MatchingRules: []configv1.ClusterCondition{{Type: cincinnati.RuleAlways}}}}
}

func block(to, from string) Block {
	return Block{To: semver.MustParse(to), From: regexp.MustCompile(from)}
}

func channel(name string, versions ...string) Channel {
	c := Channel{Name: name}
	for _, v := range versions {
		c.Versions = append(c.Versions, semver.MustParse(v))
	}
	return c
}

func TestBuild(t *testing.T) {
	releases := []Release{
		rel("4.1.0"), rel("4.1.1", "4.1.0"), rel("4.1.2", "4.1.0", "4.1.1"), rel("4.1.3", "4.1.0", "4.1.1", "4.1.2", "4.0.9"),
		rel("4.2.0", "4.1.1", "4.1.2", "4.1.3"),
	}
	all := []string{"4.1.0", "4.1.1", "4.1.2", "4.1.3", "4.2.0"}
	for _, tc := range []struct {
		name     string
		releases []Release
		data     GraphData
		key      Key
		want     []string
		err      string
	}{
		{name: "edges from previous; versions not in the repository ignored", releases: releases, data: GraphData{Channels: []Channel{channel("stable-4.2", all...)}}, key: Key{"stable-4.2", "amd64"},
			want: []string{"nodes: 4.1.0 4.1.1 4.1.2 4.1.3 4.2.0", "4.1.0 -> 4.1.1", "4.1.0 -> 4.1.2", "4.1.0 -> 4.1.3", "4.1.1 -> 4.1.2", "4.1.1 -> 4.1.3", "4.1.1 -> 4.2.0", "4.1.2 -> 4.1.3", "4.1.2 -> 4.2.0", "4.1.3 -> 4.2.0"}},
		{name: "a channel holds only its releases and the updates between them", releases: releases, data: GraphData{Channels: []Channel{channel("fast-4.1", "4.1.0", "4.1.2", "4.2.0")}}, key: Key{"fast-4.1", "amd64"},
			want: []string{"nodes: 4.1.0 4.1.2 4.2.0", "4.1.0 -> 4.1.2", "4.1.2 -> 4.2.0"}},
		{name: "blocked and conditional", releases: releases, key: Key{"stable-4.2", "amd64"}, data: GraphData{
			Channels: []Channel{channel("stable-4.2", all...)},
			Blocks: []Block{
				block("4.1.3", `^4\.1\.0[+]`),
				riskBlock("4.2.0", `4[.]1[.][12][+]amd64`, "Bad"),
				riskBlock("4.2.0", `.*`, "Worse"),
				riskBlock("4.1.2", `4.1.1`, "Mild"),
				riskBlock("4.1.2", `9.9.9`, "Nobody"),
			}},
			want: []string{"nodes: 4.1.0 4.1.1 4.1.2 4.1.3 4.2.0", "4.1.0 -> 4.1.1", "4.1.0 -> 4.1.2", "4.1.1 -> 4.1.3", "4.1.2 -> 4.1.3",
				"4.1.1 -> 4.1.2 ? Mild", "4.1.1 -> 4.2.0 ? Bad,Worse", "4.1.2 -> 4.2.0 ? Bad,Worse", "4.1.3 -> 4.2.0 ? Worse"}},
		{name: "a block for another architecture does nothing", releases: releases, key: Key{"stable-4.2", "amd64"}, data: GraphData{
			Channels: []Channel{channel("stable-4.2", "4.1.0", "4.1.1")},
			Blocks:   []Block{block("4.1.1+arm64", ".*")}},
			want: []string{"nodes: 4.1.0 4.1.1", "4.1.0 -> 4.1.1"}},
		{name: "channels from the metadata too; edits from the metadata", key: Key{"candidate-4.1", "amd64"}, releases: []Release{
			rel("4.1.0", cincinnati.MetadataChannels+"=candidate-4.1"),
			rel("4.1.1", "4.1.0", cincinnati.MetadataChannels+"=candidate-4.1", MetaNextAdd+"=4.1.3"),
			rel("4.1.2", "4.1.0", "4.1.1", MetaPreviousRemove+"=4.1.1"),
			rel("4.1.3", "4.1.0", "4.1.2", MetaPreviousRemoveR+"=4[.]1[.]0"),
		}, data: GraphData{Channels: []Channel{channel("candidate-4.1", "4.1.2", "4.1.3")}},
			want: []string{"nodes: 4.1.0 4.1.1 4.1.2 4.1.3", "4.1.0 -> 4.1.1", "4.1.0 -> 4.1.2", "4.1.1 -> 4.1.3", "4.1.2 -> 4.1.3"}},
		{name: "architectures apart", key: Key{"c", "arm64"}, releases: []Release{
			rel("4.1.0"), rel("4.1.1", "4.1.0"),
			func() Release {
				r := rel("4.1.1", "4.1.0")
				r.Arch, r.Payload, r.Digest = "arm64", "reg/ocp@sha256:arm", "sha256:arm"
				return r
			}(),
		}, data: GraphData{Channels: []Channel{channel("c", "4.1.0", "4.1.1")}},
			want: []string{"nodes: 4.1.1"}},
		{name: "two images of one release contradict", key: Key{"c", "amd64"}, releases: []Release{
			rel("4.1.0"), func() Release {
				r := rel("4.1.0")
				r.Digest, r.Source = "sha256:other", "reg/ocp:4.1.0-again"
				return r
			}(),
		}, data: GraphData{Channels: []Channel{channel("c", "4.1.0")}},
			want: []string{"nodes: 4.1.0"},
			err:  "reg/ocp:4.1.0-again (sha256:other): version 4.1.0 for amd64, as reg/ocp:4.1.0 (sha256:4.1.0) already: left out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Build(tc.releases, &tc.data)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			got := describe(g.Get(tc.key.Channel, tc.key.Arch))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestBuildNodes: a node's metadata: the release's, without the edits,
// with its channels (sorted as the service sorts them) and digest; and
// what a cluster reads of it (Graph.Updates).
func TestBuildNodes(t *testing.T) {
	rs := []Release{rel("4.1.0", "url=https://errata/4.1.0", MetaNextAdd+"=4.1.1"), rel("4.1.1")}
	g, err := Build(rs, &GraphData{Channels: []Channel{channel("stable-4.1", "4.1.0", "4.1.1"), channel("candidate-4.2", "4.1.0"), channel("fast-4.1", "4.1.0")}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Key{{"candidate-4.2", "amd64"}, {"fast-4.1", "amd64"}, {"stable-4.1", "amd64"}}, g.Keys()); diff != "" {
		t.Errorf("keys (-want +got)\n%s", diff)
	}
	n := g.Get("stable-4.1", "amd64").Nodes[0]
	want := cincinnati.Node{Version: "4.1.0", Payload: "reg/ocp@sha256:4.1.0", Metadata: map[string]string{
		"url": "https://errata/4.1.0", cincinnati.MetadataChannels: "fast-4.1,stable-4.1,candidate-4.2", cincinnati.MetadataManifestRef: "sha256:4.1.0"}}
	if diff := cmp.Diff(want, n); diff != "" {
		t.Errorf("node (-want +got)\n%s", diff)
	}
	res, err := g.Get("stable-4.1", "amd64").Updates("4.1.0", "stable-4.1")
	if err != nil || len(res.Updates) != 1 || res.Updates[0].Image != "reg/ocp@sha256:4.1.1" {
		t.Errorf("Updates: %+v, %v", res, err)
	}
}

func TestReadGraphData(t *testing.T) {
	good := fstest.MapFS{
		"version":                          {Data: []byte("1.1.0\n")},
		"channels/stable-4.1.yaml":         {Data: []byte("name: stable-4.1\nversions:\n- 4.1.0\n- 4.1.1+amd64\n")},
		"channels/README.md":               {Data: []byte("not read")},
		"blocked-edges/4.1.1.yaml":         {Data: []byte("to: 4.1.1\nfrom: 4\\.1\\.0\n# a comment\n")},
		"blocked-edges/4.1.2-Risk.yml":     {Data: []byte("to: 4.1.2\nfrom: .*\nurl: https://bugs/1\nname: Risk\nmessage: |\n  It hurts.\nfixedIn: 4.1.3\nmatchingRules:\n- type: PromQL\n  promql:\n    promql: up == 0\n- type: Future\n")},
		"raw/metadata.json":                {Data: []byte("{}")},
		"blocked-edges/subdir/ignored.txt": {Data: []byte("x")},
	}
	d, err := ReadGraphData(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Channels) != 1 || d.Channels[0].Name != "stable-4.1" || len(d.Channels[0].Versions) != 2 || len(d.Blocks) != 2 {
		t.Fatalf("read %+v", d)
	}
	if r := d.Blocks[1].Risk; r == nil || r.Name != "Risk" || r.Message != "It hurts.\n" || len(r.MatchingRules) != 2 || d.Blocks[0].Risk != nil {
		t.Errorf("blocks %+v %+v", d.Blocks[0], d.Blocks[1].Risk)
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{name: "schema too new", files: map[string]string{"version": "1.2.0"}, want: []string{"version: graph-data schema 1.2.0: this reader understands 1.0 to 1.1"}},
		{name: "every file's errors", files: map[string]string{
			"channels/a.yaml":           "versions: [4.1.0]",
			"channels/b.yaml":           "name: Stable\n",
			"channels/c.yaml":           "name: c\nversions: [4.1]\n",
			"channels/d.yaml":           "name: d\n",
			"channels/g.yaml":           "name: d\n",
			"channels/f.yaml":           "name: c\nname: again\n",
			"channels/e.yaml":           "- a list",
			"blocked-edges/1.yaml":      "to: 4.1\nfrom: x",
			"blocked-edges/2.yaml":      "to: 4.1.0\nfrom: '('",
			"blocked-edges/3.yaml":      "to: 4.1.0\nfrom: x\nreason: typo",
			"blocked-edges/4.yaml":      "to: 4.1.0\nfrom: x\nname: Risk\nurl: https://u",
			"blocked-edges/5.yaml":      "to: 4.1.0\nfrom: x\nname: Risk\nurl: https://u\nmessage: m\nmatchingRules:\n- type: PromQL\n",
			"blocked-edges/6.yaml":      "to: 4.1.0\nfrom: x\nname: Risk\nurl: https://u\nmessage: m\nmatchingRules:\n- type: Future\n",
			"blocked-edges/7.yaml":      "from: x",
			"blocked-edges/8.yaml":      "to: [1\n",
			"blocked-edges/ok-too.yaml": "to: 4.1.0\nfrom: x",
		}, want: []string{
			"channels/a.yaml: name: required",
			`channels/b.yaml: name "Stable": want lower-case letters`,
			`channels/c.yaml: versions[0] "4.1": not a semantic version`,
			"channels/e.yaml: want a mapping",
			"channels/f.yaml: name: given twice",
			`channels/g.yaml: channel "d": also defined in channels/d.yaml`,
			`blocked-edges/1.yaml: to "4.1": not a semantic version`,
			`blocked-edges/2.yaml: from "(": not a regular expression`,
			"blocked-edges/3.yaml: reason: unknown field",
			"blocked-edges/4.yaml: message: required",
			"blocked-edges/4.yaml: matchingRules: required",
			"blocked-edges/5.yaml: matchingRules[0]: type PromQL without a query",
			"blocked-edges/6.yaml: matchingRules: no rule of a type clusters evaluate",
			"blocked-edges/7.yaml: to: required",
			"blocked-edges/8.yaml: yaml: line 1: did not find expected",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for n, data := range tc.files {
				fsys[n] = &fstest.MapFile{Data: []byte(data)}
			}
			_, err := ReadGraphData(fsys)
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("%d errors, want %d:\n%s", len(lines), len(tc.want), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("no error containing %q in:\n%s", w, err)
				}
			}
		})
	}
}
