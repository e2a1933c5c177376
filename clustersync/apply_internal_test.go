package clustersync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// namedStep is a payload.Step for tests.
type namedStep string

func (s namedStep) Name() string { return string(s) }

// graphWithStep parses docs as file and places a step named name after
// the objects of after (indexes into the parsed documents).
func graphWithStep(t *testing.T, file, docs, name, stepFile string, after ...int) *payload.TaskGraph {
	t.Helper()
	ms, err := manifest.Parse(file, []byte(docs), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]*manifest.Manifest, len(ms))
	var ids []manifest.ID
	for i := range ms {
		objs[i] = &ms[i]
	}
	for _, i := range after {
		ids = append(ids, ms[i].ID())
	}
	g, err := payload.NewTaskGraph(objs, payload.GraphOptions{Steps: []payload.StepPlacement{{Step: namedStep(name), File: stepFile, After: ids}}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDryRunMissing(t *testing.T) {
	g := graphWithStep(t, "0000_05_x_01.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: ns}\n",
		"x/s", "generated/0000_05_x_02.step", 0, 1)
	for _, tc := range []struct {
		name string
		a, b resourceapply.Change
		want string
	}{
		{"both exist", resourceapply.Change{Action: resourceapply.Unchanged, DryRun: true}, resourceapply.Change{Action: resourceapply.Configured, DryRun: true}, ""},
		{"create-only exists", resourceapply.Change{Action: resourceapply.Skipped, Message: "create-only: exists", DryRun: true}, resourceapply.Change{Action: resourceapply.Unchanged, DryRun: true}, ""},
		{"one would be created", resourceapply.Change{Action: resourceapply.Unchanged, DryRun: true}, resourceapply.Change{Action: resourceapply.Created, DryRun: true},
			"dry run: it runs after ConfigMap/ns/b, which this apply would create"},
		{"one's namespace would be created", resourceapply.Change{Action: resourceapply.Skipped, Message: "dry run: namespace ns would be created by this apply", DryRun: true}, resourceapply.Change{},
			"dry run: it runs after ConfigMap/ns/a, which this apply would create"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &applier{changes: []resourceapply.Change{tc.a, tc.b, {}}}
			if got := a.dryRunMissing(g.Tasks[2]); got != tc.want {
				t.Errorf("dryRunMissing = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWithReleaseVersion(t *testing.T) {
	ms, err := manifest.Parse("co.yaml", []byte("apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata: {name: x}\nstatus:\n  versions:\n  - {name: operator, version: 0.0.1-snapshot}\n  - {name: operand, version: 1.2.3}\n"), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := withReleaseVersion(ms[0].Obj, "4.22.0")
	versions, _, _ := unstructured.NestedSlice(got.Object, "status", "versions")
	want := []any{map[string]any{"name": "operator", "version": "4.22.0"}, map[string]any{"name": "operand", "version": "1.2.3"}}
	if diff := cmp.Diff(want, versions); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	if orig, _, _ := unstructured.NestedSlice(ms[0].Obj.Object, "status", "versions"); orig[0].(map[string]any)["version"] != "0.0.1-snapshot" {
		t.Error("the manifest was changed")
	}
}

func TestInterruptReport(t *testing.T) {
	ch := func(a resourceapply.Action) resourceapply.Change { return resourceapply.Change{Action: a} }
	changes := []resourceapply.Change{ch(resourceapply.Created), ch(resourceapply.Created), ch(resourceapply.Unchanged),
		ch(resourceapply.Failed), ch(resourceapply.Failed), {}, {}, {}}
	reasons := []resourceapply.Reason{"", "", "", resourceapply.ReasonInvalid, resourceapply.ReasonCanceled, "", "", ""}
	var tasks []*payload.Task
	for range changes {
		tasks = append(tasks, &payload.Task{})
	}
	// Two steps: one ran, one did not.
	tasks = append(tasks, &payload.Task{Step: namedStep("x/ran")}, &payload.Task{Step: namedStep("x/not-run")})
	changes = append(changes, ch(resourceapply.Configured), resourceapply.Change{})
	reasons = append(reasons, "", "")
	c := interruptReport(tasks, changes, reasons)
	want := InterruptCounts{Applied: 3, Failed: 1, Stopped: 1, NotStarted: 3, Total: 8, Summary: "2 created, 1 unchanged", StepsRun: 1, Steps: 2}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got, want := c.String(), "3 of 8 objects applied (2 created, 1 unchanged); 1 failed; 1 stopped in flight; 3 not started; 1 of 2 steps run"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := interruptReport(tasks[:2], make([]resourceapply.Change, 2), make([]resourceapply.Reason, 2)).String(), "0 of 2 objects applied; 2 not started"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := (InterruptCounts{NotStarted: 1, Total: 1}).String(), "0 of 1 object applied; 1 not started"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestWithoutInterrupted(t *testing.T) {
	invalid := &resourceapply.ApplyError{Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")}
	canceled := &resourceapply.ApplyError{Verb: "get", Reason: resourceapply.ReasonCanceled, Err: context.Canceled}
	errs := []error{
		invalid,
		&payload.TaskError{Err: canceled},
		&payload.NotRunError{Err: context.Canceled},
		fmt.Errorf("node: %w", context.Canceled),
	}
	a, b, c, d, e := &payload.TaskNode{Index: 0}, &payload.TaskNode{Index: 1}, &payload.TaskNode{Index: 2}, &payload.TaskNode{Index: 3}, &payload.TaskNode{Index: 4}
	failed := &payload.NodeError{Node: e, Err: &payload.TaskError{Err: invalid}}
	skippedForFailure := &payload.SkippedError{Node: d, Because: e}
	errs = append(errs,
		&payload.SkippedError{Node: c, Because: b}, // b was skipped because a was stopped
		&payload.NodeError{Node: a, Err: &payload.TaskError{Err: canceled}},
		&payload.SkippedError{Node: b, Because: a},
		failed, skippedForFailure)
	got := withoutInterrupted(errs)
	if diff := cmp.Diff([]error{invalid, failed, skippedForFailure}, got, cmp.Comparer(func(x, y error) bool { return x == y })); diff != "" {
		t.Errorf("withoutInterrupted (-want +got):\n%s", diff)
	}
}

func TestObservedStepNotRun(t *testing.T) {
	g := graphWithStep(t, "0000_05_x_01.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n",
		"x/s", "generated/0000_05_x_02.step", 0)
	a := &applier{changes: []resourceapply.Change{{Action: resourceapply.Failed}, {}}}
	notRun := &payload.AfterFailedError{Step: g.Tasks[1], Failed: g.Tasks[0]}
	for _, tc := range []struct {
		name string
		e    payload.Event
		want resourceapply.Action
	}{
		{"no task", payload.Event{Type: payload.EventStageStarted}, ""},
		{"object applied before", payload.Event{Type: payload.EventTaskDone, Task: g.Tasks[0], Err: errors.New("bad")}, resourceapply.Failed},
		{"step not run", payload.Event{Type: payload.EventTaskDone, Task: g.Tasks[1], Err: notRun}, resourceapply.Failed},
	} {
		if got := a.observed(tc.e).Action; got != tc.want {
			t.Errorf("%s: action %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := a.changes[1].Action; got != resourceapply.Failed {
		t.Errorf("the step's change is %q, want it recorded as Failed", got)
	}
}

// events collects a run's events, safe for concurrent use.
type events struct {
	mu  sync.Mutex
	got []Event
}

func (e *events) Event(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
}

func (e *events) interrupting() (Interrupting, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.got {
		if i, ok := ev.(Interrupting); ok {
			return i, true
		}
	}
	return Interrupting{}, false
}

// graceRun is graceOnInterrupt running in the background.
type graceRun struct {
	interrupt func()
	abort     chan struct{}
	canceled  <-chan struct{} // closed when the work is canceled
	stop      chan struct{}
	done      chan struct{}
	events    *events
}

func startGrace(t *testing.T, grace time.Duration) *graceRun {
	t.Helper()
	r := &graceRun{stop: make(chan struct{}), done: make(chan struct{}), abort: make(chan struct{}), events: &events{}}
	a := &applier{out: newSerial(r.events), inFlight: map[int]*flight{1: {}}}
	interrupted, interrupt := context.WithCancel(context.Background())
	t.Cleanup(interrupt)
	work, cancelWork := context.WithCancel(context.Background())
	t.Cleanup(cancelWork)
	r.interrupt, r.canceled = interrupt, work.Done()
	go func() {
		defer close(r.done)
		a.graceOnInterrupt(interrupted, r.stop, cancelWork, grace, r.abort)
	}()
	return r
}

// told waits until graceOnInterrupt has said it was interrupted.
func (r *graceRun) told() Interrupting {
	for {
		if i, ok := r.events.interrupting(); ok {
			return i
		}
		time.Sleep(time.Millisecond)
	}
}

func (r *graceRun) end() {
	close(r.stop)
	<-r.done
}

func (r *graceRun) wasCanceled() bool {
	select {
	case <-r.canceled:
		return true
	default:
		return false
	}
}

func TestGraceOnInterrupt(t *testing.T) {
	t.Run("no interrupt", func(t *testing.T) {
		r := startGrace(t, time.Millisecond)
		r.end()
		if _, told := r.events.interrupting(); r.wasCanceled() || told {
			t.Errorf("canceled %v, interrupt told %v without an interrupt", r.wasCanceled(), told)
		}
	})
	t.Run("the grace ends", func(t *testing.T) {
		r := startGrace(t, 50*time.Millisecond)
		r.interrupt()
		select {
		case <-r.canceled:
		case <-time.After(10 * time.Second):
			t.Fatal("work not canceled after the grace")
		}
		r.end()
		if i := r.told(); i.InFlight != 1 || i.Grace != 50*time.Millisecond {
			t.Errorf("interrupting event %+v, want 1 in flight and a 50ms grace", i)
		}
	})
	t.Run("work finishes within the grace", func(t *testing.T) {
		r := startGrace(t, time.Hour)
		r.interrupt()
		r.told()
		r.end()
		if r.wasCanceled() {
			t.Error("work canceled although it finished within the grace")
		}
	})
	t.Run("abort cancels at once", func(t *testing.T) {
		r := startGrace(t, time.Hour)
		r.interrupt()
		r.told()
		close(r.abort)
		select {
		case <-r.canceled:
		case <-time.After(10 * time.Second):
			t.Fatal("work not canceled by the abort")
		}
		r.end()
	})
}

func TestCredentialsError(t *testing.T) {
	forbidden := &resourceapply.ApplyError{Verb: "apply", Reason: resourceapply.ReasonForbidden, Err: errors.New("no")}
	other := &resourceapply.ApplyError{Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"other", other, false},
		{"wrapped", fmt.Errorf("node: %w", forbidden), true},
		{"joined", errors.Join(other, forbidden), true},
	} {
		if got := CredentialsError(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWarningsOnce: each distinct warning of the server reaches the sink
// once per object, with the object of the request it came with; empty
// texts and other codes never.
func TestWarningsOnce(t *testing.T) {
	got := &events{}
	w := &warnings{seen: map[warningKey]bool{}, sink: newSerial(got)}
	ctx := context.Background()
	secret := manifest.ID{Kind: "Secret", Namespace: "ns", Name: "tls"}
	other := manifest.ID{Kind: "Secret", Namespace: "ns", Name: "other"}
	w.HandleWarningHeaderWithContext(ctx, 299, "-", "use control-plane")
	w.HandleWarningHeaderWithContext(ctx, 299, "-", "use control-plane")
	w.HandleWarningHeaderWithContext(resourceapply.WithObject(ctx, secret), 299, "-", "tls: failed to find any PEM data")
	w.HandleWarningHeaderWithContext(resourceapply.WithObject(ctx, secret), 299, "-", "tls: failed to find any PEM data")
	w.HandleWarningHeaderWithContext(resourceapply.WithObject(ctx, other), 299, "-", "tls: failed to find any PEM data")
	w.HandleWarningHeaderWithContext(ctx, 299, "-", "")
	w.HandleWarningHeaderWithContext(ctx, 199, "-", "other code")
	want := []Event{
		Warning{Text: "use control-plane"},
		Warning{Text: "tls: failed to find any PEM data", Object: secret},
		Warning{Text: "tls: failed to find any PEM data", Object: other},
	}
	if diff := cmp.Diff(want, got.got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
