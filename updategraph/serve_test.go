package updategraph

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

func TestHandler(t *testing.T) {
	g, err := Build([]Release{rel("4.1.0"), rel("4.1.1", "4.1.0")}, &GraphData{Channels: []Channel{channel("stable-4.1", "4.1.0", "4.1.1")}})
	if err != nil {
		t.Fatal(err)
	}
	var current *Graphs
	h := Handler(func() *Graphs { return current })
	for _, tc := range []struct {
		name, method, target, accept string
		built                        bool
		code                         int
		body                         string
		nodes                        int
	}{
		{name: "not built yet", target: "/api/upgrades_info/v1/graph?channel=stable-4.1", code: 503, body: `{"kind":"failed_upstream_fetch"`},
		{name: "a graph", built: true, target: "/api/upgrades_info/v1/graph?channel=stable-4.1&arch=amd64&version=4.1.0&id=x", accept: "application/json", code: 200, nodes: 2},
		{name: "the unversioned path, default arch, wildcard", built: true, target: "/api/upgrades_info/graph?channel=stable-4.1", accept: "*/*", code: 200, nodes: 2},
		{name: "an unknown channel: an empty graph", built: true, target: "/api/upgrades_info/v1/graph?channel=stable-9.9", code: 200, body: `{"version":1,"nodes":[],"edges":[],"conditionalEdges":[]}`},
		{name: "another arch: an empty graph", built: true, target: "/api/upgrades_info/v1/graph?channel=stable-4.1&arch=s390x", code: 200, nodes: 0},
		{name: "no channel", built: true, target: "/api/upgrades_info/v1/graph?arch=amd64", code: 400, body: `{"kind":"missing_params","value":"mandatory client parameters missing: channel"}`},
		{name: "a bad channel", built: true, target: "/api/upgrades_info/v1/graph?channel=Stable_4", code: 400, body: `"kind":"invalid_params","value":"invalid client parameters: channel 'Stable_4' does not match regex`},
		{name: "a bad arch", built: true, target: "/api/upgrades_info/v1/graph?channel=stable-4.1&arch=x86-64", code: 400, body: `"value":"invalid client parameters: arch 'x86-64' does not match regex`},
		{name: "not JSON", built: true, target: "/api/upgrades_info/v1/graph?channel=stable-4.1", accept: "text/html", code: 406, body: `"kind":"invalid_content_type"`},
		{name: "POST", built: true, method: "POST", target: "/api/upgrades_info/v1/graph?channel=stable-4.1", code: 405},
		{name: "another path", built: true, target: "/graph?channel=stable-4.1", code: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current = nil
			if tc.built {
				current = g
			}
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, tc.target, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.body) {
				t.Fatalf("%d %s, want %d containing %s", w.Code, w.Body, tc.code, tc.body)
			}
			if tc.code == 200 {
				got, err := cincinnati.Parse(w.Body, cincinnati.Limits{})
				if err != nil || len(got.Nodes) != tc.nodes {
					t.Errorf("graph %+v, %v; want %d nodes", got, err, tc.nodes)
				}
			}
		})
	}
}
