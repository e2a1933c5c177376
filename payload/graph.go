package payload

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// fileNameRE is the CVO's run-level pattern: 0000_<NN>_<component>_<rest>,
// where the component is the shortest dash-separated alphanumeric run that is
// followed by an underscore.
var fileNameRE = regexp.MustCompile(`^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_`)

// ParseFileName returns the run level and component a payload file name
// encodes ("0000_50_cluster-ingress-operator_02_deployment.yaml" is run level
// 50, component cluster-ingress-operator). ok is false for names that do not
// follow the pattern; such files run last.
func ParseFileName(name string) (runLevel int, component string, ok bool) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	m := fileNameRE.FindStringSubmatch(name)
	if m == nil {
		return -1, "", false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1, "", false
	}
	return n, m[2], true
}

// Task is one object to apply, at its place in the graph.
type Task struct {
	Manifest *manifest.Manifest
	// Index is the 1-based position of the task in apply order; Total is the
	// number of tasks in the graph.
	Index, Total int
}

// String prints `Kind "ns/name" (i of N)`, the CVO's way of naming a task.
func (t *Task) String() string {
	id := t.Manifest.ID()
	name := id.Name
	if id.Namespace != "" {
		name = id.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %q (%d of %d)", id.Kind, name, t.Index, t.Total)
}

// NoRunLevel is the run level of files whose names do not parse.
const NoRunLevel = -1

// TaskNode is a unit of the graph: the tasks of one component at one run
// level (or one Job, or all files whose names do not parse), applied serially
// in order.
type TaskNode struct {
	// Index is the node's position in TaskGraph.Nodes.
	Index int
	// RunLevel is the run level of the node's files, or NoRunLevel.
	RunLevel int
	// Component is the component of the node's files ("" for NoRunLevel).
	Component string
	// Barrier is true for a Job node: everything before it finishes before it
	// starts, and everything after it waits for it and needs it to succeed.
	Barrier bool
	// Tasks are applied in this order.
	Tasks []*Task
	// In are the nodes that must finish (in any way) before this one starts.
	In []int
	// Requires are the nodes (a subset of this node's ancestors) that must
	// succeed for this node to run; when one fails or is skipped, this node is
	// skipped. They are: the same component's previous node, the node that
	// creates a CustomResourceDefinition this node's objects need, and any
	// Job before this node.
	Requires []int
	// Out are the nodes that have this one in their In.
	Out []int
}

// String prints "[i] run level NN component (n tasks)".
func (n *TaskNode) String() string {
	return fmt.Sprintf("[%d] %s (%d tasks)", n.Index, n.Label(), len(n.Tasks))
}

// Label names the node without its index: "50/cluster-ingress-operator",
// "50/job batch/v1 Job ns/name" or "unordered".
func (n *TaskNode) Label() string {
	switch {
	case n.RunLevel == NoRunLevel && n.Barrier:
		return "unordered/job " + n.Tasks[0].Manifest.ID().String()
	case n.RunLevel == NoRunLevel:
		return "unordered"
	case n.Barrier:
		return fmt.Sprintf("%02d/%s/job %s", n.RunLevel, n.Component, n.Tasks[0].Manifest.ID().String())
	}
	return fmt.Sprintf("%02d/%s", n.RunLevel, n.Component)
}

// TaskGraph is the ordered, partly parallel plan to apply a selection.
type TaskGraph struct {
	// Nodes in a topological order: every node comes after its In.
	Nodes []*TaskNode
	// Tasks are all tasks in apply order.
	Tasks []*Task
}

// orderKey sorts manifests into apply order.
type orderKey struct {
	parsed    bool
	runLevel  int
	component string
}

// SortForApply returns ms in apply order: by run level (numerically), then
// component, then file name, then document; files whose names do not parse
// come last in name order. The sort is stable, so equal names keep load
// order (manifests/ before release-manifests/).
func SortForApply(ms []*manifest.Manifest) []*manifest.Manifest {
	type keyed struct {
		m    *manifest.Manifest
		key  orderKey
		base string
	}
	ks := make([]keyed, len(ms))
	for i, m := range ms {
		level, comp, ok := ParseFileName(m.OriginalFilename)
		ks[i] = keyed{m: m, key: orderKey{parsed: ok, runLevel: level, component: comp}, base: m.OriginalFilename}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.key.parsed != b.key.parsed {
			return a.key.parsed
		}
		if a.key.runLevel != b.key.runLevel {
			return a.key.runLevel < b.key.runLevel
		}
		if a.key.component != b.key.component {
			return a.key.component < b.key.component
		}
		if a.base != b.base {
			return a.base < b.base
		}
		if a.m.File == b.m.File {
			return a.m.Doc < b.m.Doc
		}
		return false
	})
	out := make([]*manifest.Manifest, len(ks))
	for i, k := range ks {
		out[i] = k.m
	}
	return out
}

// IsJob reports whether m is a batch Job, which the graph treats as a barrier.
func IsJob(m *manifest.Manifest) bool {
	return m.GVK.Group == "batch" && m.GVK.Kind == "Job"
}

// NewTaskGraph orders ms (see SortForApply) and builds the CVO's graph:
// run levels in series; the components of one run level in parallel, the
// files of a component serially; a Job is a barrier that splits the order in
// two; files whose names do not parse run last in one serial node. Failure
// propagation (TaskNode.Requires) is narrower than ordering: a failed node
// stops only the nodes that need it.
func NewTaskGraph(ms []*manifest.Manifest) *TaskGraph {
	ordered := SortForApply(ms)
	g := &TaskGraph{Tasks: make([]*Task, len(ordered))}
	for i, m := range ordered {
		g.Tasks[i] = &Task{Manifest: m, Index: i + 1, Total: len(ordered)}
	}

	var (
		prevGroup  []int // nodes of the previous run level (or the last barrier)
		curGroup   []int // nodes of the run level being built
		curLevel   = -2  // run level of curGroup
		lastOfComp = map[string]int{}
		barriers   []int              // every Job node so far
		crdNode    = map[string]int{} // "group/Kind" of a CRD -> node that creates it
		cur        *TaskNode
	)
	newNode := func(level int, comp string, barrier bool) *TaskNode {
		n := &TaskNode{Index: len(g.Nodes), RunLevel: level, Component: comp, Barrier: barrier}
		n.In = append(n.In, prevGroup...)
		if barrier {
			n.Requires = append(n.Requires, prevGroup...)
		}
		if len(barriers) > 0 {
			n.Requires = append(n.Requires, barriers[len(barriers)-1])
		}
		if prev, ok := lastOfComp[comp]; ok && comp != "" {
			n.Requires = appendUnique(n.Requires, prev)
		}
		g.Nodes = append(g.Nodes, n)
		return n
	}
	closeGroup := func() {
		if len(curGroup) > 0 {
			prevGroup = curGroup
			curGroup = nil
		}
	}
	for _, t := range g.Tasks {
		level, comp, ok := ParseFileName(t.Manifest.OriginalFilename)
		if !ok {
			level, comp = NoRunLevel, ""
		}
		switch {
		case IsJob(t.Manifest):
			closeGroup()
			n := newNode(level, comp, true)
			n.Tasks = []*Task{t}
			prevGroup = []int{n.Index}
			barriers = append(barriers, n.Index)
			cur, curLevel = nil, -2
			if comp != "" {
				lastOfComp[comp] = n.Index
			}
			continue
		case level != curLevel:
			closeGroup()
			curLevel = level
			cur = nil
		}
		if cur == nil || cur.Component != comp {
			cur = newNode(level, comp, false)
			curGroup = append(curGroup, cur.Index)
			if comp != "" {
				lastOfComp[comp] = cur.Index
			}
		}
		cur.Tasks = append(cur.Tasks, t)
		// A custom resource needs the node that creates its CRD.
		if crd, ok := crdNode[t.Manifest.GVK.Group+"/"+t.Manifest.GVK.Kind]; ok && crd != cur.Index {
			cur.Requires = appendUnique(cur.Requires, crd)
			if crd >= curGroup[0] {
				// Same run level, another component: order it after the CRD.
				// Earlier run levels are ordered before this one already.
				cur.In = appendUnique(cur.In, crd)
			}
		}
		if key, ok := crdKey(t.Manifest); ok {
			if _, seen := crdNode[key]; !seen {
				crdNode[key] = cur.Index
			}
		}
	}
	for _, n := range g.Nodes {
		sort.Ints(n.In)
		sort.Ints(n.Requires)
		for _, in := range n.In {
			g.Nodes[in].Out = append(g.Nodes[in].Out, n.Index)
		}
	}
	return g
}

// crdKey returns "group/Kind" for a CustomResourceDefinition manifest.
func crdKey(m *manifest.Manifest) (string, bool) {
	if m.GVK.Group != "apiextensions.k8s.io" || m.GVK.Kind != "CustomResourceDefinition" {
		return "", false
	}
	group, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "names", "kind")
	if group == "" || kind == "" {
		return "", false
	}
	return group + "/" + kind, true
}

func appendUnique(list []int, v int) []int {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}
