package payload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// recorder is an Applier that records when each task starts and finishes
// (as positions in one sequence) and fails the tasks it is told to.
type recorder struct {
	seq      atomic.Int64
	mu       sync.Mutex
	start    map[int]int64 // by Task.Index
	finish   map[int]int64
	applied  map[int]int
	fail     map[string]error // by object name
	running  atomic.Int32
	peak     atomic.Int32
	isStaged func(*Task) bool
	// stagedRunning and stagedPeak count staged tasks.
	stagedRunning, stagedPeak atomic.Int32
}

func newRecorder(fail map[string]error) *recorder {
	return &recorder{start: map[int]int64{}, finish: map[int]int64{}, applied: map[int]int{}, fail: fail}
}

func bump(cur *atomic.Int32, peak *atomic.Int32) {
	c := cur.Add(1)
	for {
		p := peak.Load()
		if c <= p || peak.CompareAndSwap(p, c) {
			return
		}
	}
}

func (r *recorder) Apply(ctx context.Context, t *Task) error {
	staged := r.isStaged != nil && r.isStaged(t)
	if staged {
		bump(&r.stagedRunning, &r.stagedPeak)
		defer r.stagedRunning.Add(-1)
	} else {
		bump(&r.running, &r.peak)
		defer r.running.Add(-1)
	}
	s := r.seq.Add(1)
	r.mu.Lock()
	r.start[t.Index] = s
	r.applied[t.Index]++
	err := r.fail[t.Manifest.Obj.GetName()]
	r.mu.Unlock()
	f := r.seq.Add(1)
	r.mu.Lock()
	r.finish[t.Index] = f
	r.mu.Unlock()
	return err
}

// isolatedErr marks errors the runner should not stop a node for.
type isolatedErr struct{ error }

func isIsolated(err error) bool {
	var ie isolatedErr
	return errors.As(err, &ie)
}

func ns(t *testing.T, file, name string) *manifest.Manifest { return obj(t, file, "Namespace", name) }

// runGraph is a graph with a custom resource before its CRD, objects before
// their namespace, several components per run level and a Job barrier.
func runGraph(t *testing.T) *TaskGraph {
	return graphOf([]*manifest.Manifest{
		obj(t, "0000_05_a_1-cr.yaml", "Widget", "w-early"),
		obj(t, "0000_05_a_2-cm.yaml", "ConfigMap", "a-cm"),
		ns(t, "0000_10_b_00-ns.yaml", "ns-b"),
		crd(t, "0000_10_b_01-crd.yaml"),
		obj(t, "0000_10_b_02-cm.yaml", "ConfigMap", "b-cm"),
		obj(t, "0000_10_b_03-cr.yaml", "Widget", "w-b"),
		obj(t, "0000_10_c_1.yaml", "ConfigMap", "c1"),
		obj(t, "0000_10_c_2.yaml", "ConfigMap", "c2"),
		obj(t, "0000_10_c_3.yaml", "ConfigMap", "c3"),
		obj(t, "0000_20_b_1.yaml", "ConfigMap", "b2"),
		obj(t, "0000_20_c_1.yaml", "ConfigMap", "c-later"),
		obj(t, "0000_20_d_1.yaml", "ConfigMap", "d1"),
		ns(t, "0000_20_d_2-ns.yaml", "ns-d"),
		obj(t, "0000_20_d_3.yaml", "ConfigMap", "d3"),
		obj(t, "0000_30_e_job.yaml", "Job", "job"),
		obj(t, "0000_40_f_1.yaml", "ConfigMap", "f1"),
		obj(t, "0000_40_g_1.yaml", "ConfigMap", "g1"),
		obj(t, "unordered.yaml", "ConfigMap", "u1"),
	})
}

func taskByName(g *TaskGraph, name string) *Task {
	for _, t := range g.Tasks {
		if t.Manifest.Obj.GetName() == name {
			return t
		}
	}
	return nil
}

// checkRunInvariants checks what must hold of any run: every task that ran
// ran once; a node's tasks ran in order, each after the previous finished;
// a node's own (not staged) tasks started after every task of the nodes it
// comes after had finished; at most the allowed number ran at once.
func checkRunInvariants(t *testing.T, g *TaskGraph, r *recorder, opts RunOptions) {
	t.Helper()
	for idx, n := range r.applied {
		if n != 1 {
			t.Errorf("task %d applied %d times", idx, n)
		}
	}
	staged := func(task *Task) bool { return opts.Stage != nil && opts.Stage(task) }
	for _, n := range g.Nodes {
		for i := 1; i < len(n.Tasks); i++ {
			prev, cur := n.Tasks[i-1], n.Tasks[i]
			if _, ran := r.start[cur.Index]; !ran || staged(cur) {
				continue
			}
			if f, ok := r.finish[prev.Index]; !ok || f > r.start[cur.Index] {
				t.Errorf("node %s: %s started before %s finished", n.Label(), cur, prev)
			}
		}
		for _, in := range n.In {
			for _, before := range g.Nodes[in].Tasks {
				fin, ran := r.finish[before.Index]
				if !ran {
					continue
				}
				for _, task := range n.Tasks {
					if s, ok := r.start[task.Index]; ok && !staged(task) && s < fin {
						t.Errorf("%s (node %s) started before %s (node %s, which it comes after) finished",
							task, n.Label(), before, g.Nodes[in].Label())
					}
				}
			}
		}
	}
	par := opts.Parallelism
	if par < 1 {
		par = 1
	}
	if p := int(r.peak.Load()); p > par {
		t.Errorf("%d graph tasks ran at once, parallelism %d", p, par)
	}
	sp := opts.StageParallelism
	if sp < 1 {
		sp = par
	}
	if p := int(r.stagedPeak.Load()); p > sp {
		t.Errorf("%d staged tasks ran at once, stage parallelism %d", p, sp)
	}
}

func TestRun(t *testing.T) {
	g := runGraph(t)

	t.Run("all tasks once, in order, within bounds", func(t *testing.T) {
		for _, par := range []int{1, 2, 4, 16} {
			for _, stage := range []bool{false, true} {
				t.Run(fmt.Sprintf("parallelism %d stage %v", par, stage), func(t *testing.T) {
					r := newRecorder(nil)
					opts := RunOptions{Parallelism: par}
					if stage {
						opts.Stage = StageCRDsAndNamespaces
						opts.StageParallelism = 2
						r.isStaged = StageCRDsAndNamespaces
					}
					var events []Event
					opts.Observe = func(e Event) { events = append(events, e) }
					states, errs := Run(context.Background(), g, r, opts)
					if len(errs) > 0 {
						t.Fatalf("errors: %v", errs)
					}
					for i, s := range states {
						if s != NodeSucceeded {
							t.Errorf("node %s: %s", g.Nodes[i].Label(), s)
						}
					}
					if len(r.applied) != len(g.Tasks) {
						t.Errorf("applied %d tasks, want %d", len(r.applied), len(g.Tasks))
					}
					checkRunInvariants(t, g, r, opts)
					checkEvents(t, g, events, stage)
				})
			}
		}
	})

	t.Run("staged tasks are applied in the stage, in apply order", func(t *testing.T) {
		r := newRecorder(nil)
		r.isStaged = StageCRDsAndNamespaces
		opts := RunOptions{Parallelism: 1, Stage: StageCRDsAndNamespaces, StageParallelism: 1}
		var stagedDone []string
		opts.Observe = func(e Event) {
			if e.Type == EventTaskDone && e.Staged {
				stagedDone = append(stagedDone, e.Task.Manifest.Obj.GetName())
			}
		}
		if _, errs := Run(context.Background(), g, r, opts); len(errs) > 0 {
			t.Fatal(errs)
		}
		want := []string{"ns-b", "widgets.example.com", "ns-d"}
		if diff := cmp.Diff(want, stagedDone); diff != "" {
			t.Errorf("staged tasks (-want +got):\n%s", diff)
		}
		checkRunInvariants(t, g, r, opts)
	})

	t.Run("a failed task stops its node and what requires it; isolated errors do not", func(t *testing.T) {
		r := newRecorder(map[string]error{
			"c1":      errors.New("invalid"),
			"w-early": isolatedErr{errors.New("no such type")},
		})
		opts := RunOptions{Parallelism: 3, Isolated: isIsolated}
		states, errs := Run(context.Background(), g, r, opts)
		checkRunInvariants(t, g, r, opts)
		got := map[string]NodeState{}
		for i, s := range states {
			got[g.Nodes[i].Label()] = s
		}
		// As the CVO: a failed node stops everything after it (the next
		// run levels), never its siblings.
		want := map[string]NodeState{
			"05/a": NodeSucceeded, "10/b": NodeSucceeded, "10/c": NodeFailed,
			"20/b": NodeSkipped, "20/c": NodeSkipped, "20/d": NodeSkipped,
			"30/e/job Job.batch/job": NodeSkipped, "40/f": NodeSkipped, "40/g": NodeSkipped, "unordered": NodeSkipped,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("states (-want +got):\n%s", diff)
		}
		// The isolated failure comes first, then the graph's errors.
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		wantMsgs := []string{
			"0000_05_a_1-cr.yaml#0: no such type",
			"10/c: 0000_10_c_1.yaml#0: invalid",
			"20/b: not applied: it requires 10/c, which did not succeed",
			"20/c: not applied: it requires 10/c, which did not succeed",
			"20/d: not applied: it requires 10/c, which did not succeed",
			"30/e/job Job.batch/job: not applied: it requires 20/b, which did not succeed",
			"40/f: not applied: it requires 30/e/job Job.batch/job, which did not succeed",
			"40/g: not applied: it requires 30/e/job Job.batch/job, which did not succeed",
			"unordered: not applied: it requires 40/f, which did not succeed",
		}
		if diff := cmp.Diff(wantMsgs, msgs); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
		var te *TaskError
		if !errors.As(errs[1], &te) || te.Task.Manifest.Obj.GetName() != "c1" {
			t.Errorf("the node error does not wrap the TaskError of c1: %#v", errs[1])
		}
		for _, name := range []string{"c2", "c3", "b2", "c-later", "job", "f1"} {
			if _, ran := r.start[taskByName(g, name).Index]; ran {
				t.Errorf("%s was applied after its node or a requirement failed", name)
			}
		}
		if _, ran := r.start[taskByName(g, "a-cm").Index]; !ran {
			t.Errorf("a-cm was not applied after an isolated failure before it in its node")
		}
	})

	t.Run("a staged task that failed fails its node at its place", func(t *testing.T) {
		r := newRecorder(map[string]error{"widgets.example.com": errors.New("not established")})
		r.isStaged = StageCRDsAndNamespaces
		opts := RunOptions{Parallelism: 2, Stage: StageCRDsAndNamespaces}
		states, errs := Run(context.Background(), g, r, opts)
		checkRunInvariants(t, g, r, opts)
		for i, s := range states {
			if g.Nodes[i].Label() == "10/b" && s != NodeFailed {
				t.Errorf("10/b: %s, want failed", s)
			}
		}
		if _, ran := r.start[taskByName(g, "b-cm").Index]; ran {
			t.Error("b-cm, after the failed staged CRD in its node, was applied")
		}
		if _, ran := r.start[taskByName(g, "ns-b").Index]; !ran {
			t.Error("ns-b was not applied")
		}
		if len(errs) == 0 || errs[0].Error() != "10/b: 0000_10_b_01-crd.yaml#0: not established" {
			t.Errorf("errors = %v", errs)
		}
		if r.applied[taskByName(g, "widgets.example.com").Index] != 1 {
			t.Error("the failed staged task was applied again")
		}
	})

	t.Run("a cancelled context stops the run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := newRecorder(nil)
		a := ApplierFunc(func(ctx context.Context, t *Task) error {
			err := r.Apply(ctx, t)
			if t.Manifest.Obj.GetName() == "c3" {
				// The last task of its node: the node succeeds and what
				// comes after it never starts.
				cancel()
			}
			return err
		})
		opts := RunOptions{Parallelism: 1, Stage: StageCRDsAndNamespaces}
		states, errs := Run(ctx, g, a, opts)
		var notRun *NotRunError
		found := false
		for _, e := range errs {
			found = found || errors.As(e, &notRun)
		}
		if !found {
			t.Fatalf("no NotRunError in %v", errs)
		}
		if Summary(states) == "" || states[len(states)-1] != NodeNotRun {
			t.Errorf("states %v: the last node should not have run", states)
		}
	})

	t.Run("a context that ended before the run starts nothing", func(t *testing.T) {
		// The stage has free slots: they must not win over the context.
		for range 20 {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			r := newRecorder(nil)
			_, errs := Run(ctx, g, r, RunOptions{Parallelism: 8, Stage: StageCRDsAndNamespaces})
			if len(r.applied) != 0 {
				t.Fatalf("applied %v after the context ended", r.applied)
			}
			if len(errs) == 0 {
				t.Fatal("no error")
			}
		}
	})
}

// checkEvents checks the events of a run without failures: every task is
// reported once, Done counts up to Total, each run level is reported once,
// after all its tasks, and the stage is reported when asked for.
func checkEvents(t *testing.T, g *TaskGraph, events []Event, stage bool) {
	t.Helper()
	seen := map[int]bool{}
	levelDone := map[int]bool{}
	lastDone := 0
	var stageStarted, stageDone int
	for _, e := range events {
		switch e.Type {
		case EventTaskDone:
			if seen[e.Task.Index] {
				t.Errorf("task %s reported twice", e.Task)
			}
			seen[e.Task.Index] = true
			if e.Done != lastDone+1 || e.Total != len(g.Tasks) {
				t.Errorf("task event %d of %d after %d", e.Done, e.Total, lastDone)
			}
			lastDone = e.Done
			if l := e.Task.RunLevel(); levelDone[l] {
				t.Errorf("task %s reported after its run level %d", e.Task, l)
			}
		case EventRunLevelDone:
			if levelDone[e.RunLevel] {
				t.Errorf("run level %d reported twice", e.RunLevel)
			}
			levelDone[e.RunLevel] = true
			if e.Level.Applied != e.Level.Tasks {
				t.Errorf("run level %d: %+v", e.RunLevel, e.Level)
			}
		case EventStageStarted:
			stageStarted++
		case EventStageDone:
			stageDone++
		}
	}
	if len(seen) != len(g.Tasks) {
		t.Errorf("%d task events, want %d", len(seen), len(g.Tasks))
	}
	var levels []int
	for l := range levelDone {
		levels = append(levels, l)
	}
	sort.Ints(levels)
	var wantLevels []int
	for _, n := range g.Nodes {
		if len(wantLevels) == 0 || wantLevels[len(wantLevels)-1] != n.RunLevel {
			wantLevels = append(wantLevels, n.RunLevel)
		}
	}
	sort.Ints(wantLevels)
	if diff := cmp.Diff(wantLevels, levels); diff != "" {
		t.Errorf("run levels reported (-want +got):\n%s", diff)
	}
	want := 0
	if stage {
		want = 1
	}
	if stageStarted != want || stageDone != want {
		t.Errorf("stage events: %d started, %d done, want %d", stageStarted, stageDone, want)
	}
}

// TestOrders runs the graph in the CVO's install and reconcile orders:
// every component at once, Jobs the only order; a failure stops only what
// comes after a Job.
func TestOrders(t *testing.T) {
	g := runGraph(t)
	before := summarizeGraph(g)
	for _, tc := range []struct {
		order   Order
		attempt int
	}{{OrderInstall, 0}, {OrderReconcile, 0}, {OrderReconcile, 13}} {
		t.Run(fmt.Sprintf("%s %d", tc.order, tc.attempt), func(t *testing.T) {
			og := g.WithOrder(tc.order, tc.attempt)
			if diff := cmp.Diff(before, summarizeGraph(g)); diff != "" {
				t.Errorf("WithOrder changed its input (-before +after):\n%s", diff)
			}
			got := map[string][]string{}
			for _, n := range og.Nodes {
				var in []string
				for _, i := range n.In {
					in = append(in, og.Nodes[i].Label())
				}
				got[n.Label()] = in
			}
			job := []string{"30/e/job Job.batch/job"}
			want := map[string][]string{
				"05/a": nil, "10/b": nil, "10/c": nil, "20/b": nil, "20/c": nil, "20/d": nil,
				"30/e/job Job.batch/job": nil, "40/f": job, "40/g": job, "unordered": job,
			}
			var before []string
			for _, n := range og.Nodes {
				if n.Index < 6 {
					before = append(before, n.Label())
				}
			}
			want["30/e/job Job.batch/job"] = before
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("In (-want +got):\n%s", diff)
			}
			r := newRecorder(map[string]error{"c1": errors.New("invalid")})
			r.isStaged = StageCRDsAndNamespaces
			opts := RunOptions{Parallelism: 4, Stage: StageCRDsAndNamespaces}
			states, _ := Run(context.Background(), og, r, opts)
			checkRunInvariants(t, og, r, opts)
			for i, s := range states {
				label := og.Nodes[i].Label()
				wantState := NodeSucceeded
				switch label {
				case "10/c":
					wantState = NodeFailed
				case "30/e/job Job.batch/job", "40/f", "40/g", "unordered":
					wantState = NodeSkipped
				}
				if s != wantState {
					t.Errorf("%s: %s, want %s", label, s, wantState)
				}
			}
		})
	}
}

func TestRunSteps(t *testing.T) {
	ms := []*manifest.Manifest{
		ns(t, "0000_10_a_00_ns.yaml", "ns-a"),
		obj(t, "0000_10_a_01_cm.yaml", "ConfigMap", "a1"),
		obj(t, "0000_10_b_01_cm.yaml", "ConfigMap", "b1"),
		obj(t, "0000_20_c_01_cm.yaml", "ConfigMap", "c1"),
		obj(t, "0000_20_c_03_cm.yaml", "ConfigMap", "c3"),
	}
	g, err := NewTaskGraph(ms, GraphOptions{Steps: []StepPlacement{
		{Step: namedStep("a/step"), File: "generated/0000_10_a_02.step", After: []manifest.ID{id(ms[1])}},
		{Step: namedStep("c/step"), File: "generated/0000_20_c_02.step", After: []manifest.ID{id(ms[2]), id(ms[3])}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(fail map[string]error) (map[string]int, []string, []Event) {
		var mu sync.Mutex
		ran := map[string]int{}
		var events []Event
		a := ApplierFunc(func(ctx context.Context, task *Task) error {
			name := ""
			if task.IsStep() {
				name = task.Step.Name()
			} else {
				name = task.Manifest.Obj.GetName()
			}
			mu.Lock()
			defer mu.Unlock()
			ran[name]++
			return fail[name]
		})
		_, errs := Run(context.Background(), g, a, RunOptions{Parallelism: 4, Stage: StageCRDsAndNamespaces, Isolated: isIsolated,
			Observe: func(e Event) { events = append(events, e) }})
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		return ran, msgs, events
	}

	t.Run("steps run once through the Applier, in their place", func(t *testing.T) {
		ran, msgs, events := run(nil)
		if len(msgs) > 0 {
			t.Fatalf("errors: %v", msgs)
		}
		if ran["a/step"] != 1 || ran["c/step"] != 1 {
			t.Errorf("steps ran %v", ran)
		}
		checkEvents(t, g, events, true)
		for _, e := range events {
			if e.Type == EventRunLevelDone && e.Level.Steps != 1 {
				t.Errorf("run level %d: %+v, want 1 step", e.RunLevel, e.Level)
			}
		}
	})

	t.Run("a step after an object that failed in isolation does not run", func(t *testing.T) {
		ran, msgs, _ := run(map[string]error{"a1": isolatedErr{errors.New("namespace missing")}})
		if ran["a/step"] != 0 {
			t.Error("a/step ran after a1 failed")
		}
		want := []string{
			"0000_10_a_01_cm.yaml#0: namespace missing",
			"10/a: generated/0000_10_a_02.step: step a/step: not run: it runs after ConfigMap/a1 (0000_10_a_01_cm.yaml#0), which failed",
			"20/c: not applied: it requires 10/a, which did not succeed",
		}
		if diff := cmp.Diff(want, msgs); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
	})

	t.Run("a step is skipped with the node of an object it runs after", func(t *testing.T) {
		ran, msgs, _ := run(map[string]error{"b1": errors.New("invalid")})
		if ran["c/step"] != 0 || ran["c3"] != 0 || ran["a/step"] != 1 {
			t.Errorf("ran %v", ran)
		}
		want := []string{
			"10/b: 0000_10_b_01_cm.yaml#0: invalid",
			"20/c: not applied: it requires 10/b, which did not succeed",
		}
		if diff := cmp.Diff(want, msgs); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
	})

	t.Run("a failed step stops its node", func(t *testing.T) {
		ran, msgs, _ := run(map[string]error{"c/step": errors.New("boom")})
		if ran["c3"] != 0 {
			t.Error("c3 was applied after the step of its node failed")
		}
		want := []string{"20/c: generated/0000_20_c_02.step: boom"}
		if diff := cmp.Diff(want, msgs); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
	})
}
