package upgrade

import (
	"fmt"
	"sort"
	"strings"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// The checks of what B's deletes take with them, run with the
// preconditions (PlanUpgrade adds their verdicts).
const (
	// CheckDeletesWhatItApplies: B deletes a Namespace it applies objects
	// in, or a CustomResourceDefinition whose kind it applies objects of.
	// The update cannot end with them: the release contradicts itself,
	// and no --force lets it through.
	CheckDeletesWhatItApplies = "ReleaseDeletesWhatItApplies"
	// CheckDeletesOthers: B deletes a Namespace that holds, or a
	// CustomResourceDefinition whose kind has, objects B does not delete:
	// A's objects B leaves (orphans, which the CVO leaves on the cluster)
	// and objects no release applies. They would be gone; --force accepts
	// it.
	CheckDeletesOthers = "ReleaseDeletesOthersObjects"
)

// Held is what the cluster holds that a delete of B would take with it,
// by the delete's ID: every object in a Namespace, every object of a
// CustomResourceDefinition's kind, as the caller read them.
type Held map[manifest.ID]HeldObjects

// HeldObjects are the objects a delete would take, named up to a bound,
// and how many more there are.
type HeldObjects struct {
	IDs  []manifest.ID
	More int
}

// Taken is what deleting one Namespace or CustomResourceDefinition of B
// takes with it.
type Taken struct {
	// Delete is B's delete manifest.
	Delete Item
	// Wanted are B's own objects in the Namespace, or of the CRD's kind:
	// B applies them and deletes them (a contradiction).
	Wanted []Item
	// Orphans are A's objects there that B drops: not left on the
	// cluster, as orphans are, but deleted with it.
	Orphans []Item
	// Others are objects there that neither release applies (and More how
	// many more the cluster holds beyond those named).
	Others []manifest.ID
	More   int
}

// Scope describes what the delete takes: "Namespace/ns (every object in
// it)" or "CustomResourceDefinition/x (every object of kind K)".
func (t Taken) Scope() string {
	if ns, ok := namespaceOf(t.Delete.To); ok {
		return "Namespace/" + ns + " (every object in it)"
	}
	group, kind, _ := crdKind(t.Delete.To)
	return fmt.Sprintf("%s (every object of kind %s)", t.Delete.ID.Ref(), kind+dotted(group))
}

func dotted(group string) string {
	if group == "" {
		return ""
	}
	return "." + group
}

// Takes returns, for each Namespace and CustomResourceDefinition B deletes
// (to's delete manifests), what it takes with it that B does not delete
// itself: B's own objects there, A's objects B drops (which it removes from
// c.Orphans: they are not left on the cluster), and what held says the
// cluster holds there besides. Deletes that take nothing are left out.
func Takes(c *Changes, from, to []*manifest.Manifest, held Held) []Taken {
	mine := map[manifest.ID]bool{}
	for _, m := range from {
		mine[m.ID()] = true
	}
	for _, m := range to {
		mine[m.ID()] = true
	}
	var out []Taken
	taken := map[manifest.ID]bool{}
	for _, d := range to {
		if !d.IsDelete() {
			continue
		}
		in := scope(d)
		if in == nil {
			continue
		}
		t := Taken{Delete: Item{ID: d.ID(), To: d}}
		for _, m := range to {
			if !m.IsDelete() && in(m.ID()) {
				t.Wanted = append(t.Wanted, Item{ID: m.ID(), To: m})
			}
		}
		for _, it := range c.Orphans {
			if in(it.ID) {
				t.Orphans = append(t.Orphans, it)
				taken[it.ID] = true
			}
		}
		h := held[d.ID()]
		for _, id := range h.IDs {
			if !mine[id] && in(id) {
				t.Others = append(t.Others, id)
			}
		}
		sort.Slice(t.Others, func(i, j int) bool { return t.Others[i].String() < t.Others[j].String() })
		t.More = h.More
		if len(t.Wanted)+len(t.Orphans)+len(t.Others)+t.More > 0 {
			out = append(out, t)
		}
	}
	if len(taken) > 0 {
		kept := c.Orphans[:0:0]
		for _, it := range c.Orphans {
			if !taken[it.ID] {
				kept = append(kept, it)
			}
		}
		c.Orphans = kept
	}
	return out
}

// scope returns what a delete manifest takes with it: the objects in a
// Namespace, or of a CustomResourceDefinition's kind; nil for any other
// delete.
func scope(d *manifest.Manifest) func(manifest.ID) bool {
	if ns, ok := namespaceOf(d); ok {
		return func(id manifest.ID) bool { return id.Namespace == ns }
	}
	if group, kind, ok := crdKind(d); ok {
		return func(id manifest.ID) bool { return id.Group == group && id.Kind == kind }
	}
	return nil
}

func namespaceOf(m *manifest.Manifest) (string, bool) {
	if m.GVK.Group == "" && m.GVK.Kind == "Namespace" {
		return m.Obj.GetName(), true
	}
	return "", false
}

func crdKind(m *manifest.Manifest) (group, kind string, ok bool) {
	if m.GVK.Group != "apiextensions.k8s.io" || m.GVK.Kind != "CustomResourceDefinition" {
		return "", "", false
	}
	group, _ = m.Obj.Object["spec"].(map[string]any)["group"].(string)
	names, _ := m.Obj.Object["spec"].(map[string]any)["names"].(map[string]any)
	kind, _ = names["kind"].(string)
	return group, kind, kind != ""
}

// TakesVerdicts are the verdicts of CheckDeletesWhatItApplies and
// CheckDeletesOthers for takes: passed, or blocking with a message naming
// each delete, its file, and what it takes.
func TakesVerdicts(takes []Taken) []Verdict {
	wanted := Verdict{Name: CheckDeletesWhatItApplies, Passed: true}
	others := Verdict{Name: CheckDeletesOthers, Passed: true}
	var w, o []string
	for _, t := range takes {
		where := fmt.Sprintf("%s (%s) deletes %s", t.Delete.ID.Ref(), t.Delete.To.Position(), t.Scope())
		if len(t.Wanted) > 0 {
			w = append(w, fmt.Sprintf("%s, and applies %s", where, itemList(t.Wanted)))
		}
		var gone []string
		if len(t.Orphans) > 0 {
			gone = append(gone, "the running release's "+itemList(t.Orphans)+" (which it drops, and would otherwise leave on the cluster)")
		}
		if len(t.Others)+t.More > 0 {
			gone = append(gone, idList(t.Others, t.More)+", which no release applies")
		}
		if len(gone) > 0 {
			o = append(o, fmt.Sprintf("%s, and with it %s", where, strings.Join(gone, " and ")))
		}
	}
	if len(w) > 0 {
		wanted = Verdict{Name: CheckDeletesWhatItApplies, Reason: "DeleteTakesWhatItApplies",
			Message: "The release deletes what it applies, which would then be gone (the CVO would fail the update): " + strings.Join(w, "; ") + ". Fix the release: keep the object it deletes, or apply nothing under it."}
	}
	if len(o) > 0 {
		others = Verdict{Name: CheckDeletesOthers, Reason: "DeleteTakesOtherObjects",
			Message: "The release deletes objects it does not name: " + strings.Join(o, "; ") + ". Move or delete them first, or --force=" + CheckDeletesOthers + " to accept that they go."}
	}
	return []Verdict{wanted, others}
}

const maxListed = 10

func itemList(items []Item) string {
	ids := make([]manifest.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return idList(ids, 0)
}

// idList names up to maxListed objects ("3 objects: A, B, C", "12
// objects: A, ... and 2 more").
func idList(ids []manifest.ID, more int) string {
	n := len(ids) + more
	var names []string
	for i, id := range ids {
		if i == maxListed {
			break
		}
		names = append(names, id.Ref())
	}
	s := fmt.Sprintf("%d object", n)
	if n != 1 {
		s += "s"
	}
	s += ": " + strings.Join(names, ", ")
	if rest := n - len(names); rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}
