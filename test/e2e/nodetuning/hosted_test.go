//go:build e2e

// Package nodetuning_test drives the node tuning component's hosted
// (HyperShift) step against a real kube-apiserver: the step is planned by
// the component's render hook from a source ConfigMap, as plan.Build does,
// and run with a component.Cluster as the apply engine will build it.
package nodetuning_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func TestMain(m *testing.M) {
	// The garbage collector deletes the embedded ConfigMaps through their
	// owner references once the source ConfigMap is gone.
	os.Exit(apiserver.Run(m, apiserver.Options{Controllers: []string{"garbage-collector"}}))
}

// recorder counts the write requests that pass through a client.
type recorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	writes []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		line := req.Method + " " + req.URL.Path
		if req.URL.Query().Has("dryRun") {
			line += " (dry run)"
		}
		r.mu.Lock()
		r.writes = append(r.writes, line)
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

// take returns the writes since the last take.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.writes
	r.writes = nil
	return w
}

// env is one test's cluster access: the step's Cluster, whose requests are
// recorded, and a plain clientset for setting up and checking.
type env struct {
	cluster *component.Cluster
	rec     *recorder
	kube    kubernetes.Interface
	ns      string
}

func newEnv(t *testing.T, ns string) *env {
	t.Helper()
	s := apiserver.Shared(t)
	rec := &recorder{}
	cfg := s.RESTConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec })
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &env{
		cluster: &component.Cluster{
			Client:       resourceapply.DynamicClient(dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))),
			FieldManager: "payload-apply-e2e",
		},
		rec:  rec,
		kube: kube,
		ns:   ns,
	}
}

// sourceYAML is a source ConfigMap as the NodePool controller writes it,
// holding a profile like NTO's "manual" example.
func sourceYAML(ns, cm, profile, isolated string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %[2]s
  namespace: %[1]s
  labels:
    hypershift.openshift.io/performanceprofile-config: "true"
    hypershift.openshift.io/nodePool: nodepool1
  annotations:
    hypershift.openshift.io/nodePool: clusters/nodepool1
data:
  tuning: |
    apiVersion: performance.openshift.io/v2
    kind: PerformanceProfile
    metadata:
      name: %[3]s
    spec:
      cpu:
        isolated: "%[4]s"
        reserved: "0"
        offlined: "2,3"
      hugepages:
        defaultHugepagesSize: 1G
        pages:
        - size: 1G
          count: 1
          node: 0
        - size: 2M
          count: 128
      realTimeKernel:
        enabled: true
      numa:
        topologyPolicy: single-numa-node
      nodeSelector:
        node-role.kubernetes.io/worker-cnf: ""
`, ns, cm, profile, isolated)
}

// plan renders the step for a source ConfigMap, as plan.Build does.
func plan(t *testing.T, naming, source string) component.Step {
	t.Helper()
	ms, err := manifest.Parse("extra/pp-config.yaml", []byte(source), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := &component.Input{Extra: []*manifest.Manifest{&ms[0]}, HostedControlPlane: true}
	out, err := nodetuning.Hook{Naming: nodetuning.Naming(naming)}.Render(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 1 {
		t.Fatalf("%d steps, want 1", len(out.Steps))
	}
	return out.Steps[0].Step
}

// applySource creates or updates the source ConfigMap, as the apply engine
// does before the step.
func (e *env) applySource(t *testing.T, source string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(source), &cm); err != nil {
		t.Fatal(err)
	}
	cms := e.kube.CoreV1().ConfigMaps(cm.Namespace)
	live, err := cms.Get(t.Context(), cm.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		created, err := cms.Create(t.Context(), &cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return created
	}
	if err != nil {
		t.Fatal(err)
	}
	live.Data = cm.Data
	updated, err := cms.Update(t.Context(), live, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return updated
}

func (e *env) run(t *testing.T, step component.Step) []string {
	t.Helper()
	e.rec.take()
	if err := step.Run(t.Context(), e.cluster); err != nil {
		t.Fatalf("%s: %v", step.Name(), err)
	}
	return e.rec.take()
}

func (e *env) configMap(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// checkOutput checks an embedded ConfigMap: owned by the source, labelled,
// annotated, holding the object under key.
func (e *env) checkOutput(t *testing.T, source *corev1.ConfigMap, name, key, kind string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := e.configMap(t, name)
	refs := cm.OwnerReferences
	if len(refs) != 1 || refs[0].UID != source.UID || refs[0].Kind != "ConfigMap" || refs[0].Name != source.Name ||
		refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("ConfigMap %s: owner references %+v, want the source %s (uid %s) as controller", name, refs, source.Name, source.UID)
	}
	for k, v := range labels {
		if cm.Labels[k] != v {
			t.Errorf("ConfigMap %s: label %s = %q, want %q", name, k, cm.Labels[k], v)
		}
	}
	if got := cm.Annotations[nodetuning.LabelNodePool]; got != "clusters/nodepool1" {
		t.Errorf("ConfigMap %s: nodePool annotation %q", name, got)
	}
	if len(cm.Data) != 1 || !strings.Contains(cm.Data[key], "kind: "+kind+"\n") {
		t.Errorf("ConfigMap %s: data %v, want a %s under %q", name, cm.Data, kind, key)
	}
	return cm
}

// status decodes the status ConfigMap.
func (e *env) status(t *testing.T, name string) (*corev1.ConfigMap, *nodetuning.PerformanceProfileStatus) {
	t.Helper()
	cm := e.configMap(t, name)
	var st nodetuning.PerformanceProfileStatus
	if err := yaml.UnmarshalStrict([]byte(cm.Data[nodetuning.StatusKey]), &st); err != nil {
		t.Fatalf("status ConfigMap %s: %v", name, err)
	}
	return cm, &st
}

func conditionStatus(st *nodetuning.PerformanceProfileStatus) map[string]string {
	out := map[string]string{}
	for _, c := range st.Conditions {
		out[c.Type] = c.Status
		if c.LastTransitionTime == nil {
			out[c.Type] += " (no lastTransitionTime)"
		}
	}
	return out
}

var available = map[string]string{"Available": "True", "Upgradeable": "True", "Progressing": "False", "Degraded": "False"}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestHostedFlowE2E: create, re-run unchanged, change, re-run, delete.
func TestHostedFlowE2E(t *testing.T) {
	e := newEnv(t, "hcp-flow")
	v1 := sourceYAML(e.ns, "pp-config", "flow", "1")
	source := e.applySource(t, v1)
	step1 := plan(t, "seed", v1)

	t.Run("create", func(t *testing.T) {
		writes := e.run(t, step1)
		if len(writes) == 0 {
			t.Fatal("no writes")
		}
		common := map[string]string{nodetuning.LabelPerformanceProfileName: "flow", nodetuning.LabelNodePool: "nodepool1"}
		with := func(k string) map[string]string {
			l := map[string]string{k: "true"}
			for a, b := range common {
				l[a] = b
			}
			return l
		}
		tuned := e.checkOutput(t, source, "tuned-flow", "tuned", "Tuned", with(nodetuning.LabelTunedConfig))
		mc := e.checkOutput(t, source, "mc-flow", "config", "MachineConfig", with(nodetuning.LabelMachineConfig))
		e.checkOutput(t, source, "kc-flow", "config", "KubeletConfig", with(nodetuning.LabelKubeletConfig))
		// As NTO renders them: the kernel in the MachineConfig, the kernel
		// arguments in the Tuned's [bootloader].
		if !strings.Contains(mc.Data["config"], "kernelType: realtime") || strings.Contains(mc.Data["config"], "kernelArguments") {
			t.Errorf("MachineConfig:\n%s", mc.Data["config"])
		}
		if !strings.Contains(tuned.Data["tuned"], "isolated_cores=1\n") || !strings.Contains(tuned.Data["tuned"], "cmdline_cpu_part_nohzfull=+nohz_full=${isolated_cores}\n") {
			t.Errorf("Tuned:\n%s", tuned.Data["tuned"])
		}
		st, status := e.status(t, "flow-status")
		if len(st.OwnerReferences) != 1 || st.OwnerReferences[0].UID != source.UID {
			t.Errorf("status ConfigMap owner references %+v", st.OwnerReferences)
		}
		if st.Labels[nodetuning.LabelStatus] != "true" || st.Labels[nodetuning.LabelNodePool] != "nodepool1" {
			t.Errorf("status ConfigMap labels %v", st.Labels)
		}
		if got := conditionStatus(status); !sameMap(got, available) {
			t.Errorf("conditions %v, want %v", got, available)
		}
		if status.RuntimeClass != "performance-flow" || status.Tuned != "openshift-cluster-node-tuning-operator/openshift-node-performance-flow" {
			t.Errorf("status %+v", status)
		}
		rc, err := e.kube.NodeV1().RuntimeClasses().Get(t.Context(), "performance-flow", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rc.Handler != "high-performance" || rc.Scheduling == nil || rc.Scheduling.NodeSelector["node-role.kubernetes.io/worker-cnf"] != "" {
			t.Errorf("RuntimeClass %+v", rc)
		}
		if got := e.configMap(t, "pp-config").Finalizers; !slices.Contains(got, nodetuning.Finalizer) {
			t.Errorf("source finalizers %v, want %s", got, nodetuning.Finalizer)
		}
	})

	_, before := e.status(t, "flow-status")
	versions := func() map[string]string {
		out := map[string]string{}
		for _, n := range []string{"tuned-flow", "mc-flow", "kc-flow", "flow-status", "pp-config"} {
			out[n] = e.configMap(t, n).ResourceVersion
		}
		return out
	}
	v := versions()

	t.Run("unchanged re-run writes nothing", func(t *testing.T) {
		if writes := e.run(t, step1); len(writes) != 0 {
			t.Errorf("writes: %v", writes)
		}
		if got := versions(); !sameMap(got, v) {
			t.Errorf("resource versions moved: %v -> %v", v, got)
		}
	})

	v2 := sourceYAML(e.ns, "pp-config", "flow", "1,4")
	t.Run("a stale plan does not write", func(t *testing.T) {
		e.applySource(t, v2)
		v["pp-config"] = e.configMap(t, "pp-config").ResourceVersion
		e.rec.take()
		err := step1.Run(t.Context(), e.cluster)
		if err == nil || !strings.Contains(err.Error(), "differs from the planned profile") {
			t.Errorf("err = %v, want the stale plan refused", err)
		}
		if writes := e.rec.take(); len(writes) != 0 {
			t.Errorf("writes: %v", writes)
		}
	})

	step2 := plan(t, "seed", v2)
	t.Run("changed profile updates what changed", func(t *testing.T) {
		writes := e.run(t, step2)
		// The isolated CPUs are the Tuned's alone (kernel arguments
		// included): nothing else changes.
		want := []string{"PUT /api/v1/namespaces/" + e.ns + "/configmaps/tuned-flow"}
		if !slices.Equal(writes, want) {
			t.Errorf("writes %v, want %v (the MachineConfig, KubeletConfig, RuntimeClass and status did not change)", writes, want)
		}
		if tuned := e.configMap(t, "tuned-flow").Data["tuned"]; !strings.Contains(tuned, "isolated_cores=1,4\n") {
			t.Errorf("Tuned not updated:\n%s", tuned)
		}
		got := versions()
		for _, n := range []string{"mc-flow", "kc-flow", "flow-status"} {
			if got[n] != v[n] {
				t.Errorf("%s was written", n)
			}
		}
		_, after := e.status(t, "flow-status")
		for i := range before.Conditions {
			if !before.Conditions[i].LastTransitionTime.Equal(after.Conditions[i].LastTransitionTime) {
				t.Errorf("condition %s moved from %v to %v", after.Conditions[i].Type, before.Conditions[i].LastTransitionTime, after.Conditions[i].LastTransitionTime)
			}
		}
		if writes := e.run(t, step2); len(writes) != 0 {
			t.Errorf("second run writes: %v", writes)
		}
	})

	t.Run("deleting the source removes the RuntimeClass, then the finalizer", func(t *testing.T) {
		if err := e.kube.CoreV1().ConfigMaps(e.ns).Delete(t.Context(), "pp-config", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		terminating := e.configMap(t, "pp-config")
		if terminating.DeletionTimestamp == nil {
			t.Fatal("the source ConfigMap is gone at once: the finalizer was not there")
		}
		writes := e.run(t, step2)
		want := []string{
			"DELETE /apis/node.k8s.io/v1/runtimeclasses/performance-flow",
			"PUT /api/v1/namespaces/" + e.ns + "/configmaps/pp-config",
		}
		if !slices.Equal(writes, want) {
			t.Errorf("writes %v, want %v", writes, want)
		}
		if _, err := e.kube.NodeV1().RuntimeClasses().Get(t.Context(), "performance-flow", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("RuntimeClass: %v, want not found", err)
		}
		gone := func(name string) func(context.Context) (bool, error) {
			return func(ctx context.Context) (bool, error) {
				_, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return true, nil
				}
				return false, err
			}
		}
		if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, gone("pp-config")); err != nil {
			t.Errorf("source ConfigMap: %v", err)
		}
		// The garbage collector follows the owner references.
		for _, n := range []string{"tuned-flow", "mc-flow", "kc-flow", "flow-status"} {
			if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true, gone(n)); err != nil {
				t.Errorf("ConfigMap %s not collected: %v", n, err)
			}
		}
	})
}

// TestUpstreamNamingE2E writes NTO's shipped names and keys.
func TestUpstreamNamingE2E(t *testing.T) {
	e := newEnv(t, "hcp-upstream")
	src := sourceYAML(e.ns, "pp-config", "upstream", "1")
	source := e.applySource(t, src)
	e.run(t, plan(t, "upstream", src))
	e.checkOutput(t, source, "tuned-pp-config", "tuning", "Tuned", map[string]string{nodetuning.LabelTunedConfig: "true"})
	e.checkOutput(t, source, "machineconfig-pp-config", "config", "MachineConfig", map[string]string{nodetuning.LabelMachineConfig: "true"})
	e.checkOutput(t, source, "kubeletconfig-pp-config", "config", "KubeletConfig",
		map[string]string{nodetuning.LabelMachineConfig: "true", nodetuning.LabelKubeletConfigUpstream: "true"})
	if _, st := e.status(t, "status-pp-config"); !sameMap(conditionStatus(st), available) {
		t.Errorf("conditions %v", conditionStatus(st))
	}
}

// TestDegradedE2E: an output that cannot be written is reported in the
// status, and the step fails.
func TestDegradedE2E(t *testing.T) {
	e := newEnv(t, "hcp-degraded")
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "performance-degraded"}, Handler: "runc"}
	if _, err := e.kube.NodeV1().RuntimeClasses().Create(t.Context(), rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	src := sourceYAML(e.ns, "pp-config", "degraded", "1")
	e.applySource(t, src)
	err := plan(t, "seed", src).Run(t.Context(), e.cluster)
	if want := `RuntimeClass/performance-degraded: has handler "runc", want "high-performance"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	_, st := e.status(t, "degraded-status")
	want := map[string]string{"Available": "False", "Upgradeable": "False", "Progressing": "False", "Degraded": "True"}
	if got := conditionStatus(st); !sameMap(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	if c := st.Conditions[3]; c.Reason != nodetuning.ReasonComponentCreationFailed || !strings.Contains(c.Message, "has handler") {
		t.Errorf("Degraded %+v", c)
	}
	// The other outputs were still written.
	e.configMap(t, "mc-degraded")

	// Deleting the source leaves the RuntimeClass the step did not write.
	if err := e.kube.CoreV1().ConfigMaps(e.ns).Delete(t.Context(), "pp-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := plan(t, "seed", src).Run(t.Context(), e.cluster); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.NodeV1().RuntimeClasses().Get(t.Context(), "performance-degraded", metav1.GetOptions{}); err != nil {
		t.Errorf("the foreign RuntimeClass: %v", err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), "pp-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("source ConfigMap: %v, want it gone with the finalizer removed", err)
	}
}

// TestDryRunE2E: with Cluster.DryRun every write is a dry run and nothing
// changes; a source that does not exist yet is not an error.
func TestDryRunE2E(t *testing.T) {
	e := newEnv(t, "hcp-dry-run")
	e.cluster.DryRun = true
	src := sourceYAML(e.ns, "pp-config", "dry-run", "1")
	step := plan(t, "seed", src)
	if writes := e.run(t, step); len(writes) != 0 {
		t.Errorf("writes without a source: %v", writes)
	}
	e.applySource(t, src)
	writes := e.run(t, step)
	if len(writes) == 0 {
		t.Error("no dry-run writes")
	}
	for _, w := range writes {
		if !strings.HasSuffix(w, "(dry run)") {
			t.Errorf("not a dry run: %s", w)
		}
	}
	if got := e.configMap(t, "pp-config").Finalizers; len(got) != 0 {
		t.Errorf("source finalizers %v", got)
	}
	list, err := e.kube.CoreV1().ConfigMaps(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: nodetuning.LabelPerformanceProfileName})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("outputs written by a dry run: %v %v", list, err)
	}
	if _, err := e.kube.NodeV1().RuntimeClasses().Get(t.Context(), "performance-dry-run", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("RuntimeClass: %v, want not found", err)
	}
}
