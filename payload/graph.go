package payload

import (
	"errors"
	"fmt"
	"path"
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

// Task is one unit of work at its place in the graph: an object to apply
// (Manifest) or a component's step to run (Step). Exactly one of the two is
// set.
type Task struct {
	// Manifest is the object to apply; nil for a step.
	Manifest *manifest.Manifest
	// Step is the step to run; nil for an object.
	Step Step
	// StepFile is the File of the step's placement ("" for an object).
	StepFile string
	// After are, for a step, the tasks that apply the objects its placement
	// names in After, in apply order; they come before the step. Run
	// fails a step whose After task failed instead of running it.
	After []*Task
	// Index is the 1-based position of the task in apply order; Total is the
	// number of tasks in the graph.
	Index, Total int
}

// IsStep reports whether the task runs a step rather than applying an
// object.
func (t *Task) IsStep() bool { return t.Step != nil }

// File returns the file the task comes from: the object's File, or the
// step's StepFile.
func (t *Task) File() string {
	if t.Manifest == nil {
		return t.StepFile
	}
	return t.Manifest.File
}

// Position returns "FILE#DOC" for an object and the FILE for a step.
func (t *Task) Position() string {
	if t.Manifest == nil {
		return t.StepFile
	}
	return t.Manifest.Position()
}

// Describe names what the task does: the object as Kind/ns/name, or
// "step NAME".
func (t *Task) Describe() string {
	if t.Manifest == nil {
		return "step " + t.stepName()
	}
	return t.Manifest.ID().String()
}

// RunLevel returns the run level the task's file name encodes, or
// NoRunLevel when it does not parse.
func (t *Task) RunLevel() int {
	level, _, ok := ParseFileName(t.orderName())
	if !ok {
		return NoRunLevel
	}
	return level
}

// orderName is the file name that places the task.
func (t *Task) orderName() string {
	if t.Manifest == nil {
		return t.StepFile
	}
	return t.Manifest.OriginalFilename
}

func (t *Task) stepName() string {
	if t.Step == nil {
		return ""
	}
	return t.Step.Name()
}

// String prints `Kind "ns/name" (i of N)`, the CVO's way of naming a task,
// or `step "NAME" (i of N)`.
func (t *Task) String() string {
	if t.Manifest == nil {
		return fmt.Sprintf("step %q (%d of %d)", t.stepName(), t.Index, t.Total)
	}
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
// in order; a component's steps are tasks of the node their File places
// them in.
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
	// creates a CustomResourceDefinition this node's objects need, the
	// nodes that apply the objects a step of this node runs after, and any
	// Job before this node.
	Requires []int
	// Out are the nodes that have this one in their In.
	Out []int
}

// String prints "[i] run level NN component (n tasks)" ("1 task").
func (n *TaskNode) String() string {
	return fmt.Sprintf("[%d] %s (%s)", n.Index, n.Label(), plural(len(n.Tasks), "task"))
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

// orderKey sorts tasks into apply order.
type orderKey struct {
	parsed    bool
	runLevel  int
	component string
	base      string
}

func orderKeyOf(name string) orderKey {
	level, comp, ok := ParseFileName(name)
	return orderKey{parsed: ok, runLevel: level, component: comp, base: name}
}

// less orders by run level (numerically), then component, then file name;
// names that do not parse come last in name order.
func (a orderKey) less(b orderKey) (less, equal bool) {
	switch {
	case a.parsed != b.parsed:
		return a.parsed, false
	case a.runLevel != b.runLevel:
		return a.runLevel < b.runLevel, false
	case a.component != b.component:
		return a.component < b.component, false
	case a.base != b.base:
		return a.base < b.base, false
	}
	return false, true
}

// SortForApply returns ms in apply order: by run level (numerically), then
// component, then file name, then document; files whose names do not parse
// come last in name order. The sort is stable, so equal names keep load
// order (manifests/ before release-manifests/).
func SortForApply(ms []*manifest.Manifest) []*manifest.Manifest {
	tasks := make([]*Task, len(ms))
	for i, m := range ms {
		tasks[i] = &Task{Manifest: m}
	}
	sortTasks(tasks)
	out := make([]*manifest.Manifest, len(tasks))
	for i, t := range tasks {
		out[i] = t.Manifest
	}
	return out
}

// sortTasks sorts tasks into apply order (see SortForApply); a step's
// file name is the base of its File, and a step comes after the objects of
// a file of the same name.
func sortTasks(tasks []*Task) {
	keys := make(map[*Task]orderKey, len(tasks))
	for _, t := range tasks {
		name := t.orderName()
		if t.Manifest == nil {
			name = path.Base(name)
		}
		keys[t] = orderKeyOf(name)
	}
	sort.SliceStable(tasks, func(i, j int) bool {
		a, b := tasks[i], tasks[j]
		if less, equal := keys[a].less(keys[b]); !equal {
			return less
		}
		switch {
		case a.Manifest == nil || b.Manifest == nil:
			return b.Manifest == nil && a.Manifest != nil
		case a.Manifest.File == b.Manifest.File:
			return a.Manifest.Doc < b.Manifest.Doc
		}
		return false
	})
}

// IsJob reports whether m is a batch Job, which the graph treats as a barrier.
func IsJob(m *manifest.Manifest) bool {
	return m != nil && m.GVK.Group == "batch" && m.GVK.Kind == "Job"
}

// GraphOptions say what NewTaskGraph adds to the objects it orders.
type GraphOptions struct {
	// Steps are components' steps to place among the objects (see
	// StepPlacement). Nil: objects only.
	Steps []StepPlacement
}

// NewTaskGraph orders ms (see SortForApply) and builds the CVO's graph:
// run levels in series; the components of one run level in parallel, the
// files of a component serially; a Job is a barrier that splits the order in
// two; files whose names do not parse run last in one serial node. Failure
// propagation (TaskNode.Requires) is narrower than ordering: a failed node
// stops only the nodes that need it.
//
// Each step of opts.Steps is a task of the node its File places it in,
// ordered among that node's files by name, and its node requires (and,
// within one run level, comes after) the nodes that apply the objects its
// After names. NewTaskGraph returns a *StepOrderError (joined, one per
// object) when a step's File places it before an object it must come
// after; the graph is then nil. Without steps it never fails.
func NewTaskGraph(ms []*manifest.Manifest, opts GraphOptions) (*TaskGraph, error) {
	steps := opts.Steps
	tasks := make([]*Task, 0, len(ms)+len(steps))
	for _, m := range ms {
		tasks = append(tasks, &Task{Manifest: m})
	}
	placements := map[*Task]StepPlacement{}
	for _, s := range steps {
		t := &Task{Step: s.Step, StepFile: s.File}
		placements[t] = s
		tasks = append(tasks, t)
	}
	sortTasks(tasks)
	g := &TaskGraph{Tasks: tasks}
	byID := make(map[manifest.ID]*Task, len(ms))
	for i, t := range tasks {
		t.Index, t.Total = i+1, len(tasks)
		if t.Manifest != nil {
			if _, seen := byID[t.Manifest.ID()]; !seen {
				byID[t.Manifest.ID()] = t
			}
		}
	}
	var errs []error
	for _, t := range tasks {
		s, ok := placements[t]
		if !ok {
			continue
		}
		for _, id := range s.After {
			a, ok := byID[id]
			switch {
			case !ok:
			case a.Index > t.Index:
				errs = append(errs, &StepOrderError{Step: s, Object: id, File: a.Position()})
			default:
				t.After = append(t.After, a)
			}
		}
		sort.Slice(t.After, func(i, j int) bool { return t.After[i].Index < t.After[j].Index })
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	var (
		prevGroup  []int // nodes of the previous run level (or the last barrier)
		curGroup   []int // nodes of the run level being built
		curLevel   = -2  // run level of curGroup
		lastOfComp = map[string]int{}
		barriers   []int              // every Job node so far
		crdNode    = map[string]int{} // "group/Kind" of a CRD -> node that creates it
		nodeOf     = map[*Task]int{}  // task -> its node
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
	// needs makes the current node require node (and, within its run
	// level, come after it).
	needs := func(node int) {
		if node == cur.Index {
			return
		}
		cur.Requires = appendUnique(cur.Requires, node)
		if len(curGroup) > 0 && node >= curGroup[0] {
			// Same run level, another component: order it after that node.
			// Earlier run levels are ordered before this one already.
			cur.In = appendUnique(cur.In, node)
		}
	}
	for _, t := range g.Tasks {
		level, comp, ok := ParseFileName(t.orderName())
		if !ok {
			level, comp = NoRunLevel, ""
		}
		switch {
		case IsJob(t.Manifest):
			closeGroup()
			n := newNode(level, comp, true)
			n.Tasks = []*Task{t}
			nodeOf[t] = n.Index
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
		nodeOf[t] = cur.Index
		if t.Manifest == nil {
			// A step needs the nodes of the objects it runs after.
			for _, a := range t.After {
				needs(nodeOf[a])
			}
			continue
		}
		// A custom resource needs the node that creates its CRD.
		if crd, ok := crdNode[t.Manifest.GVK.Group+"/"+t.Manifest.GVK.Kind]; ok {
			needs(crd)
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
	return g, nil
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
