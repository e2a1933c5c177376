package cincinnati

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
)

// node makes a node of version v, payload "img:v".
func node(v string, meta ...string) Node {
	n := Node{Version: v, Payload: "img:" + v}
	if len(meta) > 0 {
		n.Metadata = map[string]string{}
		for i := 0; i+1 < len(meta); i += 2 {
			n.Metadata[meta[i]] = meta[i+1]
		}
	}
	return n
}

func risk(name string, rules ...configv1.ClusterCondition) configv1.ConditionalUpdateRisk {
	if len(rules) == 0 {
		rules = []configv1.ClusterCondition{{Type: RuleAlways}}
	}
	return configv1.ConditionalUpdateRisk{Name: name, Message: name + " breaks things.", URL: "https://bugs/" + name, MatchingRules: rules}
}

func promql(q string) configv1.ClusterCondition {
	return configv1.ClusterCondition{Type: RulePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: q}}
}

// summary is what a test compares of a Result: versions, and each
// conditional one with its risks' names.
func summary(r *Result) []string {
	var out []string
	for _, u := range r.Updates {
		out = append(out, u.Version)
	}
	for _, u := range r.Conditional {
		var names []string
		for _, k := range u.Risks {
			names = append(names, k.Name)
		}
		out = append(out, u.Release.Version+"?"+strings.Join(names, ","))
	}
	return out
}

func TestUpdates(t *testing.T) {
	nodes := []Node{node("4.1.0", MetadataChannels, "stable-4.1,fast-4.1", MetadataURL, "https://errata/4.1.0"), node("4.1.1"), node("4.1.2"), node("4.1.3"), node("4.2.0")}
	for _, tc := range []struct {
		name    string
		g       Graph
		version string
		want    []string
		// warn are substrings of the warnings, in order.
		warn []string
		// err is a substring of the error, reason its reason.
		err, reason string
	}{
		{name: "edges, newest first", g: Graph{Nodes: nodes, Edges: []Edge{{0, 1}, {0, 3}, {0, 2}, {1, 2}}}, version: "4.1.0", want: []string{"4.1.3", "4.1.2", "4.1.1"}},
		{name: "none", g: Graph{Nodes: nodes, Edges: []Edge{{1, 2}}}, version: "4.1.0"},
		{name: "build metadata ignored", g: Graph{Nodes: nodes, Edges: []Edge{{0, 1}}}, version: "4.1.0+amd64", want: []string{"4.1.1"}},
		{name: "not in the channel", g: Graph{Nodes: nodes}, version: "4.0.9", reason: ReasonVersionNotFound, err: `the version the cluster runs, 4.0.9, is not in the "stable-4.1" channel`},
		{name: "conditional, and preferred to an edge", version: "4.1.0", g: Graph{Nodes: nodes, Edges: []Edge{{0, 1}, {0, 4}},
			ConditionalEdges: []ConditionalEdges{
				{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.2.0"}, {From: "4.1.1", To: "4.2.0"}}, Risks: []configv1.ConditionalUpdateRisk{risk("A"), risk("B")}},
				{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.1.3"}}, Risks: []configv1.ConditionalUpdateRisk{risk("C", promql("up == 0"))}},
			}},
			want: []string{"4.1.1", "4.2.0?A,B", "4.1.3?C"}},
		{name: "declared twice: left out", version: "4.1.0", g: Graph{Nodes: nodes, Edges: []Edge{{0, 3}},
			ConditionalEdges: []ConditionalEdges{
				{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.1.3"}}, Risks: []configv1.ConditionalUpdateRisk{risk("A")}},
				{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.1.3"}}, Risks: []configv1.ConditionalUpdateRisk{risk("B")}},
			}},
			warn: []string{"declares 2 conditional updates to 4.1.3: all left out"}},
		{name: "rules pruned; a risk left without any drops its update", version: "4.1.0", g: Graph{Nodes: nodes,
			ConditionalEdges: []ConditionalEdges{
				{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.1.2"}}, Risks: []configv1.ConditionalUpdateRisk{risk("A", configv1.ClusterCondition{Type: "Telepathy"}, promql("x"))}},
				{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.1.3"}}, Risks: []configv1.ConditionalUpdateRisk{risk("B", configv1.ClusterCondition{Type: "Telepathy"}, promql(" "))}},
			}},
			want: []string{"4.1.2?A"},
			warn: []string{`conditional update to 4.1.3: risk B has no matching rule this cluster can evaluate (rule 0: unknown type "Telepathy"; rule 1: type PromQL without a query)`}},
		{name: "a risk without a URL drops its update", version: "4.1.0", g: Graph{Nodes: nodes,
			ConditionalEdges: []ConditionalEdges{{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.1.2"}}, Risks: []configv1.ConditionalUpdateRisk{{Name: "A", Message: "m", MatchingRules: []configv1.ClusterCondition{{Type: RuleAlways}}}}}}},
			warn: []string{`conditional update to 4.1.2: risk 0 "A" lacks a name, message or URL`}},
		{name: "a repeated risk name kept once", version: "4.1.0", g: Graph{Nodes: nodes,
			ConditionalEdges: []ConditionalEdges{{Edges: []ConditionalEdge{{From: "4.1.0", To: "4.1.2"}}, Risks: []configv1.ConditionalUpdateRisk{risk("A"), risk("A")}}}},
			want: []string{"4.1.2?A"}},
		{name: "conditional edge to a missing node", version: "4.1.0", g: Graph{Nodes: nodes,
			ConditionalEdges: []ConditionalEdges{{Edges: []ConditionalEdge{{From: "4.1.1", To: "9.9.9"}, {From: "4.1.0", To: "4.3.0"}}, Risks: []configv1.ConditionalUpdateRisk{risk("A")}}}},
			reason: ReasonResponseInvalid, err: "conditional edges 0, edge 1 (4.1.0 -> 4.3.0): the graph has no node of version 4.3.0"},
		{name: "an invalid target node", version: "4.1.0", g: Graph{Nodes: []Node{node("4.1.0"), node("4.1.1", MetadataArchitecture, "arm64")}, Edges: []Edge{{0, 1}}},
			reason: ReasonResponseInvalid, err: `node 1 (4.1.1): metadata release.openshift.io/architecture "arm64": want multi`},
		{name: "empty channels metadata", version: "4.1.0", g: Graph{Nodes: []Node{node("4.1.0", MetadataChannels, " , ")}},
			reason: ReasonResponseInvalid, err: `node 0 (4.1.0): metadata io.openshift.upgrades.graph.release.channels " , " names no channel`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.g.Updates(tc.version, "stable-4.1")
			if tc.err != "" {
				var e *Error
				if !errors.As(err, &e) || e.Reason != tc.reason || !strings.Contains(e.Message, tc.err) {
					t.Fatalf("error %v, want %s containing %q", err, tc.reason, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summary(r)); diff != "" {
				t.Errorf("updates (-want +got)\n%s", diff)
			}
			if len(r.Warnings) != len(tc.warn) {
				t.Fatalf("warnings %q, want %q", r.Warnings, tc.warn)
			}
			for i, w := range tc.warn {
				if !strings.Contains(r.Warnings[i], w) {
					t.Errorf("warning %d %q, want it to contain %q", i, r.Warnings[i], w)
				}
			}
		})
	}
}

func TestUpdatesCurrent(t *testing.T) {
	g := Graph{Nodes: []Node{node("4.1.0", MetadataChannels, "stable-4.1,fast-4.1", MetadataURL, "https://errata/4.1.0")}}
	r, err := g.Updates("4.1.0", "fast-4.1")
	if err != nil {
		t.Fatal(err)
	}
	want := configv1.Release{Version: "4.1.0", Image: "img:4.1.0", URL: "https://errata/4.1.0", Channels: []string{"fast-4.1", "stable-4.1"}}
	if diff := cmp.Diff(want, r.Current); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestValidRules(t *testing.T) {
	valid, why := ValidRules([]configv1.ClusterCondition{{Type: RuleAlways, PromQL: &configv1.PromQLClusterCondition{PromQL: "1"}}, {Type: RulePromQL}, promql("up"), {Type: RuleAlways}})
	if diff := cmp.Diff([]configv1.ClusterCondition{promql("up"), {Type: RuleAlways}}, valid); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if why != "rule 0: type Always takes no promql; rule 1: type PromQL without a query" {
		t.Errorf("why %q", why)
	}
}
