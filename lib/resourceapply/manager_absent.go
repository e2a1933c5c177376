package resourceapply

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Absent is what applying a set of objects needs that the server lacks and
// no object of the set creates, known before anything is written: kinds
// that neither the server nor a CustomResourceDefinition among the objects
// serves, and namespaces that neither exist nor are created by a Namespace
// among the objects. The objects that need them fail when applied
// (ReasonResourceTypeMissing, ReasonNamespaceMissing), each on its own.
type Absent struct {
	// Kinds and Namespaces name what is missing, each with the indices of
	// the objects that need it, in the order of the objects.
	Kinds, Namespaces []AbsentGroup
}

// AbsentGroup is one missing kind ("ServiceMonitor.monitoring.coreos.com
// (v1)") or namespace, with the objects that need it.
type AbsentGroup struct {
	Name    string
	Objects []int
}

// Empty reports whether nothing is missing.
func (a Absent) Empty() bool { return len(a.Kinds) == 0 && len(a.Namespaces) == 0 }

// Absent finds what applying objs needs that the server lacks (see Absent).
// It reads what Apply reads anyway, and no more: discovery (read once
// more for a kind it lacks, as Apply does, which then does not read it
// again), and the namespaces no object creates (by the list of namespaces
// Apply reads when the objects hold several, else a GET each). Objects to
// delete need nothing. A kind discovery cannot tell (the server failing)
// is not reported: Apply reports it.
func (m *Manager) Absent(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions) (Absent, error) {
	defined := map[schema.GroupKind]bool{}
	for _, gk := range CRDKinds(objs) {
		defined[gk] = true
	}
	created := map[string]bool{}
	for _, ns := range Namespaces(objs) {
		created[ns] = true
	}
	kinds := map[string][]int{}
	namespaces := map[string][]int{}
	mapped := map[schema.GroupVersionKind]*meta.RESTMapping{}
	for i, o := range objs {
		if o.GetAnnotations()[manifest.DeleteAnnotation] == "true" {
			continue
		}
		gvk := o.GroupVersionKind()
		namespaced := o.GetNamespace() != ""
		if !defined[gvk.GroupKind()] {
			mapping, known := mapped[gvk]
			if !known {
				mapping = m.absentMapping(gvk)
				mapped[gvk] = mapping
			}
			if mapping == nil {
				kinds[kindName(gvk)] = append(kinds[kindName(gvk)], i)
			} else if mapping != noMapping {
				namespaced = mapping.Scope.Name() == meta.RESTScopeNameNamespace
			}
		}
		if ns := o.GetNamespace(); namespaced && !created[ns] {
			namespaces[ns] = append(namespaces[ns], i)
		}
	}
	var a Absent
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		a.Kinds = append(a.Kinds, AbsentGroup{Name: name, Objects: kinds[name]})
	}
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		exists, err := m.namespaceExists(ctx, ns, opts)
		if err != nil {
			return Absent{}, err
		}
		if !exists {
			a.Namespaces = append(a.Namespaces, AbsentGroup{Name: ns, Objects: namespaces[ns]})
		}
	}
	return a, nil
}

// noMapping stands for a kind whose mapping could not be read (not a
// missing kind).
var noMapping = &meta.RESTMapping{}

// absentMapping returns gvk's mapping, nil when the server has no such
// kind (discovery read again once, as Apply would), noMapping when
// discovery fails.
func (m *Manager) absentMapping(gvk schema.GroupVersionKind) *meta.RESTMapping {
	for {
		seen := m.mapper.resets()
		mapping, err := m.mapping(gvk)
		switch {
		case err == nil:
			return mapping
		case !meta.IsNoMatchError(err):
			return noMapping
		case m.refreshOnce(gvk.GroupKind(), seen):
			continue
		}
		return nil
	}
}

// kindName prints a kind for messages: "ServiceMonitor.monitoring.coreos.com
// (v1)", "Widget (v1)" for the core group.
func kindName(gvk schema.GroupVersionKind) string {
	name := gvk.Kind
	if gvk.Group != "" {
		name += "." + gvk.Group
	}
	return name + " (" + gvk.Version + ")"
}
