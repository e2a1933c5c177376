package manifest

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/api/features"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Severity says how bad a Finding is.
type Severity string

// Severities of findings. Errors make `validate` fail; warnings do not.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem Lint found.
type Finding struct {
	File     string
	Doc      int // -1: about the whole file
	Severity Severity
	Message  string
}

// String prints "FILE#DOC: severity: message".
func (f Finding) String() string {
	if f.Doc < 0 {
		return fmt.Sprintf("%s: %s: %s", QuoteName(f.File), f.Severity, f.Message)
	}
	return fmt.Sprintf("%s#%d: %s: %s", QuoteName(f.File), f.Doc, f.Severity, f.Message)
}

// Domains and names of annotations the payload format knows.
const (
	includeDomain    = "include.release.openshift.io"
	excludeDomain    = "exclude.release.openshift.io"
	releaseDomain    = "release.openshift.io"
	capabilityDomain = "capability.openshift.io"
)

var knownReleaseNames = []string{"feature-set", "feature-gate", "major-version", "create-only", "delete", "bootstrap-required"}

// KnownFeatureSets returns the feature-set names library-go accepts in the
// feature-set annotation ("Default" for the empty set, plus every fixed set
// and CustomNoUpgrade), sorted.
func KnownFeatureSets() []string {
	return slices.Clone(knownFeatureSets())
}

// knownFeatureSets and knownFeatureGates are computed once: openshift/api's
// tables are fixed at build time, and selection asks for them on every plan.
var knownFeatureSets = sync.OnceValue(func() []string {
	known := sets.New[string](string(configv1.CustomNoUpgrade))
	for _, byProfile := range features.AllFeatureSets() {
		for _, bySet := range byProfile {
			for set := range bySet {
				if set == "" {
					known.Insert("Default")
				} else {
					known.Insert(string(set))
				}
			}
		}
	}
	return sets.List(known)
})

func KnownFeatureGates() []string {
	return slices.Clone(knownFeatureGates())
}

var knownFeatureGates = sync.OnceValue(func() []string {
	known := sets.New[string]()
	for _, byProfile := range features.AllFeatureSets() {
		for _, bySet := range byProfile {
			for _, gates := range bySet {
				for _, g := range gates.Enabled {
					known.Insert(string(g.FeatureGateAttributes.Name))
				}
				for _, g := range gates.Disabled {
					known.Insert(string(g.FeatureGateAttributes.Name))
				}
			}
		}
	}
	return sets.List(known)
})

// Linter checks the annotations of manifests. Build it with NewLinter; it is
// safe for concurrent use.
type Linter struct {
	profiles     []string
	featureSets  sets.Set[string]
	featureGates sets.Set[string]
	capabilities sets.Set[string]
}

// NewLinter returns a Linter that knows the given profile names. Feature
// sets, feature gates and capabilities come from openshift/api.
func NewLinter(profiles []string) *Linter {
	caps := sets.New[string]()
	for _, c := range configv1.KnownClusterVersionCapabilities {
		caps.Insert(string(c))
	}
	return &Linter{
		profiles:     slices.Sorted(slices.Values(profiles)),
		featureSets:  sets.New(KnownFeatureSets()...),
		featureGates: sets.New(KnownFeatureGates()...),
		capabilities: caps,
	}
}

// Lint returns the findings for one manifest's annotations: unknown profile
// names, misspelt release and capability annotation keys, values other than
// "true" where "true" is the only meaningful value, unknown feature sets,
// gates and capabilities, and annotation combinations library-go never
// includes. Errors are problems that silently change what is included: an
// annotation key one or two edits away from a known one (a typo the CVO
// ignores), an unknown feature set (never included), both a feature-set and
// a feature-gate annotation (never included). The rest are warnings.
func (l *Linter) Lint(m *Manifest) []Finding {
	var out []Finding
	add := func(sev Severity, format string, args ...any) {
		out = append(out, Finding{File: m.File, Doc: m.Doc, Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
	annotations := m.Obj.GetAnnotations()
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	if len(annotations) == 0 {
		add(SeverityWarning, "%s has no annotations: it is excluded from every profile", m.ID())
		return out
	}
	profiles := 0
	for _, key := range keys {
		val := annotations[key]
		domain, name, ok := strings.Cut(key, "/")
		if !ok {
			continue
		}
		switch domain {
		case includeDomain:
			profiles++
			if !slices.Contains(l.profiles, name) {
				// A near miss of a known profile is a typo that silently drops
				// the object from that profile; anything else may be a profile
				// defined elsewhere.
				sev, hint := SeverityWarning, suggest(name, l.profiles)
				if hint != "" {
					sev = SeverityError
				}
				add(sev, "annotation %s names an unknown profile %q%s (known: %s)", key, name, hint, strings.Join(l.profiles, ", "))
			}
			if val != "true" {
				add(SeverityWarning, "annotation %s=%q is not \"true\": profile %s does not include this object", key, val, name)
			}
		case excludeDomain:
			if val != "true" {
				add(SeverityWarning, "annotation %s=%q is not \"true\": it excludes nothing", key, val)
			}
		case releaseDomain:
			if !slices.Contains(knownReleaseNames, name) {
				sev, hint := SeverityWarning, suggestKey(releaseDomain, name, knownReleaseNames)
				if hint != "" {
					sev = SeverityError
				}
				add(sev, "unknown annotation %s%s", key, hint)
				continue
			}
			out = append(out, l.lintRelease(m, name, val)...)
		case capabilityDomain:
			if name != "name" {
				sev, hint := SeverityWarning, suggestKey(capabilityDomain, name, []string{"name"})
				if hint != "" {
					sev = SeverityError
				}
				add(sev, "unknown annotation %s%s", key, hint)
				continue
			}
			for _, c := range strings.Split(val, "+") {
				if !l.capabilities.Has(c) {
					add(SeverityWarning, "annotation %s names an unknown capability %q%s", key, c, suggest(c, sets.List(l.capabilities)))
				}
			}
		default:
			for _, d := range []string{includeDomain, excludeDomain, releaseDomain, capabilityDomain} {
				if dist := levenshtein(domain, d); dist > 0 && dist <= 2 {
					add(SeverityError, "annotation %s looks like a misspelling of %s/%s: it is ignored", key, d, name)
					break
				}
			}
		}
	}
	if profiles == 0 {
		add(SeverityWarning, "%s has no include.release.openshift.io/<profile> annotation: no profile includes it", m.ID())
	}
	_, hasSet := annotations[FeatureSetAnnotation]
	_, hasGate := annotations[FeatureGateAnnotation]
	if hasSet && hasGate {
		add(SeverityError, "both %s and %s are set: library-go never includes such a manifest", FeatureSetAnnotation, FeatureGateAnnotation)
	}
	return out
}

func (l *Linter) lintRelease(m *Manifest, name, val string) []Finding {
	var out []Finding
	add := func(sev Severity, format string, args ...any) {
		out = append(out, Finding{File: m.File, Doc: m.Doc, Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
	key := releaseDomain + "/" + name
	switch name {
	case "feature-set":
		for _, s := range strings.Split(val, ",") {
			if !l.featureSets.Has(s) {
				add(SeverityError, "annotation %s names an unknown feature set %q%s (known: %s): the object is never included", key, s, suggest(s, sets.List(l.featureSets)), strings.Join(sets.List(l.featureSets), ", "))
			}
		}
	case "feature-gate":
		for _, g := range strings.Split(val, ",") {
			g = strings.TrimPrefix(strings.TrimSpace(g), "-")
			if g != "" && !l.featureGates.Has(g) {
				add(SeverityWarning, "annotation %s names an unknown feature gate %q%s", key, g, suggest(g, sets.List(l.featureGates)))
			}
		}
	case "major-version":
		if m.GVK.Group != "apiextensions.k8s.io" && !(m.GVK.Group == "config.openshift.io" && m.GVK.Kind == "FeatureGate") {
			add(SeverityError, "annotation %s is only supported on CustomResourceDefinitions and FeatureGates: this %s is never included", key, m.GVK.Kind)
		}
		for _, v := range strings.Split(val, ",") {
			v = strings.TrimPrefix(strings.TrimSpace(v), "-")
			if _, err := strconv.ParseUint(v, 10, 64); v != "" && err != nil {
				add(SeverityError, "annotation %s has a bad version %q", key, v)
			}
		}
	case "create-only", "delete":
		if val != "true" {
			add(SeverityWarning, "annotation %s=%q is not \"true\": it has no effect", key, val)
		}
		if name == "create-only" && m.IsDelete() {
			add(SeverityWarning, "both %s and %s are set: the object is deleted", CreateOnlyAnnotation, DeleteAnnotation)
		}
	}
	return out
}

// nearest returns the known name within two edits of s (ignoring case), if
// there is one other than s itself.
func nearest(s string, known []string) (string, bool) {
	best, bestDist := "", 3
	for _, k := range known {
		if d := levenshtein(strings.ToLower(s), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, best != "" && best != s
}

func suggest(s string, known []string) string {
	if best, ok := nearest(s, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func suggestKey(domain, name string, known []string) string {
	if best, ok := nearest(name, known); ok {
		return fmt.Sprintf(" (did you mean %s/%s?)", domain, best)
	}
	return ""
}

// levenshtein returns the edit distance between a and b.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// DuplicateKeys returns a finding for every mapping key repeated within one
// mapping of a YAML document. Decoding keeps the last value, as the CVO does,
// so the earlier ones are silently lost. JSON documents are checked too (JSON
// is YAML).
func DuplicateKeys(file string, d Document) []Finding {
	var root yaml.Node
	if err := yaml.Unmarshal(d.Data, &root); err != nil {
		return nil
	}
	var out []Finding
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.MappingNode:
			seen := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if first, ok := seen[k.Value]; ok {
					out = append(out, Finding{File: file, Doc: d.Index, Severity: SeverityWarning,
						Message: fmt.Sprintf("line %d: key %q repeated in %s (first at line %d): the last value wins", d.Line+k.Line-1, k.Value, orRoot(path), d.Line+first-1)})
				} else {
					seen[k.Value] = k.Line
				}
				walk(n.Content[i+1], path+"."+k.Value)
			}
		}
	}
	walk(&root, "")
	return out
}

func orRoot(path string) string {
	if path == "" {
		return "the document"
	}
	return strings.TrimPrefix(path, ".")
}
