// Package requests counts the requests a Kubernetes client sends, by verb,
// as kube-apiserver would name them: a GET of one object, a LIST or WATCH
// of a collection, a discovery read, and the writes POST, PUT, PATCH and
// DELETE.
//
// May import: nothing.
package requests

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Verbs, as Counts names them.
const (
	Get       = "GET"
	List      = "LIST"
	Watch     = "WATCH"
	Discovery = "DISCOVERY"
	Post      = "POST"
	Put       = "PUT"
	Patch     = "PATCH"
	Delete    = "DELETE"
	Other     = "OTHER"
)

// Counter counts requests. The zero value is ready; it is safe for
// concurrent use.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int64
}

// Wrap makes every client built from cfg count its requests in c (after
// any transport wrapper cfg has already).
func (c *Counter) Wrap(cfg *rest.Config) {
	prev := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if prev != nil {
			rt = prev(rt)
		}
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			c.Add(VerbOf(req), 1)
			return rt.RoundTrip(req)
		})
	}
}

// Add counts n requests of verb.
func (c *Counter) Add(verb string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int64{}
	}
	c.counts[verb] += n
}

// Counts returns the counts so far by verb; verbs never sent are absent.
func (c *Counter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Reads returns the number of requests that change nothing: GET, LIST,
// WATCH, DISCOVERY and OTHER.
func (c *Counter) Reads() int64 {
	var n int64
	for verb, v := range c.Counts() {
		if !IsWrite(verb) {
			n += v
		}
	}
	return n
}

// Writes returns the number of POST, PUT, PATCH and DELETE requests
// (dry-run ones included).
func (c *Counter) Writes() int64 {
	var n int64
	for verb, v := range c.Counts() {
		if IsWrite(verb) {
			n += v
		}
	}
	return n
}

// IsWrite reports whether verb is one of POST, PUT, PATCH and DELETE.
func IsWrite(verb string) bool {
	switch verb {
	case Post, Put, Patch, Delete:
		return true
	}
	return false
}

// VerbOf names a request to kube-apiserver: a GET of a resource path is
// GET when it names one object (or a subresource of one), LIST or WATCH
// (?watch=true) when it names a collection; any other GET (/api, /apis,
// /apis/GROUP[/VERSION], /openapi, /version) is DISCOVERY.
func VerbOf(req *http.Request) string {
	switch req.Method {
	case http.MethodPost:
		return Post
	case http.MethodPut:
		return Put
	case http.MethodPatch:
		return Patch
	case http.MethodDelete:
		return Delete
	case http.MethodGet, http.MethodHead:
	default:
		return Other
	}
	parts := resourceParts(req.URL.Path)
	switch {
	case parts == 0:
		return Discovery
	case parts == 1:
		if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
			return Watch
		}
		return List
	}
	return Get
}

// resourceParts returns how many parts follow the group and version of a
// resource path, not counting "namespaces/NS/": 1 for a collection, 2 or
// more for an object or its subresource, 0 for anything else.
func resourceParts(path string) int {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		segs = segs[3:]
	default:
		return 0
	}
	// namespaces/NS/RESOURCE...: a namespaced resource; namespaces,
	// namespaces/NS and its status and finalize are the Namespace
	// collection, object and subresources.
	if len(segs) >= 3 && segs[0] == "namespaces" && segs[2] != "status" && segs[2] != "finalize" {
		segs = segs[2:]
	}
	return len(segs)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
