package platformoperators

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// managerID is the platform operators manager's Deployment.
var managerID = manifest.ID{Group: "apps", Kind: "Deployment", Namespace: Namespace, Name: ManagerDeployment}

// clusterOperatorRef prints ClusterOperator/name.
func clusterOperatorRef(name string) string {
	return manifest.ID{Group: configv1.GroupName, Kind: "ClusterOperator", Name: name}.Ref()
}

// The step's cluster I/O: reading BundleDeployments and the manager's
// Deployment, writing status, resolving kinds.

// NotServedError says the cluster does not serve the BundleDeployment
// version a shape writes: rukpak is not installed, or serves another one.
type NotServedError struct {
	// GroupVersion is the version asked for.
	GroupVersion schema.GroupVersion
}

// Error says what is missing and what to check.
func (e *NotServedError) Error() string {
	return fmt.Sprintf("the cluster does not serve %s %s: rukpak's CRD %s is missing or serves another version (see --bundle-deployment-shape)",
		BundleDeploymentKind, e.GroupVersion, BundleDeploymentCRD)
}

// listBundleDeployments returns the client of the shape's
// BundleDeployments and those in the cluster by name. When the cluster
// does not serve them (no such kind, or a 404 on the list: the CRD went
// away since discovery) the error is a *NotServedError.
func listBundleDeployments(ctx context.Context, c *component.Cluster, shape Shape) (component.ResourceClient, map[string]*unstructured.Unstructured, error) {
	gvk := shape.GroupVersionKind()
	notServed := &NotServedError{GroupVersion: gvk.GroupVersion()}
	client, err := resource(c, gvk, "")
	if meta.IsNoMatchError(err) {
		return nil, nil, notServed
	}
	if err != nil {
		return nil, nil, err
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, notServed
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list BundleDeployments: %w", err)
	}
	bds := make(map[string]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		bds[list.Items[i].GetName()] = &list.Items[i]
	}
	return client, bds, nil
}

// bundleDeploymentConditions returns status.conditions of a
// BundleDeployment; entries that do not decode are skipped.
func bundleDeploymentConditions(bd *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(bd.Object, "status", "conditions")
	out := make([]metav1.Condition, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// writePlatformOperatorStatus writes status.conditions and
// status.activeBundleDeployment of u (other status fields are kept),
// retrying on conflicts with a fresh copy.
func writePlatformOperatorStatus(ctx context.Context, c *component.Cluster, client component.ResourceClient, u *unstructured.Unstructured, st PlatformOperatorStatus) error {
	want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return err
	}
	obj := u.DeepCopy()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		status, _, _ := unstructured.NestedMap(obj.Object, "status")
		if status == nil {
			status = map[string]any{}
		}
		for _, k := range []string{"conditions", "activeBundleDeployment"} {
			if v, ok := want[k]; ok {
				status[k] = v
			} else {
				delete(status, k)
			}
		}
		obj.Object["status"] = status
		_, err := client.UpdateStatus(ctx, obj, updateOptions(c))
		if apierrors.IsConflict(err) {
			fresh, gerr := client.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			obj = fresh
		}
		return err
	})
}

// writeClusterOperator merges desired into the ClusterOperator's status and
// writes it when it differs. A missing ClusterOperator is noted in res.
func writeClusterOperator(ctx context.Context, c *component.Cluster, name string, desired configv1.ClusterOperatorStatus, now time.Time, res *Result) error {
	client, err := resource(c, clusterOperatorGVK, "")
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			res.Missing = append(res.Missing, name)
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: get: %w", clusterOperatorRef(name), err)
		}
		var existing configv1.ClusterOperatorStatus
		if raw, ok := u.Object["status"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &existing); err != nil {
				return fmt.Errorf("%s: decode status: %w", clusterOperatorRef(name), err)
			}
		}
		merged := MergeClusterOperatorStatus(existing, desired, now)
		if equality.Semantic.DeepEqual(existing, merged) {
			return nil
		}
		st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&merged)
		if err != nil {
			return fmt.Errorf("%s: encode status: %w", clusterOperatorRef(name), err)
		}
		u.Object["status"] = st
		if _, err := client.UpdateStatus(ctx, u, updateOptions(c)); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			return fmt.Errorf("%s: update status: %w", clusterOperatorRef(name), err)
		}
		res.Updated = append(res.Updated, "ClusterOperator/"+name)
		return nil
	})
}

// manager returns the manager's Deployment, or nil when it does not exist.
func manager(ctx context.Context, c *component.Cluster) (*appsv1.Deployment, error) {
	client, err := resource(c, deploymentGVK, Namespace)
	if err != nil {
		return nil, err
	}
	u, err := client.Get(ctx, ManagerDeployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: get: %w", managerID.Ref(), err)
	}
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", managerID.Ref(), err)
	}
	return d, nil
}

// resource returns the client for gvk in namespace, naming the kind in
// its error.
func resource(c *component.Cluster, gvk schema.GroupVersionKind, namespace string) (component.ResourceClient, error) {
	client, err := c.Resource(gvk, namespace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	return client, nil
}

func updateOptions(c *component.Cluster) metav1.UpdateOptions {
	return metav1.UpdateOptions{FieldManager: c.FieldManager, DryRun: c.DryRunOption()}
}

// groupOf returns the group of an apiVersion ("" for the core group).
func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}
