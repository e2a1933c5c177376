package payload

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints the graph for people: one block per node in order, with
// what it waits for and the objects it applies; a step prints as
// "FILE step NAME", followed by the objects it runs after.
func (g *TaskGraph) WriteText(w io.Writer) error {
	var b strings.Builder
	if g.Order != "" {
		fmt.Fprintf(&b, "%s\n", g.Order.Describe())
	}
	if steps := g.StepCount(); steps > 0 {
		fmt.Fprintf(&b, "%s (%s, %s) in %s\n", plural(len(g.Tasks), "task"), plural(len(g.Tasks)-steps, "object"), plural(steps, "step"), plural(len(g.Nodes), "node"))
	} else {
		fmt.Fprintf(&b, "%s in %s\n", plural(len(g.Tasks), "task"), plural(len(g.Nodes), "node"))
	}
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "%s", n)
		if len(n.In) > 0 {
			fmt.Fprintf(&b, " after %s", intList(n.In))
		}
		if len(n.Requires) > 0 {
			fmt.Fprintf(&b, " requires %s", intList(n.Requires))
		}
		b.WriteByte('\n')
		for _, t := range n.Tasks {
			fmt.Fprintf(&b, "    %s %s", t.Position(), t.Describe())
			for i, a := range t.After {
				sep := ", "
				if i == 0 {
					sep = " after "
				}
				fmt.Fprintf(&b, "%s%s", sep, a.Describe())
			}
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteDOT prints the graph in Graphviz DOT: a node per TaskNode labelled
// with its run level, component, task count and the names of its steps;
// solid edges order, dashed red edges are requirements that are not also
// ordering edges.
func (g *TaskGraph) WriteDOT(w io.Writer) error {
	var b strings.Builder
	b.WriteString("digraph payload {\n  rankdir=LR;\n  node [shape=box];\n")
	if g.Order != "" {
		fmt.Fprintf(&b, "  label=%q;\n", g.Order.Describe())
	}
	for _, n := range g.Nodes {
		shape := ""
		if n.Barrier {
			shape = ", shape=octagon"
		}
		label := fmt.Sprintf("%s\n%s", n.Label(), plural(len(n.Tasks), "task"))
		for _, t := range n.Tasks {
			if t.IsStep() {
				label += "\n" + t.Describe()
			}
		}
		fmt.Fprintf(&b, "  n%d [label=%q%s];\n", n.Index, label, shape)
	}
	for _, n := range g.Nodes {
		for _, in := range n.In {
			fmt.Fprintf(&b, "  n%d -> n%d;\n", in, n.Index)
		}
		for _, r := range n.Requires {
			if !contains(n.In, r) {
				fmt.Fprintf(&b, "  n%d -> n%d [style=dashed, color=red];\n", r, n.Index)
			}
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonGraph is the -o json shape of a graph; field names are part of the CLI
// contract.
type jsonGraph struct {
	Order Order      `json:"order,omitempty"`
	Tasks int        `json:"tasks"`
	Nodes []jsonNode `json:"nodes"`
}

type jsonNode struct {
	Index     int        `json:"index"`
	RunLevel  *int       `json:"runLevel"`
	Component string     `json:"component,omitempty"`
	Barrier   bool       `json:"barrier,omitempty"`
	In        []int      `json:"in"`
	Requires  []int      `json:"requires"`
	Tasks     []jsonTask `json:"tasks"`
}

// jsonTask is an object (doc, apiVersion, kind, namespace, name) or a step
// (step, after: the indexes of the tasks it runs after).
type jsonTask struct {
	Index      int    `json:"index"`
	File       string `json:"file"`
	Doc        *int   `json:"doc,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	Step       string `json:"step,omitempty"`
	After      []int  `json:"after,omitempty"`
}

// WriteJSON prints the graph as JSON: {"order", "tasks": N, "nodes": [{index,
// runLevel (null when the file name does not parse), component, barrier, in,
// requires, tasks: [...]}]}, where a task is {index, file, doc, apiVersion,
// kind, namespace, name} for an object and {index, file, step, after} for a
// step (after: the indexes of the tasks applying the objects it runs after).
func (g *TaskGraph) WriteJSON(w io.Writer) error {
	out := jsonGraph{Order: g.Order, Tasks: len(g.Tasks), Nodes: make([]jsonNode, len(g.Nodes))}
	for i, n := range g.Nodes {
		jn := jsonNode{Index: n.Index, Component: n.Component, Barrier: n.Barrier, In: nonNil(n.In), Requires: nonNil(n.Requires)}
		if n.RunLevel != NoRunLevel {
			level := n.RunLevel
			jn.RunLevel = &level
		}
		for _, t := range n.Tasks {
			m := t.Manifest
			if m == nil {
				jt := jsonTask{Index: t.Index, File: t.StepFile, Step: t.Step.Name()}
				for _, a := range t.After {
					jt.After = append(jt.After, a.Index)
				}
				jn.Tasks = append(jn.Tasks, jt)
				continue
			}
			doc := m.Doc
			jn.Tasks = append(jn.Tasks, jsonTask{Index: t.Index, File: m.File, Doc: &doc, APIVersion: m.Obj.GetAPIVersion(),
				Kind: m.GVK.Kind, Namespace: m.Obj.GetNamespace(), Name: m.Obj.GetName()})
		}
		out.Nodes[i] = jn
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

func intList(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// StepCount returns how many of the graph's tasks are steps.
func (g *TaskGraph) StepCount() int {
	n := 0
	for _, t := range g.Tasks {
		if t.IsStep() {
			n++
		}
	}
	return n
}

// plural prints "1 step", "2 steps".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
