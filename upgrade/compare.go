package upgrade

import (
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// Item is one object of an upgrade plan: its manifest in A (From) and in B
// (To); either is nil when the release does not have it.
type Item struct {
	ID       manifest.ID
	From, To *manifest.Manifest
}

// Place is where a manifest applies: its run level and component (Level
// payload.NoRunLevel when its file name does not parse).
type Place struct {
	Level     int
	Component string
}

// PlaceOf returns where m applies.
func PlaceOf(m *manifest.Manifest) Place {
	level, comp, ok := payload.ParseFileName(m.OriginalFilename)
	if !ok {
		return Place{Level: payload.NoRunLevel}
	}
	return Place{Level: level, Component: comp}
}

// Changes is what an update from A to B does to the objects, each list in
// B's apply order (Orphans in A's).
type Changes struct {
	// Creates are B's objects A does not have (or only deletes).
	Creates []Item
	// Changes are objects both have whose content B changes, and that an
	// update writes.
	Changes []Item
	// Kept are objects both have whose content B changes but that are
	// created once and never updated (release.openshift.io/create-only,
	// ClusterOperators, whose status their operator writes): nothing is
	// written.
	Kept []Item
	// Deletes are B's objects annotated release.openshift.io/delete
	// that A did not delete already.
	Deletes []Item
	// Deleted counts B's delete manifests that A had too (their objects
	// are gone already, unless something made them again).
	Deleted int
	// Orphans are A's objects B drops without a delete manifest: the CVO
	// leaves them on the cluster, unmanaged.
	Orphans []Item
	// Moves are objects both have that B applies at another run level or
	// in another component (whether their content changes or not).
	Moves []Item
	// Unchanged counts the objects both have with the same content.
	Unchanged int
}

// Compare compares the objects of A and B (plan.Plan.Objects: after
// overlays and components, in apply order) by identity (group, kind,
// namespace, name) and content.
func Compare(from, to []*manifest.Manifest) *Changes {
	a := make(map[manifest.ID]*manifest.Manifest, len(from))
	for _, m := range from {
		a[m.ID()] = m
	}
	inB := make(map[manifest.ID]bool, len(to))
	c := &Changes{}
	for _, m := range to {
		id := m.ID()
		inB[id] = true
		old := a[id]
		it := Item{ID: id, From: old, To: m}
		switch {
		case m.IsDelete() && old != nil && old.IsDelete():
			c.Deleted++
			continue
		case m.IsDelete():
			c.Deletes = append(c.Deletes, it)
			continue
		case old == nil || old.IsDelete():
			c.Creates = append(c.Creates, it)
			continue
		case equality.Semantic.DeepEqual(old.Obj.Object, m.Obj.Object):
			c.Unchanged++
		case m.IsCreateOnly() || (m.GVK.Group == "config.openshift.io" && m.GVK.Kind == "ClusterOperator"):
			c.Kept = append(c.Kept, it)
		default:
			c.Changes = append(c.Changes, it)
		}
		if PlaceOf(old) != PlaceOf(m) {
			c.Moves = append(c.Moves, it)
		}
	}
	for _, m := range from {
		if !inB[m.ID()] && !m.IsDelete() {
			c.Orphans = append(c.Orphans, Item{ID: m.ID(), From: m})
		}
	}
	return c
}
