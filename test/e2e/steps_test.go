//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

// The components' test inputs, shared with their own tests.
const (
	snoWorkersConfig = "../../components/ingress/testdata/clusters/sno-workers.yaml"
	ntoStandalone    = "../../cmd/payload-apply/testdata/extra-nodetuning/standalone"
	ntoHosted        = "../../cmd/payload-apply/testdata/extra-nodetuning/hosted"
	poExtra          = "../../cmd/payload-apply/testdata/platformoperators/extra"
	poCatalog        = "../../cmd/payload-apply/testdata/platformoperators/catalog"
)

// applyJSON runs `apply -o json` with args and fails the test unless it
// succeeds.
func applyJSON(t *testing.T, ctx context.Context, args ...string) []event {
	t.Helper()
	r := cli(t, ctx, append([]string{"apply", "-o", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("apply %s: exit %d:\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return parseEvents(t, r.Stdout)
}

// stepTask returns the "task" event of the step named name.
func stepTask(t *testing.T, events []event, name string) event {
	t.Helper()
	for _, e := range events {
		if e.Event == "task" && e.Step == name {
			return e
		}
	}
	t.Fatalf("no task event for step %s", name)
	return event{}
}

// reapplyWritesNothing applies again with args: the steps named run, every
// step is unchanged and not one write request is sent.
func reapplyWritesNothing(t *testing.T, ctx context.Context, steps []string, args ...string) {
	t.Helper()
	events := applyJSON(t, ctx, args...)
	for _, name := range steps {
		stepTask(t, events, name)
	}
	sum := summaryOf(t, events)
	for _, e := range events {
		if e.Event == "task" && e.Action != "Unchanged" && (e.Step != "" || e.Action != "Skipped") {
			t.Errorf("re-apply: %s%s: %s %s", e.object(), e.Step, e.Action, e.Message)
		}
	}
	if sum.Requests.Writes != 0 {
		t.Errorf("re-apply: %d write requests, want none", sum.Requests.Writes)
	}
}

// get returns an object of the server, nil when it does not exist.
func (c *cluster) get(t *testing.T, apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	gvr, ok := c.resource(t, gvk)
	if !ok {
		c.mapper.(meta.ResettableRESTMapper).Reset()
		if gvr, ok = c.resource(t, gvk); !ok {
			t.Fatalf("%s: no such kind on the server", gvk)
		}
	}
	u, err := c.client.Resource(gvr).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// rendered runs `render -o DIR` with args and returns the objects of file
// (relative to DIR), in order.
func rendered(t *testing.T, ctx context.Context, file string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	dir := t.TempDir()
	if r := cli(t, ctx, append([]string{"render", "--output-dir", dir}, args...)...); r.Code != 0 {
		t.Fatalf("render: exit %d: %s", r.Code, r.Stderr)
	}
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// subset says where got differs from want, comparing only what want
// holds (the server adds defaults and metadata); "" when it does not.
func subset(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v, want a map", path, got)
		}
		for k, v := range w {
			if d := subset(v, g[k], path+"."+k); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %v, want %v", path, got, want)
		}
		for i := range w {
			if d := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: %v, want %v", path, got, want)
		}
	}
	return ""
}

// matchesRendered fails unless every rendered object is on the server with
// what render shows (its status aside).
func matchesRendered(t *testing.T, c *cluster, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, want := range objs {
		id := want.GetKind() + "/" + want.GetName()
		live := c.get(t, want.GetAPIVersion(), want.GetKind(), want.GetNamespace(), want.GetName())
		if live == nil {
			t.Errorf("%s: not on the server", id)
			continue
		}
		w := want.DeepCopy().Object
		delete(w, "status")
		if d := subset(w, live.Object, id); d != "" {
			t.Errorf("differs from render: %s", d)
		}
	}
}

// TestApplySteps applies the embedded payload with each component whose
// apply-time work is a step, through the command, to one server of its
// own: the step runs in the graph after its objects, writes what the
// component's rules say, is counted in the summary, and a second apply
// writes nothing.
func TestApplySteps(t *testing.T) {
	s := apiserver.New(t, apiserver.Options{})
	ctx := t.Context()
	kc := "--kubeconfig=" + s.Kubeconfig
	c := newCluster(t, s.RESTConfig())

	t.Run("ingress: single node with workers", func(t *testing.T) {
		args := []string{kc, "--cluster-config", snoWorkersConfig}
		events := applyJSON(t, ctx, args...)
		step := stepTask(t, events, "ingress/default-placement")
		if step.Action != "Configured" || step.Message != "1 write" || step.File != "generated/0000_05_config-operator_91_ingress-default-placement.step" {
			t.Errorf("step event %+v", step)
		}
		// The step ran after the Ingress config it writes the status of.
		var ingressDone, stepDone int
		for i, e := range events {
			switch {
			case e.Event == "task" && e.Kind == "Ingress" && e.Name == "cluster":
				ingressDone = i
			case e.Event == "task" && e.Step == "ingress/default-placement":
				stepDone = i
			}
		}
		if ingressDone == 0 || stepDone < ingressDone {
			t.Errorf("the step (event %d) did not run after Ingress/cluster (event %d)", stepDone, ingressDone)
		}
		if sum := summaryOf(t, events); sum.StepChanges["Configured"] != 1 {
			t.Errorf("summary step changes %v", sum.StepChanges)
		}

		ing := c.get(t, "config.openshift.io/v1", "Ingress", "", "cluster")
		if p, _, _ := unstructured.NestedString(ing.Object, "status", "defaultPlacement"); p != "ControlPlane" {
			t.Errorf("Ingress/cluster status.defaultPlacement %q, want ControlPlane (single control-plane node on platform None)", p)
		}
		if d, _, _ := unstructured.NestedString(ing.Object, "spec", "domain"); d != "apps.snow.example.com" {
			t.Errorf("Ingress/cluster spec.domain %q", d)
		}
		ic := c.get(t, "operator.openshift.io/v1", "IngressController", "openshift-ingress-operator", "default")
		replicas, _, _ := unstructured.NestedInt64(ic.Object, "spec", "replicas")
		sel, _, _ := unstructured.NestedStringMap(ic.Object, "spec", "nodePlacement", "nodeSelector", "matchLabels")
		if want := map[string]string{"kubernetes.io/os": "linux", "node-role.kubernetes.io/master": ""}; replicas != 1 || !reflect.DeepEqual(sel, want) {
			t.Errorf("IngressController default: replicas %d, node selector %v; want 1 on %v", replicas, sel, want)
		}

		reapplyWritesNothing(t, ctx, []string{"ingress/default-placement"}, args...)
	})

	t.Run("node tuning: PerformanceProfile standalone", func(t *testing.T) {
		args := []string{kc, "--extra-manifests", ntoStandalone}
		applyJSON(t, ctx, args...)
		want := rendered(t, ctx, "generated/0000_81_cluster-node-tuning-operator_50-performance-manual.yaml", "--extra-manifests", ntoStandalone)
		var kinds []string
		for _, o := range want {
			kinds = append(kinds, o.GetKind()+"/"+o.GetName())
		}
		slices.Sort(kinds)
		if wantKinds := []string{"KubeletConfig/performance-manual", "MachineConfig/50-performance-manual", "RuntimeClass/performance-manual",
			"Tuned/openshift-node-performance-manual"}; !slices.Equal(kinds, wantKinds) {
			t.Fatalf("rendered %v, want %v", kinds, wantKinds)
		}
		matchesRendered(t, c, want)
		rc := c.get(t, "node.k8s.io/v1", "RuntimeClass", "", "performance-manual")
		if h, _, _ := unstructured.NestedString(rc.Object, "handler"); h != "high-performance" {
			t.Errorf("RuntimeClass handler %q, want high-performance", h)
		}
		reapplyWritesNothing(t, ctx, nil, args...)
	})

	t.Run("node tuning: PerformanceProfile on a hosted control plane", func(t *testing.T) {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "clusters-hosted"}}}
		if _, err := c.client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		args := []string{kc, "--profile", "hypershift", "--extra-manifests", ntoHosted}
		events := applyJSON(t, ctx, args...)
		const name = "nodetuning/clusters-hosted/pp-config-nodepool1"
		if e := stepTask(t, events, name); e.Action != "Configured" {
			t.Errorf("step %s: %s %s", name, e.Action, e.Message)
		}
		src := c.get(t, "v1", "ConfigMap", "clusters-hosted", "pp-config-nodepool1")
		if !slices.Contains(src.GetFinalizers(), "hypershift.openshift.io/foreground-deletion") {
			t.Errorf("source ConfigMap finalizers %v", src.GetFinalizers())
		}
		preview := rendered(t, ctx, "generated/pp-config_nodetuning-pp-config-nodepool1.yaml", "--profile", "hypershift", "--extra-manifests", ntoHosted)
		var outputs []*unstructured.Unstructured
		for _, o := range preview {
			if o.GetName() != "manual-status" {
				outputs = append(outputs, o)
			}
		}
		if len(outputs) != 4 {
			t.Fatalf("preview has %d objects besides the status, want 3 ConfigMaps and the RuntimeClass", len(outputs))
		}
		matchesRendered(t, c, outputs)
		for _, cm := range []string{"tuned-manual", "mc-manual", "kc-manual", "manual-status"} {
			live := c.get(t, "v1", "ConfigMap", "clusters-hosted", cm)
			if live == nil {
				t.Errorf("ConfigMap clusters-hosted/%s missing", cm)
				continue
			}
			if refs := live.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != src.GetUID() || refs[0].Controller == nil || !*refs[0].Controller {
				t.Errorf("ConfigMap %s: owner references %+v, want the source's uid %s", cm, refs, src.GetUID())
			}
		}
		status := c.get(t, "v1", "ConfigMap", "clusters-hosted", "manual-status")
		if text, _, _ := unstructured.NestedString(status.Object, "data", "status"); !strings.Contains(text, "type: Available") {
			t.Errorf("status ConfigMap:\n%s", text)
		}
		reapplyWritesNothing(t, ctx, []string{name}, args...)
	})

	t.Run("platform operators: apply --wait until the aggregate ClusterOperator settles", func(t *testing.T) {
		// The cluster says hypershift since the last apply: name the profile.
		args := []string{kc, "--profile", "self-managed-high-availability", "--feature-set", "TechPreviewNoUpgrade", "--extra-manifests", poExtra, "--catalog", poCatalog}
		// The other operators of the payload are settled already.
		setOperatorStatus(t, ctx, c.client, "ingress", "0.0.1-snapshot", condition("Available", "True"), condition("Degraded", "False"))
		setOperatorStatus(t, ctx, c.client, "node-tuning", "0.0.1-snapshot", condition("Available", "True"), condition("Degraded", "False"))

		// Nobody installs the bundles: the wait times out naming the
		// aggregate ClusterOperator and why it is not available.
		start := time.Now()
		r := cli(t, ctx, append([]string{"apply", "--wait", "--timeout=10s"}, args...)...)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Code, r.Stderr)
		}
		if d := time.Since(start); d > 40*time.Second {
			t.Errorf("took %s with --timeout=10s", d)
		}
		if !strings.Contains(r.Stderr, "error: ClusterOperator.config.openshift.io/platform-operators-aggregated: wait: timeout: not ready after") ||
			!strings.Contains(r.Stderr, "Available=False (PlatformOperatorError): 2 of 2 platform operators are not installed") {
			t.Errorf("stderr does not name the aggregate ClusterOperator:\n%s", r.Stderr)
		}
		t.Logf("apply --wait --timeout=10s:\n%s", r.Stderr)
		for _, po := range []string{"cert-manager", "service-binding"} {
			bd := c.get(t, "core.rukpak.io/v1alpha2", "BundleDeployment", "", po)
			owner := c.get(t, "platform.openshift.io/v1alpha1", "PlatformOperator", "", po)
			if bd == nil || owner == nil {
				t.Fatalf("BundleDeployment %s (%v) or PlatformOperator (%v) missing after one apply", po, bd != nil, owner != nil)
			}
			if refs := bd.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != owner.GetUID() {
				t.Errorf("BundleDeployment %s: owner references %+v, want PlatformOperator uid %s", po, refs, owner.GetUID())
			}
		}

		// Play rukpak and the Deployment controller once the apply waits:
		// the re-runs of the step see it and the wait ends.
		bg := startCLI(t, ctx, append([]string{"apply", "--wait", "--timeout=60s", "-o", "json"}, args...)...)
		played := false
		for e := range bg.Events {
			if e.Event != "wait" || played {
				continue
			}
			played = true
			for _, po := range []string{"cert-manager", "service-binding"} {
				setStatus(t, c, "core.rukpak.io/v1alpha2", "BundleDeployment", "", po, map[string]any{"conditions": []any{
					metaCondition("HasValidBundle", "True", "UnpackSuccessful"), metaCondition("Installed", "True", "InstallationSucceeded")}})
			}
			dep := c.get(t, "apps/v1", "Deployment", "openshift-platform-operators", "platform-operators-controller-manager")
			setStatus(t, c, "apps/v1", "Deployment", "openshift-platform-operators", "platform-operators-controller-manager", map[string]any{
				"observedGeneration": dep.GetGeneration(), "replicas": int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1),
				"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "ok",
					"lastUpdateTime": time.Now().UTC().Format(time.RFC3339), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}})
		}
		code, events := bg.Wait(t)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, bg.Stderr.String())
		}
		var reran bool
		for _, e := range events {
			reran = reran || (e.Event == "step" && e.Step == "platformoperators/reconcile" && e.Action == "Configured")
		}
		if !reran {
			t.Error("no event of the step run again while waiting")
		}
		co := c.get(t, "config.openshift.io/v1", "ClusterOperator", "", "platform-operators-aggregated")
		conds, _, _ := unstructured.NestedSlice(co.Object, "status", "conditions")
		got := map[string]string{}
		for _, x := range conds {
			m := x.(map[string]any)
			got[fmt.Sprint(m["type"])] = fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"])
		}
		if !strings.HasPrefix(got["Available"], "True AsExpected: all 2 platform operators are installed") ||
			!strings.HasPrefix(got["Degraded"], "False") || !strings.HasPrefix(got["Progressing"], "False") {
			t.Errorf("aggregate ClusterOperator conditions %v", got)
		}
		versions, _, _ := unstructured.NestedSlice(co.Object, "status", "versions")
		if len(versions) != 1 || versions[0].(map[string]any)["version"] != "4.22.0" {
			t.Errorf("aggregate ClusterOperator versions %v, want the release version", versions)
		}
		for _, po := range []string{"cert-manager", "service-binding"} {
			live := c.get(t, "platform.openshift.io/v1alpha1", "PlatformOperator", "", po)
			if name, _, _ := unstructured.NestedString(live.Object, "status", "activeBundleDeployment", "name"); name != po {
				t.Errorf("PlatformOperator %s: status.activeBundleDeployment.name %q", po, name)
			}
		}
		reapplyWritesNothing(t, ctx, []string{"ingress/default-placement", "platformoperators/reconcile"}, args...)
	})

	t.Run("a failing step is an error naming it, and a re-run converges", func(t *testing.T) {
		// An admission policy freezes Ingress/cluster's placement (Workers
		// since the last apply): the step's write is denied.
		vap, binding := freezePlacementPolicy()
		for _, o := range []*unstructured.Unstructured{vap, binding} {
			gvr, _ := c.resource(t, o.GroupVersionKind())
			if _, err := c.client.Resource(gvr).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		ingresses := schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "ingresses"}
		denied := func() bool {
			patch := []byte(`{"status":{"defaultPlacement":"ControlPlane"}}`)
			_, err := c.client.Resource(ingresses).Patch(ctx, "cluster", types.MergePatchType, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}, "status")
			return err != nil
		}
		waitFor(t, "the policy to deny", denied)

		args := []string{kc, "--cluster-config", snoWorkersConfig}
		r := cli(t, ctx, append([]string{"apply", "-o", "json"}, args...)...)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Code, r.Stderr)
		}
		events := parseEvents(t, r.Stdout)
		e := stepTask(t, events, "ingress/default-placement")
		if e.Action != "Failed" || e.Reason != "Invalid" || !strings.HasPrefix(e.Error, "step ingress/default-placement: invalid: Ingress/cluster: write status.defaultPlacement ControlPlane: ") ||
			!strings.Contains(e.Error, "the default placement is frozen") {
			t.Errorf("step event: %s %s: %s", e.Action, e.Reason, e.Error)
		}
		if sum := summaryOf(t, events); *sum.Success || sum.StepChanges["Failed"] != 1 || len(sum.Errors) != 1 ||
			sum.Errors[0] != "05/config-operator: generated/0000_05_config-operator_91_ingress-default-placement.step: "+e.Error {
			t.Errorf("summary: success %v, step changes %v, errors %q", *sum.Success, sum.StepChanges, sum.Errors)
		}

		gvr, _ := c.resource(t, binding.GroupVersionKind())
		if err := c.client.Resource(gvr).Delete(ctx, binding.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the policy to allow", func() bool { return !denied() })
		events = applyJSON(t, ctx, args...)
		if e := stepTask(t, events, "ingress/default-placement"); e.Action != "Configured" {
			t.Errorf("re-run: step %s %s", e.Action, e.Message)
		}
		ing := c.get(t, "config.openshift.io/v1", "Ingress", "", "cluster")
		if p, _, _ := unstructured.NestedString(ing.Object, "status", "defaultPlacement"); p != "ControlPlane" {
			t.Errorf("Ingress/cluster status.defaultPlacement %q after the re-run", p)
		}
	})
}

// freezePlacementPolicy is a ValidatingAdmissionPolicy and its binding that
// deny any change of Ingress/cluster's status.defaultPlacement.
func freezePlacementPolicy() (policy, binding *unstructured.Unstructured) {
	policy = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": "freeze-default-placement"},
		"spec": map[string]any{
			"failurePolicy": "Fail",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{"config.openshift.io"}, "apiVersions": []any{"*"}, "operations": []any{"UPDATE"}, "resources": []any{"ingresses/status"}}}},
			"validations": []any{map[string]any{
				"expression": "has(oldObject.status) && has(oldObject.status.defaultPlacement) && has(object.status.defaultPlacement) && object.status.defaultPlacement == oldObject.status.defaultPlacement",
				"message":    "the default placement is frozen"}},
		},
	}}
	binding = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": "freeze-default-placement"},
		"spec":     map[string]any{"policyName": "freeze-default-placement", "validationActions": []any{"Deny"}},
	}}
	return policy, binding
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// metaCondition is a metav1.Condition as a status holds it.
func metaCondition(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": reason,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

// setStatus replaces an object's status, as its controller would.
func setStatus(t *testing.T, c *cluster, apiVersion, kind, namespace, name string, status map[string]any) {
	t.Helper()
	u := c.get(t, apiVersion, kind, namespace, name)
	if u == nil {
		t.Fatalf("%s %s/%s missing", kind, namespace, name)
	}
	u.Object["status"] = status
	gvr, _ := c.resource(t, u.GroupVersionKind())
	if _, err := c.client.Resource(gvr).Namespace(namespace).UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("%s %s/%s: update status: %v", kind, namespace, name, err)
	}
}
