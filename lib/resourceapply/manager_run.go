package resourceapply

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// NewRun starts another apply with this Manager: it forgets what holds
// only within one apply (the kinds, namespaces and objects it was told to
// expect, the namespaces and CustomResourceDefinitions it saw or created,
// what a dry run would have created, the lists it read, the kinds whose
// CustomResourceDefinition failed, the cluster's Proxy), so that a
// long-lived Manager (the operator's, which applies the same payload every
// few minutes) reads every object again instead of trusting what an
// earlier apply saw: a namespace deleted since, an object in a namespace it
// created then. What it keeps is the RESTMapper's discovery, which is reset
// as before when a kind has no match. Call it between applies, not during
// one.
func (m *Manager) NewRun() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expected = map[schema.GroupKind]bool{}
	m.expectedNamespaces = map[string]bool{}
	m.refreshed = map[schema.GroupKind]bool{}
	m.dryRunKinds = map[schema.GroupKind]bool{}
	m.dryRunNamespaces = map[string]bool{}
	m.namespaces = map[string]bool{}
	m.appliedInCreated = map[manifest.ID]bool{}
	m.createdKinds = map[schema.GroupKind]bool{}
	m.failedKinds = map[schema.GroupKind]error{}
	m.planned = map[schema.GroupVersionKind]*plannedKind{}
	m.lists = map[listKey]*listEntry{}
	m.tooBig = map[schema.GroupVersionResource]bool{}
	m.overLists = map[listKey]bool{}
	m.proxy = &proxyRead{}
}
