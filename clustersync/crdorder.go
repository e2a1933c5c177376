package clustersync

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// crdAfter finds, in a graph run without the install order's stage (the
// CustomResourceDefinitions then come in their own place), the object
// tasks whose kind's CustomResourceDefinition cannot be applied before
// they finish: it is later in the same node (a node's tasks run one after
// the other), or in a node that waits for theirs (run levels in series).
// Waiting for such a kind would only run out the type wait (two minutes):
// the task fails at once instead, saying where the definition is. The
// result maps Task.Index to that definition's task.
func crdAfter(g *payload.TaskGraph) map[int]*payload.Task {
	defining := map[schema.GroupKind]*payload.Task{}
	node := map[*payload.Task]int{}
	for _, n := range g.Nodes {
		for _, t := range n.Tasks {
			node[t] = n.Index
			if t.IsStep() {
				continue
			}
			for _, gk := range resourceapply.CRDKinds([]*unstructured.Unstructured{t.Manifest.Obj}) {
				if _, seen := defining[gk]; !seen {
					defining[gk] = t
				}
			}
		}
	}
	if len(defining) == 0 {
		return nil
	}
	// after[i][j]: node j waits, directly or not, for node i.
	after := make([]map[int]bool, len(g.Nodes))
	reach := func(from int) map[int]bool {
		if after[from] != nil {
			return after[from]
		}
		seen := map[int]bool{}
		queue := []int{from}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, o := range g.Nodes[n].Out {
				if !seen[o] {
					seen[o] = true
					queue = append(queue, o)
				}
			}
		}
		after[from] = seen
		return seen
	}
	out := map[int]*payload.Task{}
	for _, t := range g.Tasks {
		if t.IsStep() {
			continue
		}
		crd, ok := defining[t.Manifest.Obj.GroupVersionKind().GroupKind()]
		if !ok {
			continue
		}
		tn, cn := node[t], node[crd]
		if (tn == cn && crd.Index > t.Index) || (tn != cn && reach(tn)[cn]) {
			out[t.Index] = crd
		}
	}
	return out
}

// crdAfterError is the failure of a task whose kind the server does not
// serve and whose CustomResourceDefinition comes after it (crdAfter).
func crdAfterError(err error, t, crd *payload.Task, order payload.Order) error {
	var ae *resourceapply.ApplyError
	if !errors.As(err, &ae) || ae.Reason != resourceapply.ReasonResourceTypeMissing {
		return err
	}
	gvk := t.Manifest.Obj.GroupVersionKind()
	c := *ae
	c.Err = fmt.Errorf("the server has no API for %s in %s, and its CustomResourceDefinition (%s) comes after it in the %s order: it cannot be waited for (apply again once it is in, or use --order install)",
		gvk.Kind, gvk.GroupVersion(), crd.Manifest.Position(), order)
	return &c
}
