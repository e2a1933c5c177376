package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	g := payload.NewTaskGraph([]*manifest.Manifest{&ms[0], &ms[1]})
	p.setTotal(len(g.Tasks))
	p.HandleWarningHeader(299, "", "deprecated field")
	p.HandleWarningHeader(299, "", "deprecated field")
	p.event(payload.Event{Type: payload.EventStageStarted, Total: 1}, resourceapply.Change{})
	p.event(payload.Event{Type: payload.EventTaskDone, Task: g.Tasks[0], Staged: true, Done: 1, Total: 2},
		resourceapply.Change{Object: ms[0].ID(), Action: resourceapply.Created})
	p.event(payload.Event{Type: payload.EventStageDone, Total: 1}, resourceapply.Change{})
	p.event(payload.Event{Type: payload.EventTaskDone, Task: g.Tasks[1], Done: 2, Total: 2,
		Err: &resourceapply.ApplyError{Object: ms[1].ID(), Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")}},
		resourceapply.Change{Object: ms[1].ID(), Action: resourceapply.Failed})
	p.event(payload.Event{Type: payload.EventRunLevelDone, RunLevel: 50, Level: payload.LevelCount{Tasks: 2, Applied: 1, Failed: 1}, Done: 2, Total: 2}, resourceapply.Change{})
	p.wait("applied objects", resourceapply.WaitProgress{Ready: 0, Total: 1, Pending: []resourceapply.Pending{{Object: ms[0].ID(), Message: "Terminating"}}})
	cs := &resourceapply.ChangeSet{}
	cs.Add(resourceapply.Change{Action: resourceapply.Created}, resourceapply.Change{Action: resourceapply.Failed})
	p.summary(false, 1500*time.Millisecond, cs, map[string]int64{"GET": 2, "LIST": 1, "PATCH": 2}, []string{"ConfigMap/ns/c: apply: invalid: bad"})
}

func TestProgressText(t *testing.T) {
	var out, errOut bytes.Buffer
	p := newProgress(IOStreams{Out: &out, ErrOut: &errOut}, false)
	progressRun(t, p)
	want := `warning: deprecated field
stage: 1 CustomResourceDefinitions and Namespaces first
stage: done, 1 of 2 done (50%)
run level 50: 2 objects, 1 failed; 2 of 2 done (100%)
wait: applied objects: 0 of 1 ready; waiting for
  Namespace/ns: Terminating
applied 1 of 2 objects in 1.5s: 1 created, 1 failed; 5 requests (2 writes)
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
			"name": "ns", "staged": true, "action": "Created", "runLevel": 50.0, "done": 1.0, "total": 2.0},
		{"event": "stage", "message": "done", "total": 1.0, "done": 1.0},
		{"event": "task", "index": 2.0, "file": "release-manifests/0000_50_x_01.yaml", "doc": 1.0, "apiVersion": "v1", "kind": "ConfigMap",
			"namespace": "ns", "name": "c", "action": "Failed", "reason": "Invalid", "error": "ConfigMap/ns/c: apply: invalid: bad",
			"runLevel": 50.0, "done": 2.0, "total": 2.0},
		{"event": "runLevel", "runLevel": 50.0, "tasks": 2.0, "applied": 1.0, "failed": 1.0, "done": 2.0, "total": 2.0},
		{"event": "wait", "message": "applied objects", "ready": 0.0, "total": 1.0, "pending": []any{map[string]any{"object": "Namespace/ns", "message": "Terminating"}}},
		{"event": "summary", "success": false, "duration": "1.5s", "changes": map[string]any{"Created": 1.0, "Failed": 1.0}, "done": 2.0, "total": 2.0,
			"requests": map[string]any{"reads": 3.0, "writes": 2.0, "byVerb": map[string]any{"GET": 2.0, "LIST": 1.0, "PATCH": 2.0}}, "errors": []any{"ConfigMap/ns/c: apply: invalid: bad"}},
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
