package cincinnati

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
)

// Graph is an update service's answer: the releases of a channel for one
// architecture and the updates between them. Its JSON is the service's.
type Graph struct {
	// SchemaVersion is the graph format's version ("version" in the JSON;
	// 1 today, 0 when absent).
	SchemaVersion int `json:"version,omitempty"`
	// Nodes are the releases.
	Nodes []Node `json:"nodes"`
	// Edges are the recommended updates: Nodes indices, from and to.
	Edges []Edge `json:"edges"`
	// ConditionalEdges are updates recommended only to the clusters their
	// risks do not apply to.
	ConditionalEdges []ConditionalEdges `json:"conditionalEdges"`
}

// Node is one release.
type Node struct {
	// Version is its semantic version.
	Version string `json:"version"`
	// Payload is its release image, by digest.
	Payload string `json:"payload"`
	// Metadata is free-form: "url" (errata), the channels it is in
	// (MetadataChannels, comma-separated), its manifest digest, ...
	Metadata map[string]string `json:"metadata"`
}

// Edge is an update from the node at index [0] to the node at [1]; its
// JSON is the two-number array.
type Edge [2]int

// ConditionalEdges are updates that share their risks.
type ConditionalEdges struct {
	// Edges name the updates by version.
	Edges []ConditionalEdge `json:"edges"`
	// Risks are what may go wrong, each with the matching rules that say
	// whether it applies to a cluster.
	Risks []configv1.ConditionalUpdateRisk `json:"risks"`
}

// ConditionalEdge is an update from version From to version To.
type ConditionalEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Node metadata keys the CVO reads.
const (
	// MetadataChannels lists the channels a release is in, comma-separated.
	MetadataChannels = "io.openshift.upgrades.graph.release.channels"
	// MetadataManifestRef is the digest of the release image's manifest.
	MetadataManifestRef = "io.openshift.upgrades.graph.release.manifestref"
	// MetadataURL links to the release's errata.
	MetadataURL = "url"
	// MetadataArchitecture is "multi" for a multi-architecture release.
	MetadataArchitecture = "release.openshift.io/architecture"
)

// Limits bound what Parse reads. A zero field takes DefaultLimits' value.
type Limits struct {
	// MaxBytes bounds the JSON.
	MaxBytes int64
	// MaxNodes, MaxEdges bound the nodes and edges; MaxConditionalEdges
	// the conditional edges (each from-to pair, over all groups) and
	// MaxRisks the risks (over all groups).
	MaxNodes, MaxEdges, MaxConditionalEdges, MaxRisks int
}

// DefaultLimits are far above a real channel's graph (about a thousand
// nodes, tens of thousands of edges, a few megabytes).
func DefaultLimits() Limits {
	return Limits{MaxBytes: 64 << 20, MaxNodes: 100_000, MaxEdges: 2_000_000, MaxConditionalEdges: 1_000_000, MaxRisks: 100_000}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = d.MaxNodes
	}
	if l.MaxEdges <= 0 {
		l.MaxEdges = d.MaxEdges
	}
	if l.MaxConditionalEdges <= 0 {
		l.MaxConditionalEdges = d.MaxConditionalEdges
	}
	if l.MaxRisks <= 0 {
		l.MaxRisks = d.MaxRisks
	}
	return l
}

// invalid returns a ResponseInvalid error.
func invalid(format string, args ...any) *Error {
	return &Error{Reason: ReasonResponseInvalid, Message: fmt.Sprintf(format, args...)}
}

// Parse reads a graph from r within lim and checks it (Validate). The
// graph is read as a stream: memory follows the counts lim allows, never
// more. An error is an *Error with reason ResponseInvalid naming the node,
// edge or conditional edge (by index) and what is wrong, or
// ResponseFailed when r failed.
func Parse(r io.Reader, lim Limits) (*Graph, error) {
	lim = lim.withDefaults()
	cr := &countingReader{r: io.LimitReader(r, lim.MaxBytes+1)}
	g, err := decode(json.NewDecoder(cr), lim)
	if cr.n > lim.MaxBytes {
		return nil, invalid("the graph is larger than %d bytes", lim.MaxBytes)
	}
	if err != nil && cr.err != nil {
		return nil, &Error{Reason: ReasonResponseFailed, Message: "reading the graph: " + cr.err.Error(), Err: cr.err}
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, &Error{Reason: ReasonResponseInvalid, Message: "the graph is not valid JSON: " + err.Error(), Err: err}
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// countingReader counts what it reads and keeps a read error.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// decode reads the graph object, counting nodes, edges and risks as they
// come.
func decode(dec *json.Decoder, lim Limits) (*Graph, error) {
	g := &Graph{}
	if err := delim(dec, '{', "the graph"); err != nil {
		return nil, err
	}
	conditional, risks := 0, 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "version":
			if err := dec.Decode(&g.SchemaVersion); err != nil {
				return nil, fmt.Errorf("version: %w", err)
			}
		case "nodes":
			err = array(dec, "nodes", lim.MaxNodes, func(i int) error {
				var n Node
				if err := dec.Decode(&n); err != nil {
					return fmt.Errorf("node %d: %w", i, err)
				}
				g.Nodes = append(g.Nodes, n)
				return nil
			})
		case "edges":
			err = array(dec, "edges", lim.MaxEdges, func(i int) error {
				var e []int
				if err := dec.Decode(&e); err != nil {
					return fmt.Errorf("edge %d: %w", i, err)
				}
				if len(e) != 2 {
					return invalid("edge %d: %v: want [from, to], two node indices", i, e)
				}
				g.Edges = append(g.Edges, Edge{e[0], e[1]})
				return nil
			})
		case "conditionalEdges":
			err = array(dec, "conditionalEdges", lim.MaxConditionalEdges, func(i int) error {
				var ce ConditionalEdges
				if err := dec.Decode(&ce); err != nil {
					return fmt.Errorf("conditional edges %d: %w", i, err)
				}
				conditional += len(ce.Edges)
				risks += len(ce.Risks)
				if conditional > lim.MaxConditionalEdges {
					return invalid("more than %d conditional edges", lim.MaxConditionalEdges)
				}
				if risks > lim.MaxRisks {
					return invalid("more than %d risks", lim.MaxRisks)
				}
				g.ConditionalEdges = append(g.ConditionalEdges, ce)
				return nil
			})
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := delim(dec, '}', "the graph"); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("data after the graph object")
	}
	return g, nil
}

// array reads a JSON array (null is empty) of at most max elements,
// calling each for every element.
func array(dec *json.Decoder, name string, max int, each func(i int) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return invalid("%s: want an array", name)
	}
	for i := 0; dec.More(); i++ {
		if i >= max {
			return invalid("more than %d %s", max, name)
		}
		if err := each(i); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

func delim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return invalid("%s: want %q, found %v", what, want, tok)
	}
	return nil
}

// Validate checks what the protocol requires of a graph: every node has a
// semantic version no other node has, and a payload; every edge joins two
// nodes that exist. Conditional edges name versions; Updates checks the
// ones it uses. The error is an *Error (ResponseInvalid) naming the node
// or edge.
func (g *Graph) Validate() error {
	_, err := g.versions()
	if err != nil {
		return err
	}
	for i, e := range g.Edges {
		for _, n := range e {
			if n < 0 || n >= len(g.Nodes) {
				return invalid("edge %d [%d, %d]: node %d does not exist (the graph has %d nodes)", i, e[0], e[1], n, len(g.Nodes))
			}
		}
	}
	return nil
}

// versions parses the nodes' versions, checking them.
func (g *Graph) versions() ([]semver.Version, error) {
	vs := make([]semver.Version, len(g.Nodes))
	seen := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		v, err := semver.Parse(n.Version)
		if err != nil {
			return nil, invalid("node %d: version %q is not a semantic version: %v", i, n.Version, err)
		}
		if n.Payload == "" {
			return nil, invalid("node %d (%s): no payload", i, n.Version)
		}
		// Build metadata does not make another version (semver).
		k := v
		k.Build = nil
		key := k.String()
		if j, ok := seen[key]; ok {
			return nil, invalid("nodes %d and %d: both are version %s", j, i, n.Version)
		}
		seen[key] = i
		vs[i] = v
	}
	return vs, nil
}
