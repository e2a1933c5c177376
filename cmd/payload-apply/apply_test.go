package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

func TestApplyUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"client dry run", []string{"apply", "--dry-run=client"}, `--dry-run "client": want "server" or "none"`},
		{"output", []string{"apply", "-o", "yaml"}, `--output "yaml": want "text" or "json"`},
		{"parallelism", []string{"apply", "--parallelism", "0"}, "--parallelism 0: want at least 1"},
		{"timeout", []string{"apply", "--timeout", "0s"}, "--timeout 0s: want a positive duration"},
		{"missing kubeconfig", []string{"apply", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig: stat /nonexistent/kubeconfig"},
		{"arguments", []string{"apply", "extra"}, "unexpected arguments: [extra]"},
		{"status output", []string{"status", "-o", "wide"}, `--output "wide": want "text" or "json"`},
		{"status kubeconfig", []string{"status", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig: stat /nonexistent/kubeconfig"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestApplyHelpDocumentsTheContract(t *testing.T) {
	for _, cmd := range []string{"apply", "status"} {
		out, _, code := runCLI(t, "help", cmd)
		if code != 0 {
			t.Fatalf("help %s: exit %d", cmd, code)
		}
		for _, want := range []string{"Exit codes: 0", "--kubeconfig", "--payload", "openshift-config/cluster-profile"} {
			if !strings.Contains(out, want) {
				t.Errorf("help %s lacks %q", cmd, want)
			}
		}
	}
	out, _, _ := runCLI(t, "help", "apply")
	for _, want := range []string{"--parallelism", "--wait", "--timeout", "--dry-run", "Stage:", "0.0.1-snapshot", "resource type missing"} {
		if !strings.Contains(out, want) {
			t.Errorf("help apply lacks %q", want)
		}
	}
}

// progressRun feeds a progress reporter the events of a small run.
func progressRun(t *testing.T, p *progress) {
	t.Helper()
	ms, err := manifest.Parse("release-manifests/0000_50_x_01.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := payload.NewTaskGraphWithSteps([]*manifest.Manifest{&ms[0], &ms[1]},
		[]payload.StepPlacement{{Step: namedStep("x/status"), File: "generated/0000_50_x_02.step", After: []manifest.ID{ms[0].ID()}}})
	if err != nil {
		t.Fatal(err)
	}
	p.setTotal(len(g.Tasks), 1)
	p.HandleWarningHeader(299, "", "deprecated field")
	p.HandleWarningHeader(299, "", "deprecated field")
	p.event(payload.Event{Type: payload.EventStageStarted, Total: 1}, resourceapply.Change{})
	p.event(payload.Event{Type: payload.EventTaskDone, Task: g.Tasks[0], Staged: true, Done: 1, Total: 3},
		resourceapply.Change{Object: ms[0].ID(), Action: resourceapply.Created})
	p.event(payload.Event{Type: payload.EventStageDone, Total: 1}, resourceapply.Change{})
	p.event(payload.Event{Type: payload.EventTaskDone, Task: g.Tasks[1], Done: 2, Total: 3,
		Err: &resourceapply.ApplyError{Object: ms[1].ID(), Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")}},
		resourceapply.Change{Object: ms[1].ID(), Action: resourceapply.Failed})
	p.event(payload.Event{Type: payload.EventTaskDone, Task: g.Tasks[2], Done: 3, Total: 3},
		resourceapply.Change{Action: resourceapply.Configured, Message: "1 write"})
	p.event(payload.Event{Type: payload.EventRunLevelDone, RunLevel: 50, Level: payload.LevelCount{Tasks: 3, Applied: 2, Failed: 1, Steps: 1}, Done: 3, Total: 3}, resourceapply.Change{})
	p.rerun("x/status", resourceapply.StepResult{Step: "x/status", Action: resourceapply.Unchanged}, nil, nil)
	p.rerun("x/status", resourceapply.StepResult{Step: "x/status", Action: resourceapply.Configured, Writes: 2}, nil, nil)
	p.wait("applied objects", resourceapply.WaitProgress{Ready: 0, Total: 1, Pending: []resourceapply.Pending{{Object: ms[0].ID(), Message: "Terminating"}}})
	cs, steps := &resourceapply.ChangeSet{}, &resourceapply.ChangeSet{}
	cs.Add(resourceapply.Change{Action: resourceapply.Created}, resourceapply.Change{Action: resourceapply.Failed})
	steps.Add(resourceapply.Change{Action: resourceapply.Configured})
	p.summary(false, 1500*time.Millisecond, cs, steps, 3, 2, []string{"ConfigMap/ns/c: apply: invalid: bad"})
}

// namedStep is a payload.Step for tests.
type namedStep string

func (s namedStep) Name() string { return string(s) }

func TestDryRunMissing(t *testing.T) {
	ms, err := manifest.Parse("0000_05_x_01.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := payload.NewTaskGraphWithSteps([]*manifest.Manifest{&ms[0], &ms[1]},
		[]payload.StepPlacement{{Step: namedStep("x/s"), File: "generated/0000_05_x_02.step", After: []manifest.ID{ms[0].ID(), ms[1].ID()}}})
	if err != nil {
		t.Fatal(err)
	}
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
			a := &clusterApplier{changes: []resourceapply.Change{tc.a, tc.b, {}}}
			if got := a.dryRunMissing(g.Tasks[2]); got != tc.want {
				t.Errorf("dryRunMissing = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWithReleaseVersion(t *testing.T) {
	ms, err := manifest.Parse("co.yaml", []byte("apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata: {name: x}\nstatus:\n  versions:\n  - {name: operator, version: 0.0.1-snapshot}\n  - {name: operand, version: 1.2.3}\n"))
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

func TestProgressText(t *testing.T) {
	var out, errOut bytes.Buffer
	p := newProgress(IOStreams{Out: &out, ErrOut: &errOut}, false)
	progressRun(t, p)
	want := `warning: deprecated field
stage: 1 CustomResourceDefinitions and Namespaces first
stage: done, 1 of 3 done (33%)
step x/status: configured (1 write)
run level 50: 2 objects, 1 step, 1 failed; 3 of 3 done (100%)
step x/status (run again while waiting): configured (2 writes)
wait: applied objects: 0 of 1 ready; waiting for
  Namespace/ns: Terminating
applied 1 of 2 objects and ran 1 of 1 step in 1.5s: 1 created, 1 failed; steps: 1 configured; 5 requests (2 writes)
`
	if diff := cmp.Diff(want, errOut.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out.String())
	}
}

func TestProgressJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	p := newProgress(IOStreams{Out: &out, ErrOut: &errOut}, true)
	p.now = func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }
	progressRun(t, p)
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		delete(e, "time")
		got = append(got, e)
	}
	want := []map[string]any{
		{"event": "warning", "message": "deprecated field"},
		{"event": "stage", "message": "started", "total": 1.0},
		{"event": "task", "index": 1.0, "file": "release-manifests/0000_50_x_01.yaml", "doc": 0.0, "apiVersion": "v1", "kind": "Namespace",
			"name": "ns", "staged": true, "action": "Created", "runLevel": 50.0, "done": 1.0, "total": 3.0},
		{"event": "stage", "message": "done", "total": 1.0, "done": 1.0},
		{"event": "task", "index": 2.0, "file": "release-manifests/0000_50_x_01.yaml", "doc": 1.0, "apiVersion": "v1", "kind": "ConfigMap",
			"namespace": "ns", "name": "c", "action": "Failed", "reason": "Invalid", "error": "ConfigMap/ns/c: apply: invalid: bad",
			"runLevel": 50.0, "done": 2.0, "total": 3.0},
		{"event": "task", "index": 3.0, "file": "generated/0000_50_x_02.step", "step": "x/status", "action": "Configured", "message": "1 write",
			"runLevel": 50.0, "done": 3.0, "total": 3.0},
		{"event": "runLevel", "runLevel": 50.0, "tasks": 3.0, "steps": 1.0, "applied": 2.0, "failed": 1.0, "done": 3.0, "total": 3.0},
		{"event": "step", "step": "x/status", "action": "Configured", "message": "run again while waiting: 2 writes"},
		{"event": "wait", "message": "applied objects", "ready": 0.0, "total": 1.0, "pending": []any{map[string]any{"object": "Namespace/ns", "message": "Terminating"}}},
		{"event": "summary", "success": false, "duration": "1.5s", "changes": map[string]any{"Created": 1.0, "Failed": 1.0},
			"stepChanges": map[string]any{"Configured": 1.0}, "done": 3.0, "total": 3.0,
			"requests": map[string]any{"reads": 3.0, "writes": 2.0}, "errors": []any{"ConfigMap/ns/c: apply: invalid: bad"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %q", errOut.String())
	}
}

func TestApplyOrderFlag(t *testing.T) {
	_, errOut, code := runCLI(t, "apply", "--order", "random")
	if code != exitUsage || !strings.Contains(errOut, `--order "random": want "install" or "graph"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestObservedStepNotRun(t *testing.T) {
	ms, err := manifest.Parse("0000_05_x_01.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := payload.NewTaskGraphWithSteps([]*manifest.Manifest{&ms[0]},
		[]payload.StepPlacement{{Step: namedStep("x/s"), File: "generated/0000_05_x_02.step", After: []manifest.ID{ms[0].ID()}}})
	if err != nil {
		t.Fatal(err)
	}
	a := &clusterApplier{changes: []resourceapply.Change{{Action: resourceapply.Failed}, {}}}
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

func TestFailureExitCodes(t *testing.T) {
	forbidden := &resourceapply.ApplyError{Verb: "apply", Reason: resourceapply.ReasonForbidden, Err: errors.New("no")}
	other := &resourceapply.ApplyError{Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")}
	cases := []struct {
		name string
		errs []error
		code int
	}{
		{"object failures", []error{other}, exitFail},
		{"forbidden among others", []error{other, fmt.Errorf("node: %w", forbidden)}, exitUsage},
		{"unauthorized", []error{errors.New("x"), apierrors.NewUnauthorized("who")}, exitUsage},
		{"joined", []error{errors.Join(other, forbidden)}, exitUsage},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		if code := reportError(&buf, applyCommand(), failure(tc.errs...)); code != tc.code {
			t.Errorf("%s: exit %d, want %d (%s)", tc.name, code, tc.code, buf.String())
		}
		if strings.Count(buf.String(), "error: ") != len(errorLines(errors.Join(tc.errs...))) {
			t.Errorf("%s: not every failure printed:\n%s", tc.name, buf.String())
		}
	}
}

func TestRBACCommand(t *testing.T) {
	out, errOut, code := runCLI(t, "rbac", "--name", "installer")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kind: ClusterRole", "name: installer", "- deployments", "- customresourcedefinitions", "- watch", "- escalate", "- clusteroperators"} {
		if !strings.Contains(out, want) {
			t.Errorf("rbac output lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := runCLI(t, "rbac", "--name", ""); code != exitUsage || !strings.Contains(errOut, "--name: want a name") {
		t.Errorf("empty --name: exit %d: %s", code, errOut)
	}
}
