//go:build e2e

package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func TestMain(m *testing.M) {
	os.Exit(apiserver.Run(m, apiserver.Options{}))
}

// counter counts the requests of a client by read and write.
type counter struct{ reads, writes atomic.Int64 }

func (c *counter) wrap(cfg *rest.Config) {
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet {
				c.reads.Add(1)
			} else {
				c.writes.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
}

func (c *counter) reset() { c.reads.Store(0); c.writes.Store(0) }

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// env is a Manager on the shared server with a request counter, a plain
// dynamic client to look behind its back, and a namespace of its own.
type env struct {
	t      *testing.T
	mgr    *Manager
	count  *counter
	client dynamic.Interface
	ns     string
}

func newEnv(t *testing.T, s *apiserver.Server) *env {
	t.Helper()
	cfg := s.RESTConfig()
	c := &counter{}
	c.wrap(cfg)
	mgr, err := NewManager(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, mgr: mgr, count: c, client: client, ns: strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))}
	if len(e.ns) > 60 {
		e.ns = e.ns[:60]
	}
	e.apply(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", e.ns))
	return e
}

// apply applies a YAML document (NS is replaced by the test's namespace).
func (e *env) apply(doc string) (Change, error) {
	e.t.Helper()
	return e.mgr.Apply(e.t.Context(), parse(e.t, strings.ReplaceAll(doc, "NS", e.ns)), DefaultApplyOptions())
}

func (e *env) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	e.t.Helper()
	u, err := e.client.Resource(gvr).Namespace(ns).Get(e.t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func mustAction(t *testing.T, c Change, err error, want Action) {
	t.Helper()
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if c.Action != want {
		t.Fatalf("action %s (%s), want %s", c.Action, c.Message, want)
	}
}

func TestApplyCreateNoOpChange(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	cm := `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: NS, labels: {a: "1"}}
data: {x: "1", y: "2"}
`
	var rv string
	t.Run("create", func(t *testing.T) {
		c, err := e.apply(cm)
		mustAction(t, c, err, Created)
		rv = e.get(configMaps, e.ns, "cm").GetResourceVersion()
	})
	t.Run("no-op: one read, no write", func(t *testing.T) {
		e.count.reset()
		c, err := e.apply(cm)
		mustAction(t, c, err, Unchanged)
		if w := e.count.writes.Load(); w != 0 {
			t.Errorf("%d writes", w)
		}
		if r := e.count.reads.Load(); r != 1 {
			t.Errorf("%d reads, want 1", r)
		}
		if got := e.get(configMaps, e.ns, "cm").GetResourceVersion(); got != rv {
			t.Errorf("resourceVersion %s, was %s", got, rv)
		}
	})
	t.Run("change", func(t *testing.T) {
		e.count.reset()
		c, err := e.apply(strings.Replace(cm, `x: "1"`, `x: "changed"`, 1))
		mustAction(t, c, err, Configured)
		if w := e.count.writes.Load(); w != 1 {
			t.Errorf("%d writes, want 1", w)
		}
		if got, _, _ := unstructured.NestedString(e.get(configMaps, e.ns, "cm").Object, "data", "x"); got != "changed" {
			t.Errorf("data.x = %q", got)
		}
	})
	t.Run("a field left the payload: it leaves the object", func(t *testing.T) {
		c, err := e.apply(strings.Replace(strings.Replace(cm, `x: "1"`, `x: "changed"`, 1), `, y: "2"`, "", 1))
		mustAction(t, c, err, Configured)
		if _, found, _ := unstructured.NestedString(e.get(configMaps, e.ns, "cm").Object, "data", "y"); found {
			t.Error("data.y is still there")
		}
	})
	t.Run("someone else's change is put back", func(t *testing.T) {
		live := e.get(configMaps, e.ns, "cm")
		_ = unstructured.SetNestedField(live.Object, "edited", "data", "x")
		if _, err := e.client.Resource(configMaps).Namespace(e.ns).Update(t.Context(), live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		c, err := e.apply(strings.Replace(strings.Replace(cm, `x: "1"`, `x: "changed"`, 1), `, y: "2"`, "", 1))
		mustAction(t, c, err, Configured)
		if got, _, _ := unstructured.NestedString(e.get(configMaps, e.ns, "cm").Object, "data", "x"); got != "changed" {
			t.Errorf("data.x = %q", got)
		}
	})
}

func TestApplyCreateOnlyAndDelete(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	createOnly := `
apiVersion: v1
kind: ConfigMap
metadata: {name: once, namespace: NS, annotations: {release.openshift.io/create-only: "true"}}
data: {x: "1"}
`
	c, err := e.apply(createOnly)
	mustAction(t, c, err, Created)
	e.count.reset()
	c, err = e.apply(strings.Replace(createOnly, `x: "1"`, `x: "2"`, 1))
	mustAction(t, c, err, Skipped)
	if got, _, _ := unstructured.NestedString(e.get(configMaps, e.ns, "once").Object, "data", "x"); got != "1" {
		t.Errorf("create-only object was updated: x = %q", got)
	}
	if w := e.count.writes.Load(); w != 0 {
		t.Errorf("%d writes for an existing create-only object", w)
	}

	del := `
apiVersion: v1
kind: ConfigMap
metadata: {name: once, namespace: NS, annotations: {release.openshift.io/delete: "true"}}
`
	c, err = e.apply(del)
	mustAction(t, c, err, Deleted)
	if e.get(configMaps, e.ns, "once") != nil {
		t.Error("not deleted")
	}
	e.count.reset()
	c, err = e.apply(del)
	mustAction(t, c, err, Skipped)
	if w := e.count.writes.Load(); w != 0 {
		t.Errorf("%d writes to delete what is gone", w)
	}
}

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.KIND.example.com}
spec:
  group: KIND.example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func TestApplyCustomResources(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	group := e.ns
	crd := strings.ReplaceAll(widgetCRD, "KIND", group)
	cr := strings.ReplaceAll("apiVersion: KIND.example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: NS}\nspec: {size: 1}\n", "KIND", group)

	t.Run("a kind nobody defines fails at once", func(t *testing.T) {
		start := time.Now()
		_, err := e.apply(strings.Replace(cr, "Widget", "Gadget", 1))
		if !IsResourceTypeMissing(err) {
			t.Fatalf("error %v, want resource type missing", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %s", d)
		}
		if !strings.Contains(err.Error(), "Gadget."+group+".example.com/"+e.ns+"/w: apply: resource type missing: the server has no API for Gadget in "+group+".example.com/v1") {
			t.Errorf("message: %v", err)
		}
	})
	t.Run("an expected kind waits for its CRD", func(t *testing.T) {
		e.mgr.ExpectKinds(schema.GroupKind{Group: group + ".example.com", Kind: "Widget"})
		done := make(chan error, 1)
		var waits []string
		go func() {
			opts := DefaultApplyOptions()
			opts.OnWait = func(id manifest.ID, why string) { waits = append(waits, id.String()+": "+why) }
			c, err := e.mgr.Apply(context.Background(), parse(t, strings.ReplaceAll(cr, "NS", e.ns)), opts)
			if err == nil && c.Action != Created {
				err = fmt.Errorf("action %s", c.Action)
			}
			done <- err
		}()
		c, err := e.apply(crd)
		mustAction(t, c, err, Created)
		if err := <-done; err != nil {
			t.Fatalf("custom resource: %v", err)
		}
		// The custom resource usually asks before its CRD is there.
		for _, w := range waits {
			if w != "Widget."+group+".example.com/"+e.ns+"/w: waiting for its CustomResourceDefinition: no API for Widget in "+group+".example.com/v1 yet" {
				t.Errorf("OnWait: %q", w)
			}
		}
		crdObj := e.get(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, "", "widgets."+group+".example.com")
		if r := Check(nil, crdObj); !r.Ready {
			t.Errorf("CRD not established after Apply: %s", r.Message)
		}
	})
	t.Run("re-applying changes nothing", func(t *testing.T) {
		e.count.reset()
		for _, doc := range []string{crd, cr} {
			c, err := e.apply(doc)
			mustAction(t, c, err, Unchanged)
		}
		if w := e.count.writes.Load(); w != 0 {
			t.Errorf("%d writes", w)
		}
	})
}

func TestApplyNamespaces(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	t.Run("a missing namespace fails without a write", func(t *testing.T) {
		e.count.reset()
		_, err := e.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: NS-nowhere}\n")
		if ReasonOf(err) != ReasonNamespaceMissing {
			t.Fatalf("error %v, want namespace missing", err)
		}
		if w := e.count.writes.Load(); w != 0 {
			t.Errorf("%d writes", w)
		}
	})
	t.Run("an expected namespace is waited for", func(t *testing.T) {
		later := e.ns + "-later"
		e.mgr.ExpectNamespaces(later)
		done := make(chan error, 1)
		go func() {
			_, err := e.mgr.Apply(context.Background(), parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: "+later+"}\n"), DefaultApplyOptions())
			done <- err
		}()
		c, err := e.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-later}\n")
		mustAction(t, c, err, Created)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a namespaced object without namespace is invalid", func(t *testing.T) {
		_, err := e.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
		if ReasonOf(err) != ReasonInvalid {
			t.Fatalf("error %v, want invalid", err)
		}
	})
}

func TestApplyInvalidFailsFast(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	start := time.Now()
	_, err := e.apply("apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: NS}\nspec: {ports: [{port: 99999}]}\n")
	if ReasonOf(err) != ReasonInvalid {
		t.Fatalf("error %v, want invalid", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s: an invalid object was retried", d)
	}
}

func TestDryRun(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	opts := DefaultApplyOptions()
	opts.DryRun = true
	ns := e.ns + "-dry"
	group := ns
	e.mgr.ExpectKinds(schema.GroupKind{Group: group + ".example.com", Kind: "Widget"})
	e.count.reset()
	for _, doc := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n",
		strings.ReplaceAll(widgetCRD, "KIND", group),
	} {
		c, err := e.mgr.Apply(t.Context(), parse(t, doc), opts)
		mustAction(t, c, err, Created)
		if !c.DryRun {
			t.Error("change not marked as dry run")
		}
	}
	for _, doc := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: " + ns + "}\n",
		"apiVersion: " + group + ".example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: " + e.ns + "}\n",
	} {
		c, err := e.mgr.Apply(t.Context(), parse(t, doc), opts)
		mustAction(t, c, err, Skipped)
	}
	if e.get(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", ns) != nil {
		t.Error("a dry run created a namespace")
	}
	if e.count.writes.Load() != 2 {
		t.Errorf("%d writes, want the 2 dry-run writes", e.count.writes.Load())
	}
}

func TestWait(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	cm := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: "+e.ns+"}\n")
	job := parse(t, `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: `+e.ns+`}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`)
	for _, o := range []*unstructured.Unstructured{cm, job} {
		if _, err := e.mgr.Apply(t.Context(), o, DefaultApplyOptions()); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.mgr.Wait(t.Context(), []*unstructured.Unstructured{cm}, WaitOptions{Timeout: 10 * time.Second, Interval: 100 * time.Millisecond}); err != nil {
		t.Errorf("ConfigMap: %v", err)
	}
	// No kubelet runs: the Job never completes.
	var progress []WaitProgress
	err := e.mgr.Wait(t.Context(), []*unstructured.Unstructured{cm, job}, WaitOptions{Timeout: time.Second, Interval: 200 * time.Millisecond,
		Progress: func(p WaitProgress) { progress = append(progress, p) }})
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.Reason != ReasonTimeout || ae.Object.Name != "j" {
		t.Fatalf("error %v, want a timeout for the Job", err)
	}
	if !strings.Contains(err.Error(), "Job.batch/"+e.ns+"/j: wait: timeout: not ready after") || !strings.Contains(err.Error(), "not complete: 0 active") {
		t.Errorf("message: %v", err)
	}
	if len(progress) == 0 || progress[len(progress)-1].Ready != 1 || len(progress[len(progress)-1].Pending) != 1 {
		t.Errorf("progress: %+v", progress)
	}
}

// TestWaitStopAtFailure: with StopAtFailure the wait ends at the poll
// that sees a failure no waiting fixes (a Job failed), instead of waiting
// for the others until the timeout; the others are not errors. Without
// it, the wait goes on until the timeout.
func TestWaitStopAtFailure(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	job := func(name string) *unstructured.Unstructured {
		return parse(t, `
apiVersion: batch/v1
kind: Job
metadata: {name: `+name+`, namespace: `+e.ns+`}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`)
	}
	failing, pending := job("failing"), job("pending")
	for _, o := range []*unstructured.Unstructured{failing, pending} {
		if _, err := e.mgr.Apply(t.Context(), o, DefaultApplyOptions()); err != nil {
			t.Fatal(err)
		}
	}
	// No job controller runs: write the failure as it would.
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	live := e.get(jobs, e.ns, "failing")
	now := time.Now().UTC().Format(time.RFC3339)
	live.Object["status"] = map[string]any{"failed": int64(1), "startTime": now, "conditions": []any{
		map[string]any{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "lastTransitionTime": now},
		map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "lastTransitionTime": now},
	}}
	if _, err := e.client.Resource(jobs).Namespace(e.ns).UpdateStatus(t.Context(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	objs := []*unstructured.Unstructured{pending, failing}

	start := time.Now()
	var last WaitProgress
	err := e.mgr.Wait(t.Context(), objs, WaitOptions{Timeout: time.Minute, Interval: 100 * time.Millisecond, StopAtFailure: true,
		Progress: func(p WaitProgress) { last = p }})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s: the wait did not end at the failure", d)
	}
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.Reason != ReasonNotReady || ae.Object.Name != "failing" || strings.Contains(err.Error(), "pending") {
		t.Errorf("error %v, want the failed Job's alone", err)
	}
	if len(last.Pending) != 2 || last.Pending[0].Object.Name != "pending" || last.Pending[0].Reason != "JobNotComplete" || last.Pending[1].Reason != "JobFailed" {
		t.Errorf("last progress: %+v", last)
	}

	start = time.Now()
	err = e.mgr.Wait(t.Context(), objs, WaitOptions{Timeout: 2 * time.Second, Interval: 100 * time.Millisecond})
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("took %s: without StopAtFailure the wait must go on until the timeout", d)
	}
	if !strings.Contains(fmt.Sprint(err), "pending: wait: timeout") {
		t.Errorf("error %v, want a timeout for the pending Job too", err)
	}
}

// TestRetryThroughRestart applies while kube-apiserver is down: the request
// is retried until it is back.
func TestRetryThroughRestart(t *testing.T) {
	s := apiserver.New(t, apiserver.Options{})
	e := newEnv(t, s)
	if err := s.Kill(apiserver.APIServer); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := e.mgr.Apply(context.Background(), parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: "+e.ns+"}\n"), DefaultApplyOptions())
		if err == nil && c.Action != Created {
			err = fmt.Errorf("action %s", c.Action)
		}
		done <- err
	}()
	// Let the apply meet the refused connection before the restart.
	for e.count.reads.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Restart(t.Context(), apiserver.APIServer); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("apply across a restart: %v", err)
	}
}
