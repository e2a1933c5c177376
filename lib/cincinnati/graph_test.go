package cincinnati

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	small := Limits{MaxBytes: 1 << 20, MaxNodes: 3, MaxEdges: 2, MaxConditionalEdges: 2, MaxRisks: 1}
	for _, tc := range []struct {
		name string
		json string
		lim  Limits
		// want is a substring of the error, "" for none.
		want  string
		nodes int
	}{
		{name: "good", json: `{"version":1,"nodes":[{"version":"4.1.0","payload":"r@sha256:a"},{"version":"4.1.1","payload":"r@sha256:b","metadata":{"url":"https://x"}}],"edges":[[0,1]],"conditionalEdges":[]}`, nodes: 2},
		{name: "null lists", json: `{"nodes":null,"edges":null,"conditionalEdges":null}`},
		{name: "unknown fields skipped", json: `{"extra":{"a":[1,2]},"nodes":[{"version":"1.0.0","payload":"p"}],"edges":[]}`, nodes: 1},
		{name: "not an object", json: `[1]`, want: "ResponseInvalid: the graph: want"},
		{name: "not JSON", json: `{"nodes":[}`, want: "not valid JSON"},
		{name: "trailing data", json: `{"nodes":[]} {}`, want: "data after the graph object"},
		{name: "edge of three", json: `{"nodes":[{"version":"1.0.0","payload":"p"}],"edges":[[0,0,0]]}`, want: "edge 0: [0 0 0]: want [from, to]"},
		{name: "edge to a missing node", json: `{"nodes":[{"version":"1.0.0","payload":"p"},{"version":"1.0.1","payload":"q"}],"edges":[[0,1],[1,7]]}`, want: "edge 1 [1, 7]: node 7 does not exist (the graph has 2 nodes)"},
		{name: "negative edge", json: `{"nodes":[{"version":"1.0.0","payload":"p"}],"edges":[[-1,0]]}`, want: "edge 0 [-1, 0]: node -1 does not exist"},
		{name: "node not semver", json: `{"nodes":[{"version":"1.0.0","payload":"p"},{"version":"4.1","payload":"q"}]}`, want: `node 1: version "4.1" is not a semantic version`},
		{name: "node without payload", json: `{"nodes":[{"version":"1.0.0"}]}`, want: "node 0 (1.0.0): no payload"},
		{name: "duplicate version", json: `{"nodes":[{"version":"1.0.0","payload":"p"},{"version":"1.0.0+amd64","payload":"q"}]}`, want: "nodes 0 and 1: both are version 1.0.0+amd64"},
		{name: "metadata not a string", json: `{"nodes":[{"version":"1.0.0","payload":"p","metadata":{"url":3}}]}`, want: "node 0: json: cannot unmarshal number"},
		{name: "too many nodes", json: `{"nodes":[{"version":"1.0.0","payload":"p"},{"version":"1.0.1","payload":"p"},{"version":"1.0.2","payload":"p"},{"version":"1.0.3","payload":"p"}]}`, lim: small, want: "more than 3 nodes"},
		{name: "too many edges", json: `{"nodes":[{"version":"1.0.0","payload":"p"}],"edges":[[0,0],[0,0],[0,0]]}`, lim: small, want: "more than 2 edges"},
		{name: "too many conditional edges", json: `{"nodes":[],"conditionalEdges":[{"edges":[{"from":"1.0.0","to":"1.0.1"},{"from":"1.0.0","to":"1.0.2"},{"from":"1.0.0","to":"1.0.3"}],"risks":[]}]}`, lim: small, want: "more than 2 conditional edges"},
		{name: "too many risks", json: `{"nodes":[],"conditionalEdges":[{"edges":[],"risks":[{"name":"A"},{"name":"B"}]}]}`, lim: small, want: "more than 1 risks"},
		{name: "too large", json: `{"nodes":[],"pad":"` + strings.Repeat("x", 100) + `"}`, lim: Limits{MaxBytes: 50}, want: "the graph is larger than 50 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Parse(strings.NewReader(tc.json), tc.lim)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(g.Nodes) != tc.nodes {
					t.Errorf("%d nodes, want %d", len(g.Nodes), tc.nodes)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Reason != ReasonResponseInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ResponseInvalid containing %q", err, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	const id = "5b0d3c8f-3a51-4d2a-9f6e-8e1c3f6b2a10"
	good := Query{Channel: "stable-4.22", Arch: "amd64", ID: id, Version: "4.22.0"}
	for _, tc := range []struct {
		name     string
		upstream string
		q        func(*Query)
		want     string // reason, or the URL
	}{
		{name: "good", upstream: "https://example.com/graph?x=1", want: "https://example.com/graph?arch=amd64&channel=stable-4.22&id=" + id + "&version=4.22.0&x=1"},
		{name: "no upstream", want: ReasonNoUpstream},
		{name: "not a URL", upstream: "::", want: ReasonInvalidURI},
		{name: "no scheme", upstream: "example.com/graph", want: ReasonInvalidURI},
		{name: "bad id", upstream: "https://e", q: func(q *Query) { q.ID = "x" }, want: ReasonInvalidID},
		{name: "no arch", upstream: "https://e", q: func(q *Query) { q.Arch = "" }, want: ReasonNoArchitecture},
		{name: "no version", upstream: "https://e", q: func(q *Query) { q.Version = "" }, want: ReasonNoCurrentVersion},
		{name: "no channel", upstream: "https://e", q: func(q *Query) { q.Channel = "" }, want: ReasonNoChannel},
		{name: "version not semver", upstream: "https://e", q: func(q *Query) { q.Version = "4.22" }, want: ReasonInvalidCurrentVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := good
			if tc.q != nil {
				tc.q(&q)
			}
			u, err := Check(tc.upstream, q)
			got := ""
			if err != nil {
				got = err.(*Error).Reason
			} else {
				got = u.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestRetrievedCondition(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		err                     error
		status, reason, message string
	}{
		{name: "ok", status: "True"},
		{name: "remote", err: &Error{Reason: ReasonRemoteFailed, Message: "dial: refused"}, status: "False", reason: ReasonRemoteFailed, message: "Unable to retrieve available updates: dial: refused"},
		{name: "no channel", err: &Error{Reason: ReasonNoChannel, Message: "The update channel is not set."}, status: "False", reason: ReasonNoChannel, message: "The update channel is not set."},
		{name: "other", err: errors.New("boom"), status: "False", reason: "Unknown", message: "Unable to retrieve available updates: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := RetrievedCondition(tc.err)
			got := []string{string(c.Type), string(c.Status), c.Reason, c.Message}
			if diff := cmp.Diff([]string{"RetrievedUpdates", tc.status, tc.reason, tc.message}, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
