package component

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Step is a component's apply-time work: what cannot be rendered ahead
// because it needs the cluster (real UIDs for owner references, the status
// subresource, finalizers, conditions derived from other objects). A Step
// runs as a node of the task graph after the objects it names in After are
// applied.
type Step interface {
	// Name identifies the step in progress and errors, e.g. "ingress/default-placement".
	Name() string
	// Run does the work. It must be idempotent: a re-run after an
	// interruption converges, and a run with nothing to change writes nothing.
	Run(ctx context.Context, c *Cluster) error
}

// Cluster is what a Step may use. The apply engine builds it.
type Cluster struct {
	// Dynamic is a client for any resource.
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources; reset it after creating CRDs.
	Mapper meta.ResettableRESTMapper
	// FieldManager is the server-side apply field manager to use.
	FieldManager string
	// DryRun is true for `apply --dry-run=server`: steps must not persist
	// changes (send dry-run requests, or skip writes and report them).
	DryRun bool
}

// Resource returns the dynamic client for obj's kind (namespaced when obj has
// a namespace), through Mapper.
func (c *Cluster) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), nil
	}
	return c.Dynamic.Resource(mapping.Resource), nil
}

// StepSpec places a Step in the plan: it runs after every object in After
// has been applied (and is ready, when the apply waits), at the run level
// and component its File names (like a generated object's File, e.g.
// "generated/0000_50_cluster-ingress-operator_99_default-placement.step").
type StepSpec struct {
	Step  Step
	File  string
	After []manifest.ID
	// Preview are the objects the step writes, as render shows them (for
	// example without the UIDs that only the cluster knows). Their File
	// places them in render's output; the apply engine never applies them:
	// the step does. Nil: the step shows nothing.
	Preview []*manifest.Manifest
}

// Repeating is implemented by a Step whose work is never done after one
// run: it writes the status of objects that nothing else writes, derived
// from objects that other controllers change later (the platform
// operators' aggregate ClusterOperator, from BundleDeployment conditions).
// While `apply --wait` waits, the apply engine runs such a step again
// before every poll, so that the status it owns can become ready. Steps
// that are done once they ran (a status written from the plan) do not
// implement it.
type Repeating interface {
	Step
	// Owns returns the objects whose status the step writes. A
	// ClusterOperator among them reports the release version where its
	// manifest lists VersionPlaceholder, and apply waits for that.
	Owns() []manifest.ID
}

// VersionPlaceholder is the version operator manifests list until a
// release build replaces it with the release version.
const VersionPlaceholder = "0.0.1-snapshot"
