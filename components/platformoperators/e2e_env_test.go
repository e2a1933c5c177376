//go:build e2e

package platformoperators_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/payload-apply/payload-apply/components/platformoperators"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func TestMain(m *testing.M) {
	os.Exit(apiserver.Run(m, apiserver.Options{Controllers: []string{"garbage-collector"}}))
}

const fieldManager = "payload-apply-e2e"

// env is the test's view of the cluster.
type env struct {
	t       *testing.T
	cluster *component.Cluster
	mapper  meta.ResettableRESTMapper
}

func newEnv(t *testing.T) *env {
	s := apiserver.Shared(t)
	cfg := s.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &env{t: t, mapper: mapper, cluster: &component.Cluster{Client: resourceapply.DynamicClient(dyn, mapper), FieldManager: fieldManager}}
}

// with returns the env for a subtest, so that its failures stop the subtest.
func (e *env) with(t *testing.T) *env { return &env{t: t, cluster: e.cluster, mapper: e.mapper} }

func (e *env) client(gvk schema.GroupVersionKind, namespace string) component.ResourceClient {
	e.t.Helper()
	c, err := e.cluster.Resource(gvk, namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// apply server-side applies a manifest, as the apply engine would.
func (e *env) apply(m *manifest.Manifest) *unstructured.Unstructured {
	e.t.Helper()
	return e.applyObject(m.GVK, m.Obj)
}

// applyObject server-side applies an object of kind gvk.
func (e *env) applyObject(gvk schema.GroupVersionKind, u *unstructured.Unstructured) *unstructured.Unstructured {
	e.t.Helper()
	data, err := json.Marshal(u.Object)
	if err != nil {
		e.t.Fatal(err)
	}
	force := true
	got, err := e.client(gvk, u.GetNamespace()).Patch(e.t.Context(), u.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
	if err != nil {
		e.t.Fatalf("%s %s: apply: %v", gvk.Kind, u.GetName(), err)
	}
	return got
}

// waitEstablished waits for a CRD to serve its kinds.
func (e *env) waitEstablished(name string) {
	e.t.Helper()
	crds := e.client(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "")
	err := wait.PollUntilContextTimeout(e.t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		u, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("CRD %s not established: %v", name, err)
	}
	e.mapper.Reset()
}

func (e *env) get(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	e.t.Helper()
	u, err := e.client(gvk, namespace).Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("%s %s: %v", gvk.Kind, name, err)
	}
	return u
}

func (e *env) platformOperator(name string) *platformoperators.PlatformOperator {
	e.t.Helper()
	po := &platformoperators.PlatformOperator{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.get(platformoperators.GroupVersionKind, "", name).Object, po); err != nil {
		e.t.Fatal(err)
	}
	return po
}

func (e *env) clusterOperator(name string) *configv1.ClusterOperator {
	e.t.Helper()
	co := &configv1.ClusterOperator{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.get(coGVK, "", name).Object, co); err != nil {
		e.t.Fatal(err)
	}
	return co
}

// installed returns "Status Reason" of a PlatformOperator's Installed
// condition and its active BundleDeployment.
func (e *env) installed(name string) string {
	e.t.Helper()
	po := e.platformOperator(name)
	c := meta.FindStatusCondition(po.Status.Conditions, platformoperators.ConditionInstalled)
	if c == nil {
		return "none"
	}
	s := string(c.Status) + " " + c.Reason
	if po.Status.ActiveBundleDeployment != nil {
		s += " active=" + po.Status.ActiveBundleDeployment.Name
	}
	return s
}

// coConditions prints a ClusterOperator's Available, Progressing and
// Degraded conditions as "Type=Status Reason".
func (e *env) coConditions(name string) []string {
	e.t.Helper()
	var out []string
	for _, c := range e.clusterOperator(name).Status.Conditions {
		out = append(out, string(c.Type)+"="+string(c.Status)+" "+c.Reason)
	}
	slices.Sort(out)
	return out
}

// setBundleDeploymentConditions writes a BundleDeployment's status
// conditions, as rukpak would.
func (e *env) setBundleDeploymentConditions(name string, shape platformoperators.Shape, conds ...metav1.Condition) {
	e.t.Helper()
	client := e.client(shape.GroupVersionKind(), "")
	u, err := client.Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var list []any
	for _, c := range conds {
		c.LastTransitionTime = metav1.Now()
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		if err != nil {
			e.t.Fatal(err)
		}
		list = append(list, m)
	}
	if err := unstructured.SetNestedSlice(u.Object, list, "status", "conditions"); err != nil {
		e.t.Fatal(err)
	}
	if _, err := client.UpdateStatus(e.t.Context(), u, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("BundleDeployment %s: update status: %v", name, err)
	}
}

func (e *env) reconcile(step *platformoperators.Step) *platformoperators.Result {
	e.t.Helper()
	res, err := step.Reconcile(e.t.Context(), e.cluster)
	if err != nil {
		e.t.Fatalf("reconcile: %v", err)
	}
	return res
}

var (
	coGVK  = configv1.GroupVersion.WithKind("ClusterOperator")
	depGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	bdGVK  = platformoperators.ShapeV1Alpha2.GroupVersionKind()
)

func cond(t string, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: t + " is " + string(s)}
}

// crdGVK is CustomResourceDefinition's.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// servedVersionNames returns the names of a CRD object's versions.
func servedVersionNames(u *unstructured.Unstructured) []string {
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	var out []string
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["name"]))
		}
	}
	slices.Sort(out)
	return out
}

// installCRD makes crd the server's CRD of its name, and waits until it is
// established. A CRD of other versions is deleted first (with its objects),
// as a cluster moving from one rukpak to another would: the server refuses
// to drop a stored version in place.
func (e *env) installCRD(crd *unstructured.Unstructured) {
	e.t.Helper()
	client := e.client(crdGVK, "")
	live, err := client.Get(e.t.Context(), crd.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		e.t.Fatal(err)
	case !slices.Equal(servedVersionNames(live), servedVersionNames(crd)):
		e.deleteCRD(crd.GetName())
	}
	e.applyObject(crdGVK, crd)
	e.waitEstablished(crd.GetName())
}

// deleteCRD deletes a CRD and waits until it is gone.
func (e *env) deleteCRD(name string) {
	e.t.Helper()
	client := e.client(crdGVK, "")
	if err := client.Delete(e.t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(e.t.Context(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		e.t.Fatalf("CRD %s not deleted: %v", name, err)
	}
	e.mapper.Reset()
}

// readCRD reads a CRD fixture file.
func (e *env) readCRD(file string) *unstructured.Unstructured {
	e.t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		e.t.Fatal(err)
	}
	ms, err := manifest.Parse(file, data, manifest.ParseOptions{})
	if err != nil || len(ms) != 1 {
		e.t.Fatalf("%s: %d objects, %v", file, len(ms), err)
	}
	return ms[0].Obj
}

// createPlatformOperator creates a PlatformOperator and returns the API
// server's answer.
func (e *env) createPlatformOperator(name, pkg string) error {
	po := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "platform.openshift.io/v1alpha1",
		"kind":       "PlatformOperator",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"package": map[string]any{"name": pkg}},
	}}
	_, err := e.client(platformoperators.GroupVersionKind, "").Create(e.t.Context(), po, metav1.CreateOptions{})
	return err
}

// setup readies the shared server for a test and returns the env, the
// step of the plan `render --feature-set TechPreviewNoUpgrade
// --extra-manifests testdata/extra --catalog testdata/catalog` makes, and
// the plan: no PlatformOperators, the plan's CRDs (the ClusterOperator
// CRD, the PlatformOperator CRD and rukpak's v1alpha2 BundleDeployment CRD,
// as real clusters have them), the manager's namespace and Deployment, and
// both ClusterOperators without status.
func setup(t *testing.T) (*env, *platformoperators.Step, *plan.Plan) {
	t.Helper()
	e := newEnv(t)
	p, err := plan.Build(context.Background(), plan.Options{
		FeatureSet:     "TechPreviewNoUpgrade",
		ExtraManifests: os.DirFS("testdata/extra"),
		Components:     plan.Components{Catalog: os.DirFS("testdata/catalog")},
	})
	if err != nil {
		t.Fatal(err)
	}
	steps := pomSteps(p)
	if len(steps) != 1 {
		t.Fatalf("%d steps, want 1", len(steps))
	}
	step, ok := steps[0].Step.(*platformoperators.Step)
	if !ok {
		t.Fatalf("step is %T", steps[0].Step)
	}
	var rest []*manifest.Manifest
	for _, m := range p.Objects {
		id := m.ID()
		switch {
		case id.Kind == "CustomResourceDefinition" && slices.Contains([]string{"clusteroperators.config.openshift.io", platformoperators.PlatformOperatorCRD, platformoperators.BundleDeploymentCRD}, id.Name):
			e.installCRD(m.Obj)
		case id.Kind == "Namespace" && id.Name == platformoperators.Namespace,
			id.Kind == "Deployment" && id.Name == platformoperators.ManagerDeployment,
			id.Kind == "ClusterOperator" && strings.HasPrefix(id.Name, "platform-operators-"):
			rest = append(rest, m)
		}
	}
	pos := e.client(platformoperators.GroupVersionKind, "")
	list, err := pos.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, po := range list.Items {
		if err := pos.Delete(t.Context(), po.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, m := range rest {
		if m.GVK.Kind == "ClusterOperator" {
			if err := e.client(coGVK, "").Delete(t.Context(), m.Obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
		e.apply(m)
	}
	return e, step, p
}
