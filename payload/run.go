package payload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// NodeState is where a node ended up after RunGraph.
type NodeState string

// Node states.
const (
	NodeNotRun    NodeState = "NotRun"    // never started (the context ended first)
	NodeSucceeded NodeState = "Succeeded" // fn returned nil
	NodeFailed    NodeState = "Failed"    // fn returned an error
	NodeSkipped   NodeState = "Skipped"   // a node it requires failed or was skipped
)

// NodeError is the failure of one node: fn's error with the node attached.
type NodeError struct {
	Node *TaskNode
	Err  error
}

// Error prints "node label: error".
func (e *NodeError) Error() string { return fmt.Sprintf("%s: %v", e.Node.Label(), e.Err) }

// Unwrap returns fn's error.
func (e *NodeError) Unwrap() error { return e.Err }

// SkippedError says a node did not run because a node it requires did not
// succeed.
type SkippedError struct {
	Node *TaskNode
	// Because is the required node that failed or was itself skipped.
	Because *TaskNode
}

// Error names the skipped node and the one it waited for.
func (e *SkippedError) Error() string {
	return fmt.Sprintf("%s: not applied: it requires %s, which did not succeed", e.Node.Label(), e.Because.Label())
}

// NotRunError reports the nodes that never started because the context ended.
type NotRunError struct {
	Nodes []*TaskNode
	Err   error
}

// Error counts the nodes and names the first.
func (e *NotRunError) Error() string {
	return fmt.Sprintf("%d task nodes not run, beginning with %s: %v", len(e.Nodes), e.Nodes[0].Label(), e.Err)
}

// Unwrap returns the context's error.
func (e *NotRunError) Unwrap() error { return e.Err }

// NodeFunc applies one node's tasks. It is called from several goroutines at
// once, at most once per node.
type NodeFunc func(ctx context.Context, node *TaskNode) error

// GraphRunOptions say how RunGraph walks a graph.
type GraphRunOptions struct {
	// Parallelism is the most nodes running at once; values below 1 mean 1.
	Parallelism int
	// Done, when set, is called as each node finishes: after fn returns,
	// or when the node is skipped. The calls come one at a time, from the
	// goroutine that called RunGraph.
	Done func(node *TaskNode, state NodeState)
}

// RunGraph walks g with at most opts.Parallelism nodes running at once. A
// node starts when every node in its In has finished; it is skipped when a
// node in its Requires failed or was skipped. Independent branches keep
// going after a failure, and RunGraph returns every error: a *NodeError
// per failed node, a *SkippedError per skipped node (in node order), and a
// *NotRunError when the context ended first. The returned states are
// indexed like g.Nodes. Among ready nodes the lowest index starts first,
// so a run with parallelism 1 follows g.Nodes order.
func RunGraph(ctx context.Context, g *TaskGraph, fn NodeFunc, opts GraphRunOptions) ([]NodeState, []error) {
	parallelism, done := opts.Parallelism, opts.Done
	if parallelism < 1 {
		parallelism = 1
	}
	n := len(g.Nodes)
	states := make([]NodeState, n)
	errs := make([]error, n)
	for i := range states {
		states[i] = NodeNotRun
	}
	waiting := make([]int, n)
	var ready []int
	for i, node := range g.Nodes {
		waiting[i] = len(node.In)
		if waiting[i] == 0 {
			ready = append(ready, i)
		}
	}

	type result struct {
		index int
		err   error
	}
	results := make(chan result)
	running := 0
	var wg sync.WaitGroup

	// finish records a finished node and releases its dependents; skipped
	// dependents finish immediately, recursively.
	var finish func(i int)
	finish = func(i int) {
		for _, out := range g.Nodes[i].Out {
			waiting[out]--
			if waiting[out] > 0 {
				continue
			}
			if because := failedRequirement(g, states, out); because >= 0 {
				states[out] = NodeSkipped
				errs[out] = &SkippedError{Node: g.Nodes[out], Because: g.Nodes[because]}
				if done != nil {
					done(g.Nodes[out], NodeSkipped)
				}
				finish(out)
				continue
			}
			ready = append(ready, out)
		}
	}

	for {
		for ctx.Err() == nil && running < parallelism && len(ready) > 0 {
			sort.Ints(ready)
			i := ready[0]
			ready = ready[1:]
			running++
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				err := fn(ctx, g.Nodes[i])
				results <- result{index: i, err: err}
			}(i)
		}
		if running == 0 {
			break
		}
		r := <-results
		running--
		if r.err != nil {
			states[r.index] = NodeFailed
			errs[r.index] = &NodeError{Node: g.Nodes[r.index], Err: r.err}
		} else {
			states[r.index] = NodeSucceeded
		}
		if done != nil {
			done(g.Nodes[r.index], states[r.index])
		}
		finish(r.index)
	}
	wg.Wait()

	var out []error
	var notRun []*TaskNode
	for i, e := range errs {
		if e != nil {
			out = append(out, e)
		}
		if states[i] == NodeNotRun {
			notRun = append(notRun, g.Nodes[i])
		}
	}
	if len(notRun) > 0 {
		cause := ctx.Err()
		if cause == nil {
			cause = errors.New("graph has a cycle or a dangling edge")
		}
		out = append(out, &NotRunError{Nodes: notRun, Err: cause})
	}
	return states, out
}

// failedRequirement returns a required node of node i that did not succeed,
// or -1.
func failedRequirement(g *TaskGraph, states []NodeState, i int) int {
	for _, r := range g.Nodes[i].Requires {
		if states[r] == NodeFailed || states[r] == NodeSkipped {
			return r
		}
	}
	return -1
}

// Summary counts node states, e.g. "12 succeeded, 1 failed, 3 skipped".
func Summary(states []NodeState) string {
	counts := map[NodeState]int{}
	for _, s := range states {
		counts[s]++
	}
	var parts []string
	for _, s := range []NodeState{NodeSucceeded, NodeFailed, NodeSkipped, NodeNotRun} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], strings.ToLower(string(s))))
		}
	}
	return strings.Join(parts, ", ")
}
