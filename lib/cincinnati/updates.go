package cincinnati

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
)

// The most entries the ClusterVersion API takes: conditionalUpdates, and
// the risks of one conditional update.
const (
	MaxConditionalUpdates = 500
	MaxRisksPerUpdate     = 200
)

// Result is what a graph says of the version a cluster runs.
type Result struct {
	// Current is the release of the version, as its node describes it.
	Current configv1.Release
	// Updates are the releases its edges recommend, newest first.
	Updates []configv1.Release
	// Conditional are the releases its conditional edges lead to, newest
	// first, each with its risks (no conditions: Evaluate sets them).
	Conditional []configv1.ConditionalUpdate
	// Warnings say what was left out and why (a conditional update without
	// a rule this cluster could evaluate, one declared twice, ...).
	Warnings []string
}

// Updates returns what the graph says of version, the version the
// cluster runs, as the CVO's client reads it: its node (an *Error
// VersionNotFound when the graph lacks it; channel is for the message),
// the targets of its edges, and of its conditional edges with their risks.
// A target listed both ways is conditional only. Matching rules of a type
// this package does not know, or that are incomplete, are pruned; a
// conditional update left with a risk without rules, or a risk without a
// name, message or URL, is dropped, and one declared in two groups of
// conditional edges is dropped entirely, each with a warning (the CVO
// drops them rather than write what the API server refuses). Past
// MaxConditionalUpdates (oldest first) and MaxRisksPerUpdate, entries are
// dropped with a warning too. A node the result needs that is invalid, or
// a conditional edge to a version the graph lacks, is an *Error
// (ResponseInvalid) naming it.
func (g *Graph) Updates(version, channel string) (*Result, error) {
	cur, err := semver.Parse(version)
	if err != nil {
		return nil, &Error{Reason: ReasonInvalidCurrentVersion, Message: fmt.Sprintf("The version the cluster runs, %q, is not a semantic version.", version), Err: err}
	}
	vs, err := g.versions()
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(vs))
	self := -1
	for i, v := range vs {
		index[versionKey(v)] = i
		if v.EQ(cur) {
			self = i
		}
	}
	if self < 0 {
		return nil, &Error{Reason: ReasonVersionNotFound, Message: fmt.Sprintf("the version the cluster runs, %s, is not in the %q channel", version, channel)}
	}
	res := &Result{}
	if res.Current, err = g.release(self); err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for _, e := range g.Edges {
		if e[0] != self || seen[e[1]] {
			continue
		}
		seen[e[1]] = true
		r, err := g.release(e[1])
		if err != nil {
			return nil, err
		}
		res.Updates = append(res.Updates, r)
	}
	if err := g.conditional(res, cur, index); err != nil {
		return nil, err
	}
	byVersion := func(rs []configv1.Release) func(i, j int) bool {
		return func(i, j int) bool { return newer(rs[i].Version, rs[j].Version) }
	}
	sort.SliceStable(res.Updates, byVersion(res.Updates))
	return res, nil
}

// conditional fills res.Conditional from the conditional edges from cur.
func (g *Graph) conditional(res *Result, cur semver.Version, index map[string]int) error {
	count := map[string]int{}
	var out []configv1.ConditionalUpdate
	for gi, group := range g.ConditionalEdges {
		for ei, e := range group.Edges {
			from, err := semver.Parse(e.From)
			if err != nil || !from.EQ(cur) {
				continue
			}
			to, err := semver.Parse(e.To)
			if err != nil {
				return invalid("conditional edges %d, edge %d (%s -> %s): %q is not a semantic version", gi, ei, e.From, e.To, e.To)
			}
			i, ok := index[versionKey(to)]
			if !ok {
				return invalid("conditional edges %d, edge %d (%s -> %s): the graph has no node of version %s", gi, ei, e.From, e.To, e.To)
			}
			r, err := g.release(i)
			if err != nil {
				return err
			}
			u := configv1.ConditionalUpdate{Release: r}
			for _, risk := range group.Risks {
				u.Risks = append(u.Risks, *risk.DeepCopy())
			}
			count[r.Image]++
			out = append(out, u)
		}
	}
	warned := map[string]bool{}
	for _, u := range out {
		if n := count[u.Release.Image]; n > 1 {
			if !warned[u.Release.Image] {
				res.Warnings = append(res.Warnings, fmt.Sprintf("the graph declares %d conditional updates to %s: all left out", n, u.Release.Version))
			}
			warned[u.Release.Image] = true
			continue
		}
		if w := prune(&u); w != "" {
			res.Warnings = append(res.Warnings, w)
			continue
		}
		res.Conditional = append(res.Conditional, u)
	}
	// A target listed both ways is conditional (the CVO prefers it), even
	// when the conditional update was left out.
	kept := res.Updates[:0]
	for _, r := range res.Updates {
		if count[r.Image] == 0 {
			kept = append(kept, r)
		}
	}
	res.Updates = kept
	sort.SliceStable(res.Conditional, func(i, j int) bool {
		return newer(res.Conditional[i].Release.Version, res.Conditional[j].Release.Version)
	})
	if n := len(res.Conditional); n > MaxConditionalUpdates {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d conditional updates: the %d oldest left out (the API takes %d)", n, n-MaxConditionalUpdates, MaxConditionalUpdates))
		res.Conditional = res.Conditional[:MaxConditionalUpdates]
	}
	return nil
}

// prune checks u's risks and prunes their rules: it returns a warning
// when u is to be left out.
func prune(u *configv1.ConditionalUpdate) string {
	names := map[string]bool{}
	risks := u.Risks[:0]
	for i, r := range u.Risks {
		switch {
		case r.Name == "" || r.Message == "" || r.URL == "":
			return fmt.Sprintf("conditional update to %s: risk %d %q lacks a name, message or URL: left out", u.Release.Version, i, r.Name)
		case names[r.Name]:
			continue
		}
		names[r.Name] = true
		valid, why := ValidRules(r.MatchingRules)
		if len(valid) == 0 {
			return fmt.Sprintf("conditional update to %s: risk %s has no matching rule this cluster can evaluate (%s): left out", u.Release.Version, r.Name, why)
		}
		r.MatchingRules = valid
		risks = append(risks, r)
	}
	if len(risks) == 0 {
		return fmt.Sprintf("conditional update to %s: no risks: left out", u.Release.Version)
	}
	if len(risks) > MaxRisksPerUpdate {
		return fmt.Sprintf("conditional update to %s: %d risks, more than the %d the API takes: left out", u.Release.Version, len(risks), MaxRisksPerUpdate)
	}
	u.Risks = risks
	return ""
}

// The matching rule types.
const (
	// RuleAlways matches every cluster.
	RuleAlways = "Always"
	// RulePromQL matches the clusters where its query returns 1 (and not
	// those where it returns 0).
	RulePromQL = "PromQL"
)

// ValidRules returns the rules a cluster can evaluate, in order: Always
// without a query, PromQL with one. why says what was pruned ("" when
// nothing was).
func ValidRules(rules []configv1.ClusterCondition) (valid []configv1.ClusterCondition, why string) {
	var whys []string
	for i, r := range rules {
		switch {
		case r.Type == RuleAlways && r.PromQL == nil, r.Type == RulePromQL && r.PromQL != nil && strings.TrimSpace(r.PromQL.PromQL) != "":
			valid = append(valid, r)
		case r.Type == RuleAlways:
			whys = append(whys, fmt.Sprintf("rule %d: type Always takes no promql", i))
		case r.Type == RulePromQL:
			whys = append(whys, fmt.Sprintf("rule %d: type PromQL without a query", i))
		default:
			whys = append(whys, fmt.Sprintf("rule %d: unknown type %q", i, r.Type))
		}
	}
	return valid, strings.Join(whys, "; ")
}

// release returns node i as the ClusterVersion names a release: version,
// image, URL and channels from its metadata (the architecture is left
// out: the field is behind a feature gate the CVO checks).
func (g *Graph) release(i int) (configv1.Release, error) {
	n := g.Nodes[i]
	r := configv1.Release{Version: n.Version, Image: n.Payload}
	if s, ok := n.Metadata[MetadataURL]; ok {
		if _, err := url.Parse(s); err != nil {
			return r, invalid("node %d (%s): metadata url %q: %v", i, n.Version, s, err)
		}
		r.URL = configv1.URL(s)
	}
	if a, ok := n.Metadata[MetadataArchitecture]; ok && a != "multi" {
		return r, invalid("node %d (%s): metadata %s %q: want multi", i, n.Version, MetadataArchitecture, a)
	}
	if s, ok := n.Metadata[MetadataChannels]; ok {
		for _, c := range strings.Split(s, ",") {
			if c = strings.TrimSpace(c); c != "" {
				r.Channels = append(r.Channels, c)
			}
		}
		if len(r.Channels) == 0 {
			return r, invalid("node %d (%s): metadata %s %q names no channel", i, n.Version, MetadataChannels, s)
		}
		sort.Strings(r.Channels)
	}
	return r, nil
}

// versionKey is v without build metadata, which semver ignores.
func versionKey(v semver.Version) string {
	v.Build = nil
	return v.String()
}

// newer reports whether version a is above b (unparsable ones last).
func newer(a, b string) bool {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	if errA != nil || errB != nil {
		return errA == nil
	}
	return va.GT(vb)
}
