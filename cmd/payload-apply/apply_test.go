package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/payload-apply/payload-apply/clustersync"
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
		{"output", []string{"apply", "-o", "yaml"}, `invalid argument "yaml" for "-o, --output" flag: want text, json`},
		{"dry run value apart", []string{"apply", "--dry-run", "server"}, `unexpected argument "server": give --dry-run its value with '=': --dry-run=server`},
		{"wait on failure without wait", []string{"apply", "--wait-on-failure"}, "--wait-on-failure is for --wait"},
		{"parallelism", []string{"apply", "--parallelism", "0"}, "--parallelism 0: want at least 1"},
		{"timeout", []string{"apply", "--timeout", "0s"}, "--timeout 0s: want a positive duration"},
		{"missing kubeconfig", []string{"apply", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig: stat /nonexistent/kubeconfig"},
		{"arguments", []string{"apply", "extra"}, "unexpected arguments: [extra]"},
		{"status output", []string{"status", "-o", "name"}, `invalid argument "name" for "-o, --output" flag: want text, wide, json, yaml`},
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
	for _, want := range []string{"--parallelism", "--wait", "--timeout", "--dry-run", "stage", "ClusterVersion \"version\"", "resource type missing", "--order"} {
		if !strings.Contains(out, want) {
			t.Errorf("help apply lacks %q", want)
		}
	}
}

// progressRun feeds a progress printer the events of a small run.
func progressRun(t *testing.T, p progress) {
	t.Helper()
	ms, err := manifest.Parse("release-manifests/0000_50_x_01.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n"), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := payload.NewTaskGraph([]*manifest.Manifest{&ms[0], &ms[1]},
		payload.GraphOptions{Steps: []payload.StepPlacement{{Step: namedStep("x/status"), File: "generated/0000_50_x_02.step", After: []manifest.ID{ms[0].ID()}}}})
	if err != nil {
		t.Fatal(err)
	}
	p.Event(clustersync.Planned{Tasks: len(g.Tasks), Steps: 1})
	p.Event(clustersync.Warning{Text: "deprecated field"})
	p.Event(clustersync.Warning{Text: "tls: failed to find any PEM data", Object: manifest.ID{Kind: "Secret", Namespace: "ns", Name: "tls"}})
	p.Event(clustersync.Warning{Text: "tls: failed to find any PEM data", Object: manifest.ID{Kind: "Secret", Namespace: "ns", Name: "tls2"}})
	p.Event(clustersync.StageStarted{Total: 1})
	p.Event(clustersync.TaskDone{Task: g.Tasks[0], Staged: true, Done: 1, Total: 3,
		Change: resourceapply.Change{Object: ms[0].ID(), Action: resourceapply.Created}})
	p.Event(clustersync.StageDone{Done: 1, Total: 1})
	p.Event(clustersync.TaskDone{Task: g.Tasks[1], Done: 2, Total: 3,
		Err:    &resourceapply.ApplyError{Object: ms[1].ID(), Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")},
		Change: resourceapply.Change{Object: ms[1].ID(), Action: resourceapply.Failed}})
	p.Event(clustersync.TaskDone{Task: g.Tasks[2], Done: 3, Total: 3,
		Change: resourceapply.Change{Action: resourceapply.Configured, Message: "1 write"}})
	p.Event(clustersync.RunLevelDone{RunLevel: 50, Level: payload.LevelCount{Tasks: 3, Applied: 2, Failed: 1, Steps: 1}, Done: 3, Total: 3})
	p.Event(clustersync.StepRerun{Name: "x/status", Result: resourceapply.StepResult{Step: "x/status", Action: resourceapply.Configured, Writes: 2}})
	p.Event(clustersync.Waiting{What: "applied objects", Progress: resourceapply.WaitProgress{Ready: 0, Total: 1,
		Pending: []resourceapply.Pending{{Object: ms[0].ID(), Message: "Terminating", Reason: "InProgress"}}},
		Elapsed: 12 * time.Second, Deadline: testNow.Add(48 * time.Second)})
	failed := &resourceapply.ApplyError{Object: ms[1].ID(), Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")}
	r := &clustersync.ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{},
		Requests: map[string]int64{"GET": 2, "LIST": 1, "PATCH": 2}, Errors: []error{failed},
		Wait: &clustersync.WaitReport{Skipped: true, Failed: 1}}
	r.Objects.Add(resourceapply.Change{Action: resourceapply.Created}, resourceapply.Change{Action: resourceapply.Failed},
		resourceapply.Change{Object: manifest.ID{Kind: "ConfigMap", Namespace: "ns", Name: "old"}, Action: resourceapply.Skipped, Message: "already gone"})
	r.Steps.Add(resourceapply.Change{Action: resourceapply.Configured})
	p.summary(r, 1500*time.Millisecond)
}

// testNow is the clock of the printers under test.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// namedStep is a payload.Step for tests.
type namedStep string

func (s namedStep) Name() string { return string(s) }

func TestProgressText(t *testing.T) {
	var out, errOut bytes.Buffer
	p := newTextProgress(context.Background(), IOStreams{Out: &out, ErrOut: &errOut})
	p.now = func() time.Time { return testNow }
	progressRun(t, p)
	want := `warning: deprecated field
warning: Secret/ns/tls: tls: failed to find any PEM data
stage: 1 object first (CustomResourceDefinitions and Namespaces)
stage: done, 1 of 3 done (33%)
step x/status: configured (1 write)
run level 50: 2 objects, 1 step, 1 failed; 3 of 3 done (100%)
step x/status (run again while waiting): configured (2 writes)
wait: applied objects: 12s elapsed, gives up in 48s (at ` + testNow.Add(48*time.Second).Local().Format("15:04:05") + `): 0 of 1 ready; waiting for 1:
  1 in progress: Namespace/ns: Terminating
warning: the same for 1 more object: tls: failed to find any PEM data
1 failure by reason: 1 invalid
invalid (1): the server rejected the object
error: ConfigMap/ns/c: apply: invalid: bad
skipped on purpose (1): 1 already gone
wait: not started: 1 object failed to apply, which no waiting fixes (--wait-on-failure waits anyway)
applied 2 of 2 objects and ran 1 of 1 step in 1.5s: 1 created, 1 skipped, 1 failed; steps: 1 configured; 5 requests (2 writes)
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
	p := newJSONProgress(context.Background(), IOStreams{Out: &out, ErrOut: &errOut})
	p.now = func() time.Time { return testNow }
	progressRun(t, p)
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		delete(e, "time")
		if e["schemaVersion"] != 1.0 {
			t.Errorf("schemaVersion %v, want 1: %s", e["schemaVersion"], line)
		}
		delete(e, "schemaVersion")
		got = append(got, e)
	}
	want := []map[string]any{
		{"event": "warning", "message": "deprecated field"},
		{"event": "warning", "message": "tls: failed to find any PEM data", "kind": "Secret", "namespace": "ns", "name": "tls"},
		{"event": "warning", "message": "tls: failed to find any PEM data", "kind": "Secret", "namespace": "ns", "name": "tls2"},
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
		{"event": "wait", "message": "applied objects", "ready": 0.0, "total": 1.0, "elapsed": "12s", "deadline": "2026-11-21T12:00:48Z",
			"pending": []any{map[string]any{"object": "Namespace/ns", "message": "Terminating", "reason": "InProgress"}}},
		{"event": "summary", "success": false, "duration": "1.5s", "changes": map[string]any{"Created": 1.0, "Failed": 1.0, "Skipped": 1.0},
			"stepChanges": map[string]any{"Configured": 1.0}, "done": 3.0, "total": 3.0,
			"requests": map[string]any{"reads": 3.0, "writes": 2.0, "byVerb": map[string]any{"GET": 2.0, "LIST": 1.0, "PATCH": 2.0}}, "errors": []any{"ConfigMap/ns/c: apply: invalid: bad"},
			"errorsByReason": map[string]any{"Invalid": 1.0}, "skipped": map[string]any{"already gone": 1.0},
			"wait": map[string]any{"skipped": true, "ready": 0.0, "total": 0.0, "pending": 0.0, "elapsed": "0s"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantErr := `1 failure by reason: 1 invalid
invalid (1): the server rejected the object
error: ConfigMap/ns/c: apply: invalid: bad
skipped on purpose (1): 1 already gone
wait: not started: 1 object failed to apply, which no waiting fixes (--wait-on-failure waits anyway)
`
	if diff := cmp.Diff(wantErr, errOut.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

func TestApplyOrderFlag(t *testing.T) {
	_, errOut, code := runCLI(t, "apply", "--order", "random")
	if code != exitUsage || !strings.Contains(errOut, `--order "random": want update, install or reconcile`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestSetHTTP2HealthCheck(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration
		env     map[string]string
		want    map[string]string
	}{
		{"default request timeout", 30 * time.Second, map[string]string{}, map[string]string{envHTTP2ReadIdle: "15", envHTTP2Ping: "15"}},
		{"short request timeout", 5 * time.Second, map[string]string{}, map[string]string{envHTTP2ReadIdle: "2", envHTTP2Ping: "2"}},
		{"shortest", 500 * time.Millisecond, map[string]string{}, map[string]string{envHTTP2ReadIdle: "1", envHTTP2Ping: "1"}},
		{"no request timeout", 0, map[string]string{}, map[string]string{}},
		{"the environment wins", 30 * time.Second, map[string]string{envHTTP2ReadIdle: "60"}, map[string]string{envHTTP2ReadIdle: "60", envHTTP2Ping: "15"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			setHTTP2HealthCheck(tc.timeout, func(k string) string { return env[k] }, func(k, v string) error { env[k] = v; return nil })
			if diff := cmp.Diff(tc.want, env); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
		})
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
		if code := failureCode(tc.errs...); code != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.name, code, tc.code)
		}
		var buf bytes.Buffer
		writeFailures(&buf, groupFailures(tc.errs, pathsOf(context.Background())))
		if strings.Count(buf.String(), "error: ") != len(errorLines(errors.Join(tc.errs...))) {
			t.Errorf("%s: not every failure printed:\n%s", tc.name, buf.String())
		}
	}
}
