package payload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

func TestParseFileName(t *testing.T) {
	tests := []struct {
		name      string
		level     int
		component string
		ok        bool
	}{
		{"0000_50_cluster-ingress-operator_02-deployment.yaml", 50, "cluster-ingress-operator", true},
		{"release-manifests/0000_10_config-operator_01_x.crd.yaml", 10, "config-operator", true},
		{"0000_05_config-operator_02_apiserver.cr.yaml", 5, "config-operator", true},
		{"0000_5_x_y.yaml", 5, "x", true},
		{"0000_90_cluster-version-operator_02_servicemonitor.yaml", 90, "cluster-version-operator", true},
		{"0000_50_a-b-c_d-e_f.yaml", 50, "a-b-c", true},
		{"0000_50_nocomponent.yaml", -1, "", false},
		{"0001_50_x_y.yaml", -1, "", false},
		{"deployment.yaml", -1, "", false},
		{"0000_xx_a_b.yaml", -1, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			level, comp, ok := ParseFileName(tc.name)
			if level != tc.level || comp != tc.component || ok != tc.ok {
				t.Errorf("ParseFileName = %d, %q, %v; want %d, %q, %v", level, comp, ok, tc.level, tc.component, tc.ok)
			}
		})
	}
}

// obj builds a manifest for graph tests: "file:Kind/name" or with group "file:Kind.group/name".
func obj(t *testing.T, file, kind, name string, extra ...string) *manifest.Manifest {
	t.Helper()
	apiVersion := "v1"
	switch kind {
	case "Job":
		apiVersion = "batch/v1"
	case "CustomResourceDefinition":
		apiVersion = "apiextensions.k8s.io/v1"
	case "Widget":
		apiVersion = "example.com/v1"
	}
	y := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n%s", apiVersion, kind, name, strings.Join(extra, "\n"))
	ms, err := manifest.Parse(file, []byte(y), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &ms[0]
}

func crd(t *testing.T, file string) *manifest.Manifest {
	return obj(t, file, "CustomResourceDefinition", "widgets.example.com", "spec:\n  group: example.com\n  names:\n    kind: Widget\n")
}

type nodeSummary struct {
	Label    string
	Files    []string
	In       []int
	Requires []int
}

func summarizeGraph(g *TaskGraph) []nodeSummary {
	var out []nodeSummary
	for _, n := range g.Nodes {
		s := nodeSummary{Label: n.Label(), In: n.In, Requires: n.Requires}
		for _, t := range n.Tasks {
			if t.IsStep() {
				s.Files = append(s.Files, t.StepFile)
				continue
			}
			s.Files = append(s.Files, t.Manifest.OriginalFilename)
		}
		out = append(out, s)
	}
	return out
}

func TestNewTaskGraph(t *testing.T) {
	tests := []struct {
		name string
		in   func(t *testing.T) []*manifest.Manifest
		want []nodeSummary
	}{
		{
			name: "run levels in series by file name, components in parallel",
			in: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					obj(t, "0000_50_b_1.yaml", "ConfigMap", "b1"),
					obj(t, "0000_50_a_2.yaml", "ConfigMap", "a2"),
					obj(t, "0000_50_a_1.yaml", "ConfigMap", "a1"),
					obj(t, "0000_100_z_1.yaml", "ConfigMap", "z1"),
					obj(t, "0000_9_c_1.yaml", "ConfigMap", "c1"),
				}
			},
			// As os.ReadDir sorts, "0000_100_" comes before "0000_50_".
			want: []nodeSummary{
				{Label: "100/z", Files: []string{"0000_100_z_1.yaml"}},
				{Label: "50/a", Files: []string{"0000_50_a_1.yaml", "0000_50_a_2.yaml"}, In: []int{0}, Requires: []int{0}},
				{Label: "50/b", Files: []string{"0000_50_b_1.yaml"}, In: []int{0}, Requires: []int{0}},
				{Label: "09/c", Files: []string{"0000_9_c_1.yaml"}, In: []int{1, 2}, Requires: []int{1, 2}},
			},
		},
		{
			name: "consecutive run levels of one component each share a serial node",
			in: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					obj(t, "0000_00_a_1.yaml", "ConfigMap", "a1"),
					obj(t, "0000_03_b_1.yaml", "ConfigMap", "b1"),
					obj(t, "0000_05_c_1.yaml", "ConfigMap", "c1"),
					obj(t, "0000_05_d_1.yaml", "ConfigMap", "d1"),
					obj(t, "0000_10_e_1.yaml", "ConfigMap", "e1"),
					obj(t, "0000_20_e_2.yaml", "ConfigMap", "e2"),
					obj(t, "0000_20_e_3.yaml", "ConfigMap", "e3"),
				}
			},
			want: []nodeSummary{
				{Label: "00/a .. 03/b", Files: []string{"0000_00_a_1.yaml", "0000_03_b_1.yaml"}},
				{Label: "05/c", Files: []string{"0000_05_c_1.yaml"}, In: []int{0}, Requires: []int{0}},
				{Label: "05/d", Files: []string{"0000_05_d_1.yaml"}, In: []int{0}, Requires: []int{0}},
				{Label: "10/e .. 20/e", Files: []string{"0000_10_e_1.yaml", "0000_20_e_2.yaml", "0000_20_e_3.yaml"}, In: []int{1, 2}, Requires: []int{1, 2}},
			},
		},
		{
			name: "the CVO's own manifests/ come first",
			in: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					obj(t, "release-manifests/0000_00_x_1.yaml", "ConfigMap", "x1"),
					obj(t, "release-manifests/0000_00_y_1.yaml", "ConfigMap", "y1"),
					obj(t, "manifests/0000_90_cvo_1.yaml", "ConfigMap", "cvo90"),
					obj(t, "manifests/0000_00_cvo_1.yaml", "ConfigMap", "cvo00"),
				}
			},
			want: []nodeSummary{
				{Label: "00/cvo .. 90/cvo", Files: []string{"0000_00_cvo_1.yaml", "0000_90_cvo_1.yaml"}},
				{Label: "00/x", Files: []string{"0000_00_x_1.yaml"}, In: []int{0}, Requires: []int{0}},
				{Label: "00/y", Files: []string{"0000_00_y_1.yaml"}, In: []int{0}, Requires: []int{0}},
			},
		},
		{
			name: "a job is a barrier",
			in: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					obj(t, "0000_50_a_1.yaml", "ConfigMap", "a1"),
					obj(t, "0000_50_b_1.yaml", "ConfigMap", "b1"),
					obj(t, "0000_50_b_2-job.yaml", "Job", "migrate"),
					obj(t, "0000_50_b_3.yaml", "ConfigMap", "b3"),
					obj(t, "0000_50_c_1.yaml", "ConfigMap", "c1"),
					obj(t, "0000_60_d_1.yaml", "ConfigMap", "d1"),
				}
			},
			want: []nodeSummary{
				{Label: "50/a", Files: []string{"0000_50_a_1.yaml"}},
				{Label: "50/b", Files: []string{"0000_50_b_1.yaml"}},
				{Label: "50/b/job Job.batch/migrate", Files: []string{"0000_50_b_2-job.yaml"}, In: []int{0, 1}, Requires: []int{0, 1}},
				{Label: "50/b", Files: []string{"0000_50_b_3.yaml"}, In: []int{2}, Requires: []int{2}},
				{Label: "50/c", Files: []string{"0000_50_c_1.yaml"}, In: []int{2}, Requires: []int{2}},
				{Label: "60/d", Files: []string{"0000_60_d_1.yaml"}, In: []int{3, 4}, Requires: []int{3, 4}},
			},
		},
		{
			name: "a payload file whose name does not parse keeps its place; others run last",
			in: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					obj(t, "extra/zz.yaml", "ConfigMap", "z"),
					obj(t, "release-manifests/0000_50_a_1.yaml", "ConfigMap", "a1"),
					obj(t, "release-manifests/0000_50_b_1.yaml", "ConfigMap", "b1"),
					obj(t, "release-manifests/0000_50_nocomponent.yaml", "ConfigMap", "nc"),
					obj(t, "release-manifests/0000_60_c_1.yaml", "ConfigMap", "c1"),
					obj(t, "extra/aa.yaml", "ConfigMap", "a"),
				}
			},
			want: []nodeSummary{
				{Label: "50/a", Files: []string{"0000_50_a_1.yaml"}},
				{Label: "50/b", Files: []string{"0000_50_b_1.yaml"}},
				{Label: "unordered .. unordered", Files: []string{"0000_50_nocomponent.yaml", "0000_60_c_1.yaml", "aa.yaml", "zz.yaml"}, In: []int{0, 1}, Requires: []int{0, 1}},
			},
		},
		{
			name: "custom resources get no edge to their CRD: the engine waits for it",
			in: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					crd(t, "0000_10_a_crd.yaml"),
					obj(t, "0000_10_b_cr.yaml", "Widget", "w1"),
					obj(t, "0000_20_c_cr.yaml", "Widget", "w2"),
				}
			},
			want: []nodeSummary{
				{Label: "10/a", Files: []string{"0000_10_a_crd.yaml"}},
				{Label: "10/b", Files: []string{"0000_10_b_cr.yaml"}},
				{Label: "20/c", Files: []string{"0000_20_c_cr.yaml"}, In: []int{0, 1}, Requires: []int{0, 1}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graphOf(tc.in(t))
			if diff := cmp.Diff(tc.want, summarizeGraph(g)); diff != "" {
				var b bytes.Buffer
				_ = g.WriteText(&b)
				t.Errorf("graph (-want +got):\n%s\n%s", diff, b.String())
			}
			checkGraphInvariants(t, g)
		})
	}
}

// checkGraphInvariants: nodes are topologically ordered, Out mirrors In,
// requirements are ancestors, tasks are numbered 1..N in node order.
func checkGraphInvariants(t *testing.T, g *TaskGraph) {
	t.Helper()
	ancestors := make([]map[int]bool, len(g.Nodes))
	next := 1
	for i, n := range g.Nodes {
		if n.Index != i {
			t.Errorf("node %d has Index %d", i, n.Index)
		}
		ancestors[i] = map[int]bool{}
		for _, in := range n.In {
			if in >= i {
				t.Errorf("node %d: In %d is not before it", i, in)
				continue
			}
			ancestors[i][in] = true
			for a := range ancestors[in] {
				ancestors[i][a] = true
			}
			found := false
			for _, o := range g.Nodes[in].Out {
				found = found || o == i
			}
			if !found {
				t.Errorf("node %d: In %d lacks the Out edge", i, in)
			}
		}
		for _, r := range n.Requires {
			if !ancestors[i][r] {
				t.Errorf("node %d: requires %d, which is not an ancestor", i, r)
			}
		}
		for _, task := range n.Tasks {
			if task.Index != next || task.Total != len(g.Tasks) {
				t.Errorf("task %s: index %d of %d, want %d of %d", task.Position(), task.Index, task.Total, next, len(g.Tasks))
			}
			next++
		}
	}
}

func TestRunGraph(t *testing.T) {
	ms := []*manifest.Manifest{
		obj(t, "0000_10_a_1.yaml", "ConfigMap", "a1"),
		obj(t, "0000_10_b_1.yaml", "ConfigMap", "b1"),
		obj(t, "0000_10_c_1.yaml", "ConfigMap", "c1"),
		obj(t, "0000_20_a_1.yaml", "ConfigMap", "a2"),
		obj(t, "0000_20_b_1.yaml", "ConfigMap", "b2"),
		obj(t, "0000_30_a_1.yaml", "ConfigMap", "a3"),
		obj(t, "0000_30_d_1.yaml", "ConfigMap", "d3"),
		obj(t, "0000_40_e_1-job.yaml", "Job", "j"),
		obj(t, "0000_50_f_1.yaml", "ConfigMap", "f5"),
	}
	g := graphOf(ms)

	t.Run("every node runs after its In, at most parallelism at once", func(t *testing.T) {
		for _, par := range []int{1, 2, 8} {
			var mu sync.Mutex
			done := map[int]bool{}
			var order []int
			var running, peak atomic.Int32
			states, errs := RunGraph(context.Background(), g, func(ctx context.Context, n *TaskNode) error {
				cur := running.Add(1)
				defer running.Add(-1)
				for {
					p := peak.Load()
					if cur <= p || peak.CompareAndSwap(p, cur) {
						break
					}
				}
				mu.Lock()
				defer mu.Unlock()
				for _, in := range n.In {
					if !done[in] {
						t.Errorf("node %d ran before its In %d finished", n.Index, in)
					}
				}
				done[n.Index] = true
				order = append(order, n.Index)
				return nil
			}, GraphRunOptions{Parallelism: par})
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if int(peak.Load()) > par {
				t.Errorf("parallelism %d: peak %d", par, peak.Load())
			}
			for i, s := range states {
				if s != NodeSucceeded {
					t.Errorf("node %d: %s", i, s)
				}
			}
			if par == 1 {
				for i := range order {
					if order[i] != i {
						t.Errorf("parallelism 1 ran %v, want node order", order)
						break
					}
				}
			}
		}
	})

	t.Run("a failure stops what comes after it, never its siblings", func(t *testing.T) {
		var ran sync.Map
		states, errs := RunGraph(context.Background(), g, func(ctx context.Context, n *TaskNode) error {
			ran.Store(n.Index, true)
			if n.Label() == "10/a" {
				return errors.New("boom")
			}
			return nil
		}, GraphRunOptions{Parallelism: 2})
		want := map[string]NodeState{
			"10/a": NodeFailed, "10/b": NodeSucceeded, "10/c": NodeSucceeded,
			"20/a": NodeSkipped, "20/b": NodeSkipped,
			"30/a": NodeSkipped, "30/d": NodeSkipped,
			"40/e/job Job.batch/j": NodeSkipped, "50/f": NodeSkipped,
		}
		got := map[string]NodeState{}
		for i, s := range states {
			got[g.Nodes[i].Label()] = s
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("states (-want +got):\n%s", diff)
		}
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		wantMsgs := []string{
			"10/a: boom",
			"20/a: not applied: it requires 10/a, which did not succeed",
			"20/b: not applied: it requires 10/a, which did not succeed",
			"30/a: not applied: it requires 20/a, which did not succeed",
			"30/d: not applied: it requires 20/a, which did not succeed",
			"40/e/job Job.batch/j: not applied: it requires 30/a, which did not succeed",
			"50/f: not applied: it requires 40/e/job Job.batch/j, which did not succeed",
		}
		if diff := cmp.Diff(wantMsgs, msgs); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
		var nodeErr *NodeError
		if !errors.As(errs[0], &nodeErr) || nodeErr.Node.Label() != "10/a" {
			t.Errorf("first error is not the NodeError of 10/a: %#v", errs[0])
		}
		for i, s := range states {
			_, did := ran.Load(i)
			if did != (s == NodeSucceeded || s == NodeFailed) {
				t.Errorf("node %d: state %s but ran=%v", i, s, did)
			}
		}
	})

	t.Run("cancelled context stops dispatching and reports what did not run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		states, errs := RunGraph(ctx, g, func(ctx context.Context, n *TaskNode) error {
			if n.Index == 2 {
				cancel()
			}
			return nil
		}, GraphRunOptions{Parallelism: 1})
		var notRun *NotRunError
		if len(errs) != 1 || !errors.As(errs[0], &notRun) || !errors.Is(errs[0], context.Canceled) {
			t.Fatalf("errors = %v, want one NotRunError for context.Canceled", errs)
		}
		if len(notRun.Nodes) != len(g.Nodes)-3 {
			t.Errorf("not run: %d nodes, want %d", len(notRun.Nodes), len(g.Nodes)-3)
		}
		if got := Summary(states); got != "3 succeeded, 6 notrun" {
			t.Errorf("Summary = %q", got)
		}
	})
}

func TestGraphFormats(t *testing.T) {
	g := graphOf([]*manifest.Manifest{
		crd(t, "0000_10_a_crd.yaml"),
		obj(t, "0000_10_b_cr.yaml", "Widget", "w1"),
		obj(t, "0000_20_c_job.yaml", "Job", "j"),
		obj(t, "other.yaml", "ConfigMap", "x"),
	})
	var text, dot, js bytes.Buffer
	for _, f := range []func() error{func() error { return g.WriteText(&text) }, func() error { return g.WriteDOT(&dot) }, func() error { return g.WriteJSON(&js) }} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	wantText := `update order: the CVO's ByNumberAndComponent, run levels in series, components in parallel; Jobs split it
4 tasks in 4 nodes
[0] 10/a (1 task)
    0000_10_a_crd.yaml#0 CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com
[1] 10/b (1 task)
    0000_10_b_cr.yaml#0 Widget.example.com/w1
[2] 20/c/job Job.batch/j (1 task) after [0 1] requires [0 1]
    0000_20_c_job.yaml#0 Job.batch/j
[3] unordered (1 task) after [2] requires [2]
    other.yaml#0 ConfigMap/x
`
	if diff := cmp.Diff(wantText, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	for _, want := range []string{"digraph payload {", `n0 -> n2;`, `n1 -> n2;`, `n2 [label="20/c/job Job.batch/j\n1 task", shape=octagon];`} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot.String())
		}
	}
	for _, want := range []string{`"tasks": 4`, `"runLevel": null`, `"barrier": true`, `"file": "0000_10_b_cr.yaml"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %q:\n%s", want, js.String())
		}
	}
}

// namedStep is a Step for tests.
type namedStep string

func (s namedStep) Name() string { return string(s) }

func id(m *manifest.Manifest) manifest.ID { return m.ID() }

func TestNewTaskGraphSteps(t *testing.T) {
	type taskSummary struct {
		Node  string
		What  string
		After []string
	}
	summarize := func(g *TaskGraph) []taskSummary {
		var out []taskSummary
		for _, n := range g.Nodes {
			for _, task := range n.Tasks {
				s := taskSummary{Node: n.Label(), What: task.Describe()}
				for _, a := range task.After {
					s.After = append(s.After, a.Describe())
				}
				out = append(out, s)
			}
		}
		return out
	}
	tests := []struct {
		name      string
		objs      func(t *testing.T) []*manifest.Manifest
		steps     func(ms []*manifest.Manifest) []StepPlacement
		want      []taskSummary
		wantNodes []nodeSummary
		wantErr   string
	}{
		{
			name: "a step runs in its file's node, in file-name order, after its objects",
			objs: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					obj(t, "0000_05_a_90_cm.yaml", "ConfigMap", "a90"),
					obj(t, "0000_05_a_92_cm.yaml", "ConfigMap", "a92"),
					obj(t, "0000_05_b_1.yaml", "ConfigMap", "b1"),
				}
			},
			steps: func(ms []*manifest.Manifest) []StepPlacement {
				return []StepPlacement{{Step: namedStep("a/status"), File: "generated/0000_05_a_91_status.step", After: []manifest.ID{id(ms[0])}}}
			},
			want: []taskSummary{
				{Node: "05/a", What: "ConfigMap/a90"},
				{Node: "05/a", What: "step a/status", After: []string{"ConfigMap/a90"}},
				{Node: "05/a", What: "ConfigMap/a92"},
				{Node: "05/b", What: "ConfigMap/b1"},
			},
			wantNodes: []nodeSummary{
				{Label: "05/a", Files: []string{"0000_05_a_90_cm.yaml", "generated/0000_05_a_91_status.step", "0000_05_a_92_cm.yaml"}},
				{Label: "05/b", Files: []string{"0000_05_b_1.yaml"}},
			},
		},
		{
			name: "a step requires the nodes of its objects, and within a run level comes after them",
			objs: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					ns(t, "0000_10_a_00_ns.yaml", "ns-a"),
					crd(t, "0000_20_b_00_crd.yaml"),
					obj(t, "0000_20_x_00.yaml", "ConfigMap", "x"),
					obj(t, "0000_50_c_01.yaml", "ConfigMap", "c1"),
					obj(t, "0000_50_d_01.yaml", "ConfigMap", "d1"),
				}
			},
			steps: func(ms []*manifest.Manifest) []StepPlacement {
				return []StepPlacement{{Step: namedStep("d/reconcile"), File: "generated/0000_50_d_02.step",
					After: []manifest.ID{id(ms[1]), id(ms[0]), id(ms[3]), {Kind: "ConfigMap", Name: "elsewhere"}}}}
			},
			want: []taskSummary{
				{Node: "10/a", What: "Namespace/ns-a"},
				{Node: "20/b", What: "CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com"},
				{Node: "20/x", What: "ConfigMap/x"},
				{Node: "50/c", What: "ConfigMap/c1"},
				{Node: "50/d", What: "ConfigMap/d1"},
				{Node: "50/d", What: "step d/reconcile", After: []string{"Namespace/ns-a", "CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com", "ConfigMap/c1"}},
			},
			// The step's node waits for 50/c, its sibling, as well as the nodes
			// before it.
			wantNodes: []nodeSummary{
				{Label: "10/a", Files: []string{"0000_10_a_00_ns.yaml"}},
				{Label: "20/b", Files: []string{"0000_20_b_00_crd.yaml"}, In: []int{0}, Requires: []int{0}},
				{Label: "20/x", Files: []string{"0000_20_x_00.yaml"}, In: []int{0}, Requires: []int{0}},
				{Label: "50/c", Files: []string{"0000_50_c_01.yaml"}, In: []int{1, 2}, Requires: []int{1, 2}},
				{Label: "50/d", Files: []string{"0000_50_d_01.yaml", "generated/0000_50_d_02.step"}, In: []int{0, 1, 2, 3}, Requires: []int{0, 1, 2, 3}},
			},
		},
		{
			name: "a step whose name does not parse runs last, after the objects of its source file",
			objs: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{
					obj(t, "extra/pp.yaml", "ConfigMap", "source"),
					obj(t, "extra/pq.yaml", "ConfigMap", "other"),
					obj(t, "0000_50_a_1.yaml", "ConfigMap", "a1"),
					obj(t, "0000_50_b_1.yaml", "ConfigMap", "b1"),
				}
			},
			steps: func(ms []*manifest.Manifest) []StepPlacement {
				return []StepPlacement{{Step: namedStep("tuning/source"), File: "generated/pp_tuning-source.step", After: []manifest.ID{id(ms[0])}}}
			},
			want: []taskSummary{
				{Node: "50/a", What: "ConfigMap/a1"},
				{Node: "50/b", What: "ConfigMap/b1"},
				{Node: "unordered", What: "ConfigMap/source"},
				{Node: "unordered", What: "step tuning/source", After: []string{"ConfigMap/source"}},
				{Node: "unordered", What: "ConfigMap/other"},
			},
		},
		{
			name: "a step placed before an object it runs after is an error",
			objs: func(t *testing.T) []*manifest.Manifest {
				return []*manifest.Manifest{obj(t, "0000_50_a_1.yaml", "ConfigMap", "a1")}
			},
			steps: func(ms []*manifest.Manifest) []StepPlacement {
				return []StepPlacement{{Step: namedStep("early"), File: "generated/0000_05_a_1.step", After: []manifest.ID{id(ms[0])}}}
			},
			wantErr: "generated/0000_05_a_1.step: step early: placed before ConfigMap/a1 (0000_50_a_1.yaml#0), which it must come after",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms := tc.objs(t)
			g, err := NewTaskGraph(ms, GraphOptions{Steps: tc.steps(ms)})
			if tc.wantErr != "" {
				var soe *StepOrderError
				if err == nil || err.Error() != tc.wantErr || !errors.As(err, &soe) || g != nil {
					t.Fatalf("err = %v, graph %v; want %q", err, g, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summarize(g)); diff != "" {
				var b bytes.Buffer
				_ = g.WriteText(&b)
				t.Errorf("tasks (-want +got):\n%s\n%s", diff, b.String())
			}
			if tc.wantNodes != nil {
				if diff := cmp.Diff(tc.wantNodes, summarizeGraph(g)); diff != "" {
					t.Errorf("nodes (-want +got):\n%s", diff)
				}
			}
			checkGraphInvariants(t, g)
			for _, task := range g.Tasks {
				for _, a := range task.After {
					if a.Index >= task.Index {
						t.Errorf("%s runs after %s, which comes later", task, a)
					}
				}
			}
		})
	}
}

func TestTaskGraphFormatsWithSteps(t *testing.T) {
	ms := []*manifest.Manifest{
		obj(t, "0000_05_a_90_cm.yaml", "ConfigMap", "a90"),
		obj(t, "0000_05_a_92_cm.yaml", "ConfigMap", "a92"),
	}
	g, err := NewTaskGraph(ms, GraphOptions{Steps: []StepPlacement{{Step: namedStep("a/status"), File: "generated/0000_05_a_91_status.step", After: []manifest.ID{id(ms[0])}}}})
	if err != nil {
		t.Fatal(err)
	}
	var text, dot, js bytes.Buffer
	if err := g.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	wantText := `update order: the CVO's ByNumberAndComponent, run levels in series, components in parallel; Jobs split it
3 tasks (2 objects, 1 step) in 1 node
[0] 05/a (3 tasks)
    0000_05_a_90_cm.yaml#0 ConfigMap/a90
    generated/0000_05_a_91_status.step step a/status after ConfigMap/a90
    0000_05_a_92_cm.yaml#0 ConfigMap/a92
`
	if diff := cmp.Diff(wantText, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if err := g.WriteDOT(&dot); err != nil {
		t.Fatal(err)
	}
	if want := `n0 [label="05/a\n3 tasks\nstep a/status"];`; !strings.Contains(dot.String(), want) {
		t.Errorf("dot lacks %s:\n%s", want, dot.String())
	}
	if err := g.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"index": 2,
          "file": "generated/0000_05_a_91_status.step",
          "step": "a/status",
          "after": [
            1
          ]`, `"doc": 0,`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("json lacks %s:\n%s", want, js.String())
		}
	}
}

// graphOf is NewTaskGraph without steps, which cannot fail.
func graphOf(ms []*manifest.Manifest) *TaskGraph {
	g, _ := NewTaskGraph(ms, GraphOptions{})
	return g
}
