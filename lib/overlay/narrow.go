package overlay

import (
	"encoding/json"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// narrowing says which objects an overlay may touch, when that can be told
// from its kustomization alone. It is only made for a kustomization of
// nothing but patches (apiVersion, kind, metadata, patches; each patch a
// path or an inline patch, a target and options): kustomize then changes,
// renames or deletes exactly the objects the patches select, and passes
// every other object through untouched.
//
// A patch with a target selects what kustomize's resmap Select does; the
// narrowing uses kustomize's own selector regexes but selects more
// broadly: label and annotation selectors are ignored, and a namespace
// selector is tried against every namespace kustomize could see for the
// object (its own, "default" for none, and the mark of a cluster-scoped
// object). A strategic merge patch without a target selects the object of
// its own kind and name (kustomize also compares group, version and
// namespace; the narrowing does not); any other patch without a target
// (JSON 6902 needs one) turns the narrowing off. Objects kustomize treats
// specially whatever the patches say are always given to it: lists, which
// it expands, and objects with its own annotations (local-config objects
// it drops, build annotations it rewrites).
//
// An object that goes to kustomize for nothing costs time, never
// correctness; TestNarrowingMatchesFullBuild compares both ways on the
// real payload.
type narrowing struct {
	targets []*types.SelectorRegex
	named   map[[2]string]bool // kind, name of untargeted strategic merge patches

	// perObject is true when what the overlay makes of an object depends
	// on that object alone, so that a build over some objects gives each
	// of them what a build over all of them would: every patch has a
	// target (an untargeted one fails when its object is missing), no
	// patch has options (allowNameChange and allowKindChange let a
	// strategic merge patch rename; without them kustomize keeps the name,
	// namespace and kind), and no JSON 6902 operation touches the root,
	// metadata as a whole, the name, the namespace, the kind or the
	// apiVersion (which would rename the object, and could make two
	// objects one).
	perObject bool
}

// narrowingOf returns the narrowing of a kustomization (parsed as YAML),
// or nil when it has anything else than patches. read returns a file of
// the overlay by its path in the kustomization.
func narrowingOf(k map[string]any, read func(string) ([]byte, error)) *narrowing {
	for key, v := range k {
		switch key {
		case "apiVersion", "metadata", "patches":
		case "kind":
			if v != types.KustomizationKind {
				return nil
			}
		default:
			return nil
		}
	}
	patches, ok := k["patches"].([]any)
	if !ok {
		return nil
	}
	n := &narrowing{named: map[[2]string]bool{}, perObject: true}
	for _, p := range patches {
		entry, ok := p.(map[string]any)
		if !ok {
			return nil
		}
		for key := range entry {
			if key != "path" && key != "patch" && key != "target" && key != "options" {
				return nil
			}
		}
		if _, ok := entry["options"]; ok {
			n.perObject = false
		}
		if entry["target"] == nil {
			if !n.addNamed(entry, read) {
				return nil
			}
			n.perObject = false
			continue
		}
		if n.perObject && !keepsIdentity(entry, read) {
			n.perObject = false
		}
		target, ok := entry["target"].(map[string]any)
		if !ok {
			return nil
		}
		raw, err := json.Marshal(target)
		if err != nil {
			return nil
		}
		var sel types.Selector
		if err := json.Unmarshal(raw, &sel); err != nil {
			return nil
		}
		sr, err := types.NewSelectorRegex(&sel)
		if err != nil {
			// kustomize will say what is wrong.
			return nil
		}
		n.targets = append(n.targets, sr)
	}
	return n
}

// patchText returns the text of a patch entry: its inline patch or the
// file its path names.
func patchText(entry map[string]any, read func(string) ([]byte, error)) ([]byte, bool) {
	if p, ok := entry["patch"].(string); ok {
		return []byte(p), true
	}
	path, ok := entry["path"].(string)
	if !ok {
		return nil, false
	}
	data, err := read(path)
	if err != nil {
		return nil, false
	}
	return data, true
}

// keepsIdentity reports whether a targeted patch cannot change the name,
// namespace, kind or apiVersion of what it patches (see
// narrowing.perObject): a strategic merge patch, or JSON 6902 operations
// none of whose paths (or from paths) is one of those fields, their
// parent metadata, or the root.
func keepsIdentity(entry map[string]any, read func(string) ([]byte, error)) bool {
	text, ok := patchText(entry, read)
	if !ok {
		return false
	}
	var doc any
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return false
	}
	ops, ok := doc.([]any)
	if !ok {
		// A strategic merge patch.
		return true
	}
	for _, op := range ops {
		m, ok := op.(map[string]any)
		if !ok {
			return false
		}
		for _, field := range []string{"path", "from"} {
			v, present := m[field]
			if !present {
				continue
			}
			p, ok := v.(string)
			if !ok {
				return false
			}
			switch {
			case p == "", p == "/", p == "/metadata",
				// Also /metadata/namespace.
				strings.HasPrefix(p, "/metadata/name"),
				strings.HasPrefix(p, "/kind"), strings.HasPrefix(p, "/apiVersion"):
				return false
			}
		}
	}
	return true
}

// addNamed adds the objects an untargeted patch entry names: it must be
// strategic merge patches (documents that each have a kind and a name).
func (n *narrowing) addNamed(entry map[string]any, read func(string) ([]byte, error)) bool {
	text, ok := patchText(entry, read)
	if !ok {
		return false
	}
	docs, err := manifest.SplitDocuments(text)
	if err != nil {
		return false
	}
	found := false
	for _, d := range docs {
		var doc any
		if err := yaml.Unmarshal(d.Data, &doc); err != nil {
			return false
		}
		if doc == nil {
			continue
		}
		obj, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		kind, _ := obj["kind"].(string)
		md, _ := obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if kind == "" || name == "" {
			return false
		}
		n.named[[2]string{kind, name}] = true
		found = true
	}
	return found
}

// kustomizeAnnotationPrefixes start the annotations kustomize acts on by
// itself.
var kustomizeAnnotationPrefixes = []string{"config.kubernetes.io/", "internal.config.kubernetes.io/", "kustomize.config.k8s.io/", "config.k8s.io/"}

// mayTouch reports whether the overlay may change m: whether some target
// may select it, or kustomize treats it specially.
func (n *narrowing) mayTouch(m *manifest.Manifest) bool {
	kind := m.Obj.GetKind()
	if strings.HasSuffix(kind, "List") {
		return true
	}
	for a := range m.Obj.GetAnnotations() {
		for _, p := range kustomizeAnnotationPrefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
	}
	name, ns := m.Obj.GetName(), m.Obj.GetNamespace()
	if n.named[[2]string{kind, name}] {
		return true
	}
	group, version := resid.ParseGroupVersion(m.Obj.GetAPIVersion())
	gvk := resid.Gvk{Group: group, Version: version, Kind: kind}
	namespaces := []string{resid.TotallyNotANamespace}
	if ns == "" || ns == resid.DefaultNamespace {
		namespaces = append(namespaces, "", resid.DefaultNamespace)
	} else {
		namespaces = append(namespaces, ns)
	}
	for _, t := range n.targets {
		if !t.MatchGvk(gvk) || !t.MatchName(name) {
			continue
		}
		for _, ns := range namespaces {
			if t.MatchNamespace(ns) {
				return true
			}
		}
	}
	return false
}
