package payload

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

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

// TaskNode is a unit of the graph: tasks applied serially in order. In the
// CVO's graph that is the files of one component at one run level, one
// Job, or (OrderUpdate) several consecutive run levels that have one
// component each, or files whose names do not parse; a component's steps
// are tasks of the node their File places them in.
type TaskNode struct {
	// Index is the node's position in TaskGraph.Nodes.
	Index int
	// RunLevel is the run level of the node's first file, or NoRunLevel
	// when its name does not parse.
	RunLevel int
	// Component is the component of the node's first file ("" for
	// NoRunLevel).
	Component string
	// Barrier is true for a Job node: everything before it finishes before it
	// starts, and everything after it waits for it and needs it to succeed.
	Barrier bool
	// Tasks are applied in this order.
	Tasks []*Task
	// In are the nodes that must finish (in any way) before this one starts.
	In []int
	// Requires are the nodes that must succeed for this node to run; when
	// one fails or is skipped, this node is skipped. In the CVO's graph
	// they are the In nodes: a node runs only when everything before it
	// succeeded.
	Requires []int
	// Out are the nodes that have this one in their In.
	Out []int
}

// String prints "[i] run level NN component (n tasks)" ("1 task").
func (n *TaskNode) String() string {
	return fmt.Sprintf("[%d] %s (%s)", n.Index, n.Label(), plural(len(n.Tasks), "task"))
}

// Label names the node without its index: "50/cluster-ingress-operator",
// "50/job batch/v1 Job ns/name", "unordered", or for a node spanning
// several run levels its first and last: "00/cluster-version-operator ..
// 03/config-operator".
func (n *TaskNode) Label() string {
	switch {
	case n.RunLevel == NoRunLevel && n.Barrier:
		return "unordered/job " + n.Tasks[0].Manifest.ID().String()
	case n.Barrier:
		return fmt.Sprintf("%02d/%s/job %s", n.RunLevel, n.Component, n.Tasks[0].Manifest.ID().String())
	}
	first := levelLabel(n.RunLevel, n.Component)
	if len(n.Tasks) < 2 {
		return first
	}
	last := first
	spans := false
	for _, t := range n.Tasks[1:] {
		level, comp, ok := ParseFileName(t.orderName())
		if !ok {
			level, comp = NoRunLevel, ""
		}
		l := levelLabel(level, comp)
		spans = spans || l != first
		last = l
	}
	if spans {
		return first + " .. " + last
	}
	return first
}

func levelLabel(level int, comp string) string {
	if level == NoRunLevel {
		return "unordered"
	}
	return fmt.Sprintf("%02d/%s", level, comp)
}

// TaskGraph is the ordered, partly parallel plan to apply a selection.
type TaskGraph struct {
	// Nodes in a topological order: every node comes after its In (in
	// OrderReconcile, a step's node may come before a node it waits for:
	// the permutation knows no steps).
	Nodes []*TaskNode
	// Tasks are all tasks in apply order.
	Tasks []*Task
	// Order is how the nodes were made (OrderUpdate for a graph made with
	// none).
	Order Order
}

// SortForApply returns ms in the CVO's order (see sortTasks): the
// payload's manifests/ files first, then the other files, each by file
// name and then document; the order the CVO reads a payload in.
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

// IsJob reports whether m is a batch Job, which the graph treats as a barrier.
func IsJob(m *manifest.Manifest) bool {
	return m != nil && m.GVK.Group == "batch" && m.GVK.Kind == "Job"
}

// GraphOptions say what NewTaskGraph adds to the objects it orders and
// how it makes nodes of them.
type GraphOptions struct {
	// Steps are components' steps to place among the objects (see
	// StepPlacement). Nil: objects only.
	Steps []StepPlacement
	// Order is how the tasks become nodes (see Order); empty:
	// OrderUpdate, the CVO's ByNumberAndComponent.
	Order Order
	// Attempt seeds OrderReconcile's permutation, as the CVO's count of
	// attempts at one payload does; ignored by the other orders.
	Attempt int
}

// NewTaskGraph orders ms as the CVO reads a payload (SortForApply) and
// builds the CVO's graph for opts.Order: every Job is a node of its own
// that everything before it finishes for and everything after it waits on
// (the CVO's SplitOnJobs); between Jobs, OrderUpdate runs run levels in
// series and the components of one run level in parallel (consecutive run
// levels with a single component each share one serial node), OrderInstall
// runs every run level's components at once, and OrderReconcile runs them
// at once in a permuted order. A node waits for its In and requires them
// all to succeed (TaskNode.Requires equals In but for steps), as in the
// CVO: a failed node stops everything after it, never its siblings.
//
// Each step of opts.Steps is a task of the node its File places it in,
// ordered among that node's files by name, and its node waits for and
// requires the nodes that apply the objects its After names (the only
// edges the CVO's graph does not have: the CVO has no steps).
// NewTaskGraph returns a *StepOrderError (joined, one per object) when a
// step's File places it before an object it must come after; the graph is
// then nil. Without steps it never fails.
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

	g.Order = opts.Order
	if g.Order == "" {
		g.Order = OrderUpdate
	}
	g.Nodes = buildNodes(tasks, g.Order, opts.Attempt)
	return g, nil
}

func appendUnique(list []int, v int) []int {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}
