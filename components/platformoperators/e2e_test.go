//go:build e2e

package platformoperators_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/payload-apply/payload-apply/components/platformoperators"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

func TestPlatformOperatorsE2E(t *testing.T) {
	e, step, p := setup(t)
	ctx := t.Context()

	// The admin's PlatformOperators, applied as the apply engine would,
	// oldest first.
	var pos []*manifest.Manifest
	for _, m := range p.Objects {
		if m.GVK.Kind == platformoperators.Kind {
			pos = append(pos, m)
		}
	}
	if len(pos) != 2 {
		t.Fatalf("%d PlatformOperators in the plan, want 2", len(pos))
	}
	var first *unstructured.Unstructured
	for _, m := range pos {
		u := e.apply(m)
		if first == nil {
			first = u
		}
	}

	t.Run("no PlatformOperator reconciled yet: nothing installed", func(t *testing.T) {
		e := e.with(t)
		if got := e.coConditions(platformoperators.AggregateClusterOperator); len(got) != 0 {
			t.Errorf("aggregate ClusterOperator conditions before the step: %v", got)
		}
	})

	// A third PlatformOperator names cert-manager's package again. It sorts
	// first by name but is created a second later: the older one wins.
	created := first.GetCreationTimestamp()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(created.Time), nil
	}); err != nil {
		t.Fatal(err)
	}
	dup := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "platform.openshift.io/v1alpha1",
		"kind":       "PlatformOperator",
		"metadata":   map[string]any{"name": "a-second-cert-manager"},
		"spec":       map[string]any{"package": map[string]any{"name": "openshift-cert-manager-operator"}},
	}}
	if _, err := e.client(platformoperators.GroupVersionKind, "").Create(ctx, dup, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("BundleDeployments created with controller owner references", func(t *testing.T) {
		e := e.with(t)
		res := e.reconcile(step)
		if diff := cmp.Diff([]string{"cert-manager", "local-storage"}, res.Created); diff != "" {
			t.Errorf("created (-want +got):\n%s", diff)
		}
		for _, name := range []string{"cert-manager", "local-storage"} {
			po := e.platformOperator(name)
			bd := e.get(bdGVK, "", name)
			ref := metav1.GetControllerOf(bd)
			if ref == nil || ref.UID != po.UID || ref.Kind != "PlatformOperator" || ref.Name != name || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
				t.Errorf("BundleDeployment %s: controller %+v, want PlatformOperator %s uid %s", name, ref, name, po.UID)
			}
			if got, _, _ := unstructured.NestedString(bd.Object, "spec", "provisionerClassName"); got != platformoperators.RegistryProvisioner {
				t.Errorf("BundleDeployment %s: provisionerClassName %q", name, got)
			}
		}
		image, _, _ := unstructured.NestedString(e.get(bdGVK, "", "cert-manager").Object, "spec", "source", "image", "ref")
		if image != "registry.example.com/cert-manager/cert-manager-operator-bundle:v1.7.1" {
			t.Errorf("cert-manager bundle image %s", image)
		}
		if _, err := e.client(bdGVK, "").Get(ctx, "a-second-cert-manager", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("BundleDeployment for the duplicate package: %v", err)
		}
		got := map[string]string{}
		for _, n := range []string{"cert-manager", "local-storage", "a-second-cert-manager"} {
			got[n] = e.installed(n)
		}
		want := map[string]string{
			"cert-manager":          "False UnpackPending",
			"local-storage":         "False UnpackPending",
			"a-second-cert-manager": "False InstallFailed",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Installed (-want +got):\n%s", diff)
		}
		c := meta.FindStatusCondition(e.platformOperator("a-second-cert-manager").Status.Conditions, platformoperators.ConditionInstalled)
		if !strings.Contains(c.Message, "already installed through PlatformOperator cert-manager, which was created first") {
			t.Errorf("duplicate's message: %s", c.Message)
		}
		if diff := cmp.Diff([]string{"Available=False PlatformOperatorError", "Degraded=False AsExpected", "Progressing=True Installing"},
			e.coConditions(platformoperators.AggregateClusterOperator)); diff != "" {
			t.Errorf("aggregate ClusterOperator (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"Available=False ManagerUnavailable", "Degraded=False AsExpected", "Progressing=True Deploying"},
			e.coConditions(platformoperators.CoreClusterOperator)); diff != "" {
			t.Errorf("core ClusterOperator (-want +got):\n%s", diff)
		}
	})

	t.Run("a second run with nothing new writes nothing", func(t *testing.T) {
		e := e.with(t)
		before := map[string]string{}
		for _, n := range []string{"cert-manager", "local-storage", "a-second-cert-manager"} {
			before["po/"+n] = e.get(platformoperators.GroupVersionKind, "", n).GetResourceVersion()
		}
		for _, n := range []string{platformoperators.AggregateClusterOperator, platformoperators.CoreClusterOperator} {
			before["co/"+n] = e.get(coGVK, "", n).GetResourceVersion()
		}
		res := e.reconcile(step)
		if len(res.Created)+len(res.Updated) > 0 {
			t.Errorf("created %v, updated %v", res.Created, res.Updated)
		}
		for k, rv := range before {
			kind, name, _ := strings.Cut(k, "/")
			gvk := coGVK
			if kind == "po" {
				gvk = platformoperators.GroupVersionKind
			}
			if got := e.get(gvk, "", name).GetResourceVersion(); got != rv {
				t.Errorf("%s: resourceVersion %s -> %s", k, rv, got)
			}
		}
	})

	t.Run("conditions follow the BundleDeployments", func(t *testing.T) {
		e := e.with(t)
		e.setBundleDeploymentConditions("cert-manager", platformoperators.ShapeV1Alpha2,
			cond("HasValidBundle", "True", "UnpackSuccessful"), cond("Installed", "True", "InstallationSucceeded"))
		e.setBundleDeploymentConditions("local-storage", platformoperators.ShapeV1Alpha2,
			cond("HasValidBundle", "True", "UnpackSuccessful"), cond("Installed", "False", "InstallFailed"))
		e.reconcile(step)
		if diff := cmp.Diff(map[string]string{"cert-manager": "True InstallSuccessful active=cert-manager", "local-storage": "False InstallFailed"},
			map[string]string{"cert-manager": e.installed("cert-manager"), "local-storage": e.installed("local-storage")}); diff != "" {
			t.Errorf("Installed (-want +got):\n%s", diff)
		}
		co := e.clusterOperator(platformoperators.AggregateClusterOperator)
		if diff := cmp.Diff([]string{"Available=False PlatformOperatorError", "Degraded=False AsExpected", "Progressing=False PlatformOperatorError"},
			e.coConditions(platformoperators.AggregateClusterOperator)); diff != "" {
			t.Errorf("aggregate ClusterOperator (-want +got):\n%s", diff)
		}
		for _, c := range co.Status.Conditions {
			if c.Type == configv1.OperatorAvailable && (!strings.Contains(c.Message, "PlatformOperator local-storage: InstallFailed") ||
				!strings.Contains(c.Message, "PlatformOperator a-second-cert-manager: InstallFailed") || strings.Contains(c.Message, "PlatformOperator cert-manager:")) {
				t.Errorf("Available message does not name exactly the failing ones: %s", c.Message)
			}
		}
	})

	t.Run("all installed: the aggregate ClusterOperator is Available", func(t *testing.T) {
		e := e.with(t)
		if err := e.client(platformoperators.GroupVersionKind, "").Delete(ctx, "a-second-cert-manager", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.setBundleDeploymentConditions("local-storage", platformoperators.ShapeV1Alpha2,
			cond("HasValidBundle", "True", "UnpackSuccessful"), cond("Installed", "True", "InstallationSucceeded"))
		e.reconcile(step)
		if diff := cmp.Diff([]string{"Available=True AsExpected", "Degraded=False AsExpected", "Progressing=False AsExpected"},
			e.coConditions(platformoperators.AggregateClusterOperator)); diff != "" {
			t.Errorf("aggregate ClusterOperator (-want +got):\n%s", diff)
		}
		co := e.clusterOperator(platformoperators.AggregateClusterOperator)
		if diff := cmp.Diff([]configv1.OperandVersion{{Name: "operator", Version: "4.22.0"}}, co.Status.Versions); diff != "" {
			t.Errorf("versions (-want +got):\n%s", diff)
		}
		wantRelated := []configv1.ObjectReference{
			{Resource: "namespaces", Name: "openshift-platform-operators"},
			{Group: "platform.openshift.io", Resource: "platformoperators"},
			{Group: "core.rukpak.io", Resource: "bundledeployments"},
		}
		if diff := cmp.Diff(wantRelated, co.Status.RelatedObjects); diff != "" {
			t.Errorf("relatedObjects (-want +got):\n%s", diff)
		}
	})

	t.Run("the core ClusterOperator follows the manager's Deployment", func(t *testing.T) {
		e := e.with(t)
		d := e.get(depGVK, platformoperators.Namespace, platformoperators.ManagerDeployment)
		status := map[string]any{
			"observedGeneration": d.GetGeneration(), "replicas": int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1),
			"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "ok",
				"lastUpdateTime": metav1.Now().UTC().Format(time.RFC3339), "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}},
		}
		d.Object["status"] = status
		if _, err := e.client(depGVK, platformoperators.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.reconcile(step)
		if diff := cmp.Diff([]string{"Available=True AsExpected", "Degraded=False AsExpected", "Progressing=False AsExpected"},
			e.coConditions(platformoperators.CoreClusterOperator)); diff != "" {
			t.Errorf("core ClusterOperator (-want +got):\n%s", diff)
		}
	})

	t.Run("deleting a PlatformOperator removes its BundleDeployment", func(t *testing.T) {
		e := e.with(t)
		if err := e.client(platformoperators.GroupVersionKind, "").Delete(ctx, "local-storage", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := e.client(bdGVK, "").Get(ctx, "local-storage", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("BundleDeployment local-storage still there after %s: %v", time.Since(start), err)
		}
		t.Logf("garbage collected in %s", time.Since(start).Round(10*time.Millisecond))
		e.get(bdGVK, "", "cert-manager") // the other one stays
		e.reconcile(step)
		co := e.clusterOperator(platformoperators.AggregateClusterOperator)
		for _, c := range co.Status.Conditions {
			if c.Type == configv1.OperatorAvailable && (c.Status != configv1.ConditionTrue || c.Message != "all 1 platform operators are installed: cert-manager") {
				t.Errorf("Available: %s %s", c.Status, c.Message)
			}
		}
	})

	t.Run("dry run creates and writes nothing", func(t *testing.T) {
		e := e.with(t)
		po := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "platform.openshift.io/v1alpha1",
			"kind":       "PlatformOperator",
			"metadata":   map[string]any{"name": "dry"},
			"spec":       map[string]any{"package": map[string]any{"name": "local-storage-operator"}},
		}}
		if _, err := e.client(platformoperators.GroupVersionKind, "").Create(ctx, po, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = e.client(platformoperators.GroupVersionKind, "").Delete(context.Background(), "dry", metav1.DeleteOptions{})
		})
		coRV := e.get(coGVK, "", platformoperators.AggregateClusterOperator).GetResourceVersion()
		dry := *e.cluster
		dry.DryRun = true
		res, err := step.Reconcile(ctx, &dry)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"dry"}, res.Created); diff != "" {
			t.Errorf("dry-run created (-want +got):\n%s", diff)
		}
		if _, err := e.client(bdGVK, "").Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("BundleDeployment dry after a dry run: %v", err)
		}
		if got := e.installed("dry"); got != "none" {
			t.Errorf("PlatformOperator dry after a dry run: Installed %s", got)
		}
		if got := e.get(coGVK, "", platformoperators.AggregateClusterOperator).GetResourceVersion(); got != coRV {
			t.Errorf("aggregate ClusterOperator written in a dry run: %s -> %s", coRV, got)
		}
	})
}
