package platformoperators

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// StepName is the Step's name in progress and errors.
const StepName = "platformoperators/reconcile"

// Step is the manager's reconcile, run at apply time: for every
// PlatformOperator in the cluster, oldest first (creationTimestamp, then
// name), it
//
//   - checks the package name (ValidatePackageName: SourceFailed when the
//     API server let in a name that is not a DNS label);
//   - claims the package: a PlatformOperator naming a package an older one
//     already named reports Installed=False InstallFailed and gets nothing;
//   - creates its BundleDeployment when missing (the bundle Catalog.Select
//     picks; SourceFailed when none; InstallFailed when the cluster does not
//     serve the shape's BundleDeployment version, or the PlatformOperator's
//     name is too long for it, Shape.ValidateName) with a controller owner reference
//     carrying the PlatformOperator's UID, and never changes an existing
//     one: as in phase 0 there are no upgrades; deleting the
//     BundleDeployment makes the next run source the package again;
//   - derives the Installed condition (InstalledCondition) and sets
//     status.activeBundleDeployment.name while it is True;
//
// then writes the aggregate ClusterOperator (AggregateStatus) and the core
// one (CoreStatus, from the manager's Deployment). Every status goes through
// the status subresource and only when it differs; a ClusterOperator that
// does not exist yet is left alone (the next run writes it). Runs are
// idempotent: the apply engine may run the step again, and a run with
// nothing to change writes nothing. A Step is safe for concurrent use if
// Now is.
type Step struct {
	// Catalog is where bundles come from; nil: no catalog, so a
	// PlatformOperator without a BundleDeployment reports SourceFailed.
	Catalog *Catalog
	// ReleaseVersion is the cluster version: olm.maxOpenShiftVersion is
	// checked against it, and both ClusterOperators report it.
	ReleaseVersion string
	// Shape is the BundleDeployment version written and read ("": v1alpha2).
	Shape Shape
	// Now is the clock for condition transitions; nil: time.Now.
	Now func() time.Time
}

var _ component.Repeating = (*Step)(nil)

// Name returns StepName.
func (s *Step) Name() string { return StepName }

// Owns returns the two ClusterOperators the step writes: nothing else
// writes them, so `apply --wait` runs the step again while it waits for
// them (component.Repeating).
func (s *Step) Owns() []manifest.ID {
	return []manifest.ID{
		{Group: configv1.GroupName, Kind: "ClusterOperator", Name: AggregateClusterOperator},
		{Group: configv1.GroupName, Kind: "ClusterOperator", Name: CoreClusterOperator},
	}
}

// Rules returns what Run needs: PlatformOperators and BundleDeployments
// listed, BundleDeployments created, the status of PlatformOperators and
// of the two ClusterOperators written, the manager's Deployment read.
func (s *Step) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{Group}, Resources: []string{"platformoperators"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{Group}, Resources: []string{"platformoperators/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{RukpakGroup}, Resources: []string{"bundledeployments"}, Verbs: []string{"get", "list", "create"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators"}, Verbs: []string{"get"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}},
	}
}

// Run runs Reconcile and returns its error.
func (s *Step) Run(ctx context.Context, c *component.Cluster) error {
	_, err := s.Reconcile(ctx, c)
	return err
}

// Result says what a Reconcile did.
type Result struct {
	// PlatformOperators are the PlatformOperators with the Installed
	// condition Reconcile derived, oldest first.
	PlatformOperators []PlatformOperator
	// Created are the names of the BundleDeployments created.
	Created []string
	// Updated are the objects whose status was written, as Kind/name.
	Updated []string
	// Missing are the ClusterOperators that do not exist yet.
	Missing []string
}

var (
	clusterOperatorGVK = configv1.GroupVersion.WithKind("ClusterOperator")
	deploymentGVK      = appsv1.SchemeGroupVersion.WithKind("Deployment")
)

// Reconcile does the step's work once and says what it did. A
// PlatformOperator's own problems (sourcing, a conflicting package, a
// failing BundleDeployment) are reported in its condition, not as errors;
// the error joins the API errors met, each prefixed with the object.
func (s *Step) Reconcile(ctx context.Context, c *component.Cluster) (*Result, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	ts := now().UTC().Truncate(time.Second)
	shape, err := ParseShape(string(s.Shape))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", StepName, err)
	}

	poClient, err := resource(c, GroupVersionKind, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", StepName, err)
	}
	poList, err := poClient.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: list PlatformOperators: %w", StepName, err)
	}
	// Without the BundleDeployment API (rukpak not installed, or serving
	// another version than the shape) every PlatformOperator reports it,
	// and the aggregate ClusterOperator says so, before the step fails.
	var errs []error
	bdClient, bds, bdErr := listBundleDeployments(ctx, c, shape)
	if bdErr != nil {
		if _, ok := bdErr.(*NotServedError); !ok {
			return nil, fmt.Errorf("%s: %w", StepName, bdErr)
		}
		errs = append(errs, fmt.Errorf("%s: %w", StepName, bdErr))
	}

	type item struct {
		u  *unstructured.Unstructured
		po PlatformOperator
	}
	items := make([]item, 0, len(poList.Items))
	for i := range poList.Items {
		u := &poList.Items[i]
		var po PlatformOperator
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &po); err != nil {
			errs = append(errs, fmt.Errorf("%s: PlatformOperator/%s: decode: %w", StepName, u.GetName(), err))
			continue
		}
		items = append(items, item{u, po})
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i].po.CreationTimestamp, items[j].po.CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return items[i].po.Name < items[j].po.Name
	})

	res := &Result{}
	r := &reconciler{step: s, c: c, shape: shape, bdClient: bdClient, bdErr: bdErr, bds: bds,
		claimed: map[string]string{}, selections: map[string]selectResult{}, res: res}
	for _, it := range items {
		po := it.po
		cond, err := r.platformOperator(ctx, &po)
		if err != nil {
			errs = append(errs, err)
		}
		cond.ObservedGeneration = po.Generation
		desired := *po.Status.DeepCopy()
		setCondition(&desired.Conditions, cond, ts)
		desired.ActiveBundleDeployment = nil
		if cond.Status == metav1.ConditionTrue {
			desired.ActiveBundleDeployment = &ActiveBundleDeployment{Name: po.Name}
		}
		if !equality.Semantic.DeepEqual(po.Status, desired) {
			if err := writePlatformOperatorStatus(ctx, c, poClient, it.u, desired); err != nil {
				errs = append(errs, fmt.Errorf("%s: PlatformOperator/%s: update status: %w", StepName, po.Name, err))
			} else {
				res.Updated = append(res.Updated, Kind+"/"+po.Name)
			}
		}
		po.Status = desired
		res.PlatformOperators = append(res.PlatformOperators, po)
	}

	if err := writeClusterOperator(ctx, c, AggregateClusterOperator, AggregateStatus(res.PlatformOperators, s.ReleaseVersion, shape), ts, res); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", StepName, err))
	}
	dep, err := manager(ctx, c)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", StepName, err))
	} else if err := writeClusterOperator(ctx, c, CoreClusterOperator, CoreStatus(dep, s.ReleaseVersion), ts, res); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", StepName, err))
	}
	return res, errors.Join(errs...)
}

// selectResult caches Catalog.Select per package within one run.
type selectResult struct {
	sel *Selection
	err error
}

// reconciler holds one run's state.
type reconciler struct {
	step       *Step
	c          *component.Cluster
	shape      Shape
	bdClient   component.ResourceClient
	bdErr      error // the BundleDeployment API is not served
	bds        map[string]*unstructured.Unstructured
	claimed    map[string]string // package -> PlatformOperator
	selections map[string]selectResult
	res        *Result
}

// platformOperator ensures po's BundleDeployment and returns its Installed
// condition; the error is an API error (the condition says it too).
func (r *reconciler) platformOperator(ctx context.Context, po *PlatformOperator) (metav1.Condition, error) {
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: ConditionInstalled, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	pkg := po.Spec.Package.Name
	if err := ValidatePackageName(pkg); err != nil {
		return cond(metav1.ConditionFalse, ReasonSourceFailed, "%v", err), nil
	}
	if first, ok := r.claimed[pkg]; ok {
		return cond(metav1.ConditionFalse, ReasonInstallFailed,
			"package %q is already installed through PlatformOperator %s, which was created first", pkg, first), nil
	}
	r.claimed[pkg] = po.Name
	if r.bdErr != nil {
		return cond(metav1.ConditionFalse, ReasonInstallFailed, "%v", r.bdErr), nil
	}

	if bd, ok := r.bds[po.Name]; ok {
		ref := metav1.GetControllerOfNoCopy(bd)
		switch {
		case ref == nil:
			return cond(metav1.ConditionFalse, ReasonInstallFailed,
				"BundleDeployment %s exists and has no controller: delete it to let PlatformOperator %s create its own", po.Name, po.Name), nil
		case ref.UID == po.UID:
			return InstalledCondition(po.Name, bundleDeploymentConditions(bd)), nil
		case ref.Kind == Kind && ref.Name == po.Name && groupOf(ref.APIVersion) == Group:
			return cond(metav1.ConditionFalse, ReasonInstallPending,
				"BundleDeployment %s belongs to an earlier PlatformOperator %s (uid %s): waiting for the garbage collector to delete it", po.Name, po.Name, ref.UID), nil
		default:
			return cond(metav1.ConditionFalse, ReasonInstallFailed,
				"BundleDeployment %s is controlled by %s %s, not by this PlatformOperator", po.Name, ref.Kind, ref.Name), nil
		}
	}

	got, ok := r.selections[pkg]
	if !ok {
		got.sel, got.err = r.step.Catalog.Select(pkg, r.step.ReleaseVersion)
		r.selections[pkg] = got
	}
	if got.err != nil {
		return cond(metav1.ConditionFalse, ReasonSourceFailed, "%v", got.err), nil
	}
	if err := r.shape.ValidateName(po.Name); err != nil {
		return cond(metav1.ConditionFalse, ReasonInstallFailed, "%v", err), nil
	}
	obj := &unstructured.Unstructured{Object: BundleDeployment(po, got.sel.Bundle, r.shape)}
	opts := metav1.CreateOptions{FieldManager: r.c.FieldManager}
	opts.DryRun = r.c.DryRunOption()
	created, err := r.bdClient.Create(ctx, obj, opts)
	switch {
	case apierrors.IsAlreadyExists(err):
		return cond(metav1.ConditionFalse, ReasonInstallPending, "BundleDeployment %s appeared meanwhile: the next run looks at it", po.Name), nil
	case err != nil:
		return cond(metav1.ConditionFalse, ReasonInstallFailed, "create BundleDeployment %s: %v", po.Name, err),
			fmt.Errorf("%s: BundleDeployment/%s: create: %w", StepName, po.Name, err)
	}
	r.bds[po.Name] = created
	r.res.Created = append(r.res.Created, po.Name)
	return InstalledCondition(po.Name, bundleDeploymentConditions(created)), nil
}
