package apicheck

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Severity says whether the server refuses what a Problem describes.
type Severity string

// The severities.
const (
	// Error: the server refuses the object (or apply would fail on it).
	Error Severity = "error"
	// Warning: accepted, but not as written (apply drops a field the
	// built-in type does not have, as the CVO does).
	Warning Severity = "warning"
)

// Problem is one thing the server would refuse, or change, in an object.
type Problem struct {
	// Field is the field path ("spec.replicas", "metadata.annotations[x]"),
	// empty for the object as a whole.
	Field string
	// Message says what is wrong.
	Message  string
	Severity Severity
}

// String prints "field: message".
func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// Checker checks objects against the built-in types and the
// CustomResourceDefinitions it was given. It is safe for concurrent use;
// schemas are compiled once, when first needed, and kept in its Cache.
type Checker struct {
	crds  map[schema.GroupKind]*manifest.Manifest
	cache *Cache
}

// NewChecker returns a Checker for objs: the CustomResourceDefinitions
// among them define the custom kinds it checks (by the kind each defines;
// of two for one kind the last wins: a selection includes one). cache,
// when not nil, shares compiled schemas with other Checkers (several
// selections of one payload share most CustomResourceDefinitions).
func NewChecker(objs []*manifest.Manifest, cache *Cache) *Checker {
	if cache == nil {
		cache = NewCache()
	}
	c := &Checker{crds: map[schema.GroupKind]*manifest.Manifest{}, cache: cache}
	for _, m := range objs {
		if gk, ok := definedKind(m.Obj); ok {
			c.crds[gk] = m
		}
	}
	return c
}

// Cache holds compiled schemas, by CustomResourceDefinition. It is safe
// for concurrent use.
type Cache struct {
	mu       sync.Mutex
	compiled map[*manifest.Manifest]*compiledCRD
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{compiled: map[*manifest.Manifest]*compiledCRD{}} }

// definedKind returns the group and kind a CustomResourceDefinition
// defines.
func definedKind(obj *unstructured.Unstructured) (schema.GroupKind, bool) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
		return schema.GroupKind{}, false
	}
	group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
	if group == "" || kind == "" {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: group, Kind: kind}, true
}

// Check returns what the API server would refuse in m's object, errors
// first, each once, in field order. What the object is for decides what
// is checked: an object annotated for deletion is only deleted, so only
// its identity is (apiVersion, kind, namespace, name: the generic
// checks); a create-only object (and a ClusterOperator) is only ever
// created, so it is checked as a create: a field its schema does not
// declare is dropped by the server (a warning), not refused as server-side
// apply refuses it.
func (c *Checker) Check(m *manifest.Manifest) []Problem {
	obj := m.Obj.Object
	probs := checkGeneric(obj)
	if hasErrors(probs) || m.IsDelete() {
		// The object cannot be routed or named (the schema checks would
		// only repeat it), or only its identity matters.
		return sortProblems(probs)
	}
	gvk := m.Obj.GroupVersionKind()
	if crd, ok := c.crds[gvk.GroupKind()]; ok {
		created := m.IsCreateOnly() || gvk.GroupKind() == clusterOperatorGK
		probs = append(probs, c.checkCustom(crd, m.Obj, created)...)
	} else {
		probs = append(probs, checkBuiltin(m.Obj)...)
	}
	return sortProblems(probs)
}

// clusterOperatorGK: apply creates ClusterOperators once, never updates
// them.
var clusterOperatorGK = schema.GroupKind{Group: "config.openshift.io", Kind: "ClusterOperator"}

func hasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

func sortProblems(ps []Problem) []Problem {
	seen := map[Problem]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Severity != out[j].Severity {
			return out[i].Severity == Error
		}
		return out[i].Field < out[j].Field
	})
	return out
}

// Findings returns m's problems as findings at m's file and document, each
// message starting with the object ("Kind/ns/name: field: message").
func (c *Checker) Findings(m *manifest.Manifest) []manifest.Finding {
	var out []manifest.Finding
	for _, p := range c.Check(m) {
		sev := manifest.SeverityError
		if p.Severity == Warning {
			sev = manifest.SeverityWarning
		}
		out = append(out, manifest.Finding{File: m.File, Doc: m.Doc, Severity: sev, Message: objectName(m) + ": " + p.String()})
	}
	return out
}

// objectName prints the object as messages name it, even when its kind or
// name are not strings.
func objectName(m *manifest.Manifest) string {
	id := m.ID()
	if id.Kind == "" || id.Name == "" {
		return fmt.Sprintf("%s/%s", kindOf(m.Obj.Object), nameOf(m.Obj.Object))
	}
	return id.String()
}

func kindOf(obj map[string]any) string {
	if k, ok := obj["kind"].(string); ok {
		return k
	}
	return "?"
}

func nameOf(obj map[string]any) string {
	if md, ok := obj["metadata"].(map[string]any); ok {
		if n, ok := md["name"].(string); ok {
			return n
		}
	}
	return "?"
}

func joinPath(parts ...string) string {
	return strings.Join(parts, ".")
}
