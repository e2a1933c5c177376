package component

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Step is a component's apply-time work: what cannot be rendered ahead
// because it needs the cluster (real UIDs for owner references, the status
// subresource, finalizers, conditions derived from other objects). A Step
// runs as a node of the task graph after the objects it names in After are
// applied.
//
// A Step reaches the cluster only through the Cluster it is given, whose
// Client the apply engine implements (lib/resourceapply): components
// never import client-go, so planning links no cluster I/O.
type Step interface {
	// Name identifies the step in progress and errors, e.g. "ingress/default-placement".
	Name() string
	// Run does the work. It must be idempotent: a re-run after an
	// interruption converges, and a run with nothing to change writes nothing.
	Run(ctx context.Context, c *Cluster) error
}

// RuleStep is a Step that names the API permissions its Run needs, so
// that `payload-apply rbac` can derive a role that lets apply run it (the
// objects' own rules come from their kinds).
type RuleStep interface {
	Step
	// Rules are the permissions Run needs: resources (with subresources
	// such as "ingresses/status") and verbs, cluster-wide.
	Rules() []rbacv1.PolicyRule
}

// Cluster is what a Step may use. The apply engine builds it.
type Cluster struct {
	// Client reaches the API server's resources.
	Client Client
	// FieldManager is the field manager of the step's writes.
	FieldManager string
	// DryRun is true for `apply --dry-run=server`: steps must not persist
	// changes (send dry-run requests, or skip writes and report them).
	DryRun bool
}

// Client gives a Step the resources of the API server, one kind at a time.
type Client interface {
	// Resource returns the client of objects of kind gvk in namespace:
	// "" for a cluster-scoped kind, or for every namespace of a namespaced
	// one. When the server does not serve the kind (yet: a CRD just
	// created), the error satisfies meta.IsNoMatchError.
	Resource(gvk schema.GroupVersionKind, namespace string) (ResourceClient, error)
}

// ResourceClient reads and writes the objects of one kind. Its methods
// mean what client-go's dynamic.ResourceInterface methods of the same
// names mean (which implements it); subresources name e.g. "status".
type ResourceClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error)
	UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
	Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error
}

// Resource returns the client of gvk in namespace (see Client.Resource).
func (c *Cluster) Resource(gvk schema.GroupVersionKind, namespace string) (ResourceClient, error) {
	return c.Client.Resource(gvk, namespace)
}

// ResourceFor returns the client of obj's kind, in obj's namespace.
func (c *Cluster) ResourceFor(obj *unstructured.Unstructured) (ResourceClient, error) {
	return c.Client.Resource(obj.GroupVersionKind(), obj.GetNamespace())
}

// DryRunOption returns what the DryRun field of a write's options must
// hold: [metav1.DryRunAll] in a dry run, else nil.
func (c *Cluster) DryRunOption() []string {
	if c.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
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
