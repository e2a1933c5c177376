package updategraph

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

// Release is a release image as the graph needs it: what its
// release-metadata says and where it is.
type Release struct {
	// Version is the release-metadata's version.
	Version semver.Version
	// Arch is the image's architecture ("amd64", "arm64", ...), "multi"
	// for an image index.
	Arch string
	// Payload is the image by digest, as clusters pull it.
	Payload string
	// Digest is the image's manifest digest ("sha256:...").
	Digest string
	// Previous and Next are the versions the metadata says update into
	// this one, and that this one updates into.
	Previous, Next []string
	// Metadata is the release-metadata's "metadata" (strings only).
	Metadata map[string]string
	// Source says where it was read (a tag, a directory), for messages.
	Source string
}

// Release metadata keys that edit edges (Cincinnati's edge-add-remove):
// comma-separated versions, "*" for all (previous.remove), or a regular
// expression (previous.remove_regex). They are consumed: the graph's nodes
// do not carry them.
const (
	metaPrefix          = "io.openshift.upgrades.graph."
	MetaPreviousAdd     = metaPrefix + "previous.add"
	MetaPreviousRemove  = metaPrefix + "previous.remove"
	MetaPreviousRemoveR = metaPrefix + "previous.remove_regex"
	MetaNextAdd         = metaPrefix + "next.add"
	MetaNextRemove      = metaPrefix + "next.remove"
)

// Key names one graph: a channel for an architecture.
type Key struct{ Channel, Arch string }

// Graphs are the graphs of every channel and architecture.
type Graphs struct {
	graphs map[Key]*cincinnati.Graph
	// Releases counts the releases in the graph, Edges the updates and
	// Conditional the conditional ones between them (before channels).
	Releases, Edges, Conditional int
}

// Get returns the graph of channel for arch, nil when no release of arch
// is in channel.
func (g *Graphs) Get(channel, arch string) *cincinnati.Graph { return g.graphs[Key{channel, arch}] }

// Keys returns the channels and architectures that have a graph, sorted.
func (g *Graphs) Keys() []Key {
	keys := make([]Key, 0, len(g.graphs))
	for k := range g.graphs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Channel != keys[j].Channel {
			return keys[i].Channel < keys[j].Channel
		}
		return keys[i].Arch < keys[j].Arch
	})
	return keys
}

// Channels returns the channel names with a graph, sorted.
func (g *Graphs) Channels() []string {
	var out []string
	for _, k := range g.Keys() {
		if len(out) == 0 || out[len(out)-1] != k.Channel {
			out = append(out, k.Channel)
		}
	}
	return out
}

// node is a release in the builder.
type node struct {
	r        *Release
	name     string // VERSION+ARCH, what graph-data's regexes match
	channels map[string]bool
}

// edge joins node indices.
type edge struct{ from, to int }

// builder holds the state of one Build.
type builder struct {
	nodes []node
	index map[string]int // VERSION+ARCH without other build metadata
	// byVersion are the nodes of a version (without build metadata).
	byVersion map[string][]int
	// in holds the updates: in[to][from].
	in    map[int]map[int]bool
	risks map[edge][]configv1.ConditionalUpdateRisk
}

func (b *builder) add(from, to int) {
	if b.in[to] == nil {
		b.in[to] = map[int]bool{}
	}
	b.in[to][from] = true
}

func (b *builder) countEdges() int {
	n := 0
	for _, froms := range b.in {
		n += len(froms)
	}
	return n
}

// Build builds the graph of every channel and architecture from releases
// and graph-data (nil: none), as the update service does: updates from
// each release's previous and next (and the metadata's previous.add,
// next.add), conditional updates where a conditional blocked edge matches
// one (its risks accumulate, in file order), then the blocked edges and
// the metadata's previous.remove, previous.remove_regex and next.remove
// remove updates; a release is in the channels its metadata names
// (MetadataChannels) and those whose file lists its version. A channel's
// graph holds its releases of one architecture, the updates between them
// and the conditional ones, grouped by their risks, with versions without
// the architecture suffix; nodes sorted by version.
//
// Two releases of one version and architecture with different digests
// contradict each other: the one whose Source sorts first is kept and
// the error names both; the graphs are then built without the other
// (Build returns them with the error).
func Build(releases []Release, data *GraphData) (*Graphs, error) {
	if data == nil {
		data = &GraphData{}
	}
	b := &builder{index: map[string]int{}, byVersion: map[string][]int{}, in: map[int]map[int]bool{}, risks: map[edge][]configv1.ConditionalUpdateRisk{}}
	errs := b.addNodes(releases)
	b.addEdges()
	for _, bl := range data.Blocks {
		if bl.Risk != nil {
			b.conditional(bl)
		}
	}
	b.removeEdges(data.Blocks)
	b.addChannels(data.Channels)
	g := &Graphs{graphs: map[Key]*cincinnati.Graph{}, Releases: len(b.nodes), Edges: b.countEdges(), Conditional: len(b.risks)}
	for _, k := range b.keys() {
		g.graphs[k] = b.graph(k)
	}
	if len(errs) > 0 {
		return g, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return g, nil
}

// nodeName is how graph-data and the node index name a release.
func nodeName(v semver.Version, arch string) string {
	v.Build = nil
	return v.String() + "+" + arch
}

func (b *builder) addNodes(releases []Release) []string {
	sorted := make([]*Release, len(releases))
	for i := range releases {
		sorted[i] = &releases[i]
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Source < sorted[j].Source })
	var errs []string
	for _, r := range sorted {
		n := nodeName(r.Version, r.Arch)
		if i, ok := b.index[n]; ok {
			if o := b.nodes[i].r; o.Digest != r.Digest {
				errs = append(errs, fmt.Sprintf("%s (%s): version %s for %s, as %s (%s) already: left out", r.Source, r.Digest, r.Version, r.Arch, o.Source, o.Digest))
			}
			continue
		}
		b.index[n] = len(b.nodes)
		v := r.Version
		v.Build = nil
		b.byVersion[v.String()] = append(b.byVersion[v.String()], len(b.nodes))
		b.nodes = append(b.nodes, node{r: r, name: n, channels: map[string]bool{}})
	}
	return errs
}

// find returns the node of version v (a string) for arch, or -1.
func (b *builder) find(v, arch string) int {
	sv, err := semver.Parse(strings.TrimSpace(v))
	if err != nil {
		return -1
	}
	if i, ok := b.index[nodeName(sv, arch)]; ok {
		return i
	}
	return -1
}

// list splits a comma-separated metadata value.
func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (b *builder) addEdges() {
	for to, n := range b.nodes {
		for _, p := range append(append([]string{}, n.r.Previous...), list(n.r.Metadata[MetaPreviousAdd])...) {
			if from := b.find(p, n.r.Arch); from >= 0 && from != to {
				b.add(from, to)
			}
		}
		for _, nx := range append(append([]string{}, n.r.Next...), list(n.r.Metadata[MetaNextAdd])...) {
			if next := b.find(nx, n.r.Arch); next >= 0 && next != to {
				b.add(to, next)
			}
		}
	}
}

// targets returns the nodes a blocked edge's "to" names.
func (b *builder) targets(to semver.Version) []int {
	var out []int
	arch := strings.Join(to.Build, ".")
	to.Build = nil
	for _, i := range b.byVersion[to.String()] {
		if arch == "" || arch == b.nodes[i].r.Arch {
			out = append(out, i)
		}
	}
	return out
}

// conditional gives the risk of bl to the updates it matches.
func (b *builder) conditional(bl Block) {
	for _, t := range b.targets(bl.To) {
		for from := range b.in[t] {
			if bl.From.MatchString(b.nodes[from].name) {
				e := edge{from, t}
				b.risks[e] = append(b.risks[e], *bl.Risk)
			}
		}
	}
}

// removeEdges applies the blocked edges and the metadata's removals.
func (b *builder) removeEdges(blocks []Block) {
	remove := func(t int, re *regexp.Regexp) {
		for from := range b.in[t] {
			if re.MatchString(b.nodes[from].name) {
				delete(b.in[t], from)
			}
		}
	}
	for _, bl := range blocks {
		for _, t := range b.targets(bl.To) {
			remove(t, bl.From)
		}
	}
	for i, n := range b.nodes {
		md := n.r.Metadata
		if re, err := regexp.Compile(md[MetaPreviousRemoveR]); err == nil && md[MetaPreviousRemoveR] != "" {
			remove(i, re)
		}
		for _, p := range list(md[MetaPreviousRemove]) {
			if p == "*" {
				remove(i, regexp.MustCompile(``))
			} else if from := b.find(p, n.r.Arch); from >= 0 {
				delete(b.in[i], from)
			}
		}
		for _, nx := range list(md[MetaNextRemove]) {
			if to := b.find(nx, n.r.Arch); to >= 0 {
				delete(b.in[to], i)
			}
		}
	}
}

func (b *builder) addChannels(channels []Channel) {
	for i := range b.nodes {
		for _, c := range list(b.nodes[i].r.Metadata[cincinnati.MetadataChannels]) {
			b.nodes[i].channels[c] = true
		}
	}
	for _, c := range channels {
		for _, v := range c.Versions {
			for _, t := range b.targets(v) {
				b.nodes[t].channels[c.Name] = true
			}
		}
	}
}

// keys returns the channel and architecture pairs with a release.
func (b *builder) keys() []Key {
	seen := map[Key]bool{}
	var out []Key
	for _, n := range b.nodes {
		for c := range n.channels {
			k := Key{c, n.r.Arch}
			if !seen[k] && cincinnati.ChannelPattern.MatchString(c) {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// consumed are the metadata keys the graph's nodes do not carry.
var consumed = map[string]bool{MetaPreviousAdd: true, MetaPreviousRemove: true, MetaPreviousRemoveR: true, MetaNextAdd: true, MetaNextRemove: true}

// graph returns the graph of k.
func (b *builder) graph(k Key) *cincinnati.Graph {
	var in []int
	for i, n := range b.nodes {
		if n.r.Arch == k.Arch && n.channels[k.Channel] {
			in = append(in, i)
		}
	}
	sort.Slice(in, func(x, y int) bool { return b.nodes[in[x]].r.Version.LT(b.nodes[in[y]].r.Version) })
	local := make(map[int]int, len(in))
	g := &cincinnati.Graph{SchemaVersion: 1, Nodes: make([]cincinnati.Node, len(in)), Edges: []cincinnati.Edge{}, ConditionalEdges: []cincinnati.ConditionalEdges{}}
	for li, i := range in {
		local[i] = li
		g.Nodes[li] = b.nodes[i].out()
	}
	for _, i := range in {
		for from := range b.in[i] {
			if f, ok := local[from]; ok {
				g.Edges = append(g.Edges, cincinnati.Edge{f, local[i]})
			}
		}
	}
	sort.Slice(g.Edges, func(i, j int) bool {
		return g.Edges[i][0] < g.Edges[j][0] || g.Edges[i][0] == g.Edges[j][0] && g.Edges[i][1] < g.Edges[j][1]
	})
	groups := map[string]int{}
	var conditional []edge
	for e := range b.risks {
		_, ok1 := local[e.from]
		_, ok2 := local[e.to]
		if ok1 && ok2 {
			conditional = append(conditional, e)
		}
	}
	sort.Slice(conditional, func(i, j int) bool {
		a, c := conditional[i], conditional[j]
		return local[a.from] < local[c.from] || local[a.from] == local[c.from] && local[a.to] < local[c.to]
	})
	for _, e := range conditional {
		risks := b.risks[e]
		keyJSON, _ := json.Marshal(risks)
		gi, ok := groups[string(keyJSON)]
		if !ok {
			gi = len(g.ConditionalEdges)
			groups[string(keyJSON)] = gi
			g.ConditionalEdges = append(g.ConditionalEdges, cincinnati.ConditionalEdges{Risks: risks})
		}
		ce := &g.ConditionalEdges[gi]
		ce.Edges = append(ce.Edges, cincinnati.ConditionalEdge{From: g.Nodes[local[e.from]].Version, To: g.Nodes[local[e.to]].Version})
	}
	return g
}

// out returns the node as the graph shows it.
func (n node) out() cincinnati.Node {
	md := map[string]string{}
	for k, v := range n.r.Metadata {
		if !consumed[k] {
			md[k] = v
		}
	}
	if len(n.channels) > 0 {
		md[cincinnati.MetadataChannels] = strings.Join(sortChannels(n.channels), ",")
	}
	if n.r.Digest != "" {
		md[cincinnati.MetadataManifestRef] = n.r.Digest
	}
	v := n.r.Version
	v.Build = nil
	return cincinnati.Node{Version: v.String(), Payload: n.r.Payload, Metadata: md}
}

// sortChannels orders channel names as the update service does: by what
// follows the first '-' (the version: "4.22"), then by name, so that a
// release's candidate, eus, fast and stable channels of one version sit
// together.
func sortChannels(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	suffix := func(s string) string {
		if _, after, ok := strings.Cut(s, "-"); ok {
			return after
		}
		return s
	}
	sort.Slice(out, func(i, j int) bool {
		si, sj := suffix(out[i]), suffix(out[j])
		return si < sj || si == sj && out[i] < out[j]
	})
	return out
}
