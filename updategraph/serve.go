package updategraph

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

// The paths the handler answers, the OpenShift Update Service's.
var GraphPaths = []string{"/api/upgrades_info/v1/graph", "/api/upgrades_info/graph"}

// DefaultArch is the architecture of a request that names none (the
// service's default).
const DefaultArch = "amd64"

// Handler answers the update service's graph endpoint (GraphPaths) from
// the graphs current returns at each request (the caller may swap them):
// GET with the parameters channel (required), arch (default amd64), id
// and version (accepted, not used: the graph is the channel's, as the
// service's), and Accept application/json (or none, or a wildcard). A
// well-formed channel that has no graph answers an empty graph, as the
// service does (the cluster then says VersionNotFound). The errors are
// the service's JSON answers, {"kind": ..., "value": ...}: 400
// missing_params and invalid_params, 406 invalid_content_type, 405 for
// another method, 404 for another path, 503 failed_upstream_fetch before
// the first graphs are built.
func Handler(current func() *Graphs) http.Handler {
	mux := http.NewServeMux()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			answerError(w, http.StatusMethodNotAllowed, "method_not_allowed", "only GET and HEAD are served")
			return
		}
		if !acceptable(r.Header.Values("Accept")) {
			answerError(w, http.StatusNotAcceptable, "invalid_content_type", "invalid Content-Type requested")
			return
		}
		q := r.URL.Query()
		channel, arch := q.Get("channel"), q.Get("arch")
		switch {
		case channel == "":
			answerError(w, http.StatusBadRequest, "missing_params", "mandatory client parameters missing: channel")
			return
		case !cincinnati.ChannelPattern.MatchString(channel):
			answerError(w, http.StatusBadRequest, "invalid_params", fmt.Sprintf("invalid client parameters: channel '%s' does not match regex '%s'", channel, cincinnati.ChannelPattern))
			return
		case arch == "":
			arch = DefaultArch
		case !cincinnati.ArchPattern.MatchString(arch):
			answerError(w, http.StatusBadRequest, "invalid_params", fmt.Sprintf("invalid client parameters: arch '%s' does not match regex '%s'", arch, cincinnati.ArchPattern))
			return
		}
		gs := current()
		if gs == nil {
			answerError(w, http.StatusServiceUnavailable, "failed_upstream_fetch", "the graph is not built yet")
			return
		}
		g := gs.Get(channel, arch)
		if g == nil {
			g = &cincinnati.Graph{SchemaVersion: 1, Nodes: []cincinnati.Node{}, Edges: []cincinnati.Edge{}, ConditionalEdges: []cincinnati.ConditionalEdges{}}
		}
		w.Header().Set("Content-Type", cincinnati.MediaType)
		_ = json.NewEncoder(w).Encode(g)
	})
	for _, p := range GraphPaths {
		mux.Handle(p, h)
	}
	return mux
}

// acceptable reports whether the Accept header values allow the graph's
// JSON.
func acceptable(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.TrimSpace(mt) {
			case "*", "*/*", "application/*", cincinnati.MediaType, "application/vnd.redhat.cincinnati.v1+json":
				return true
			}
		}
	}
	return false
}

// answerError writes the service's error answer.
func answerError(w http.ResponseWriter, code int, kind, value string) {
	w.Header().Set("Content-Type", cincinnati.MediaType)
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"kind": kind, "value": value})
}
