package nodetuning

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

var (
	configMapKind    = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	runtimeClassKind = schema.GroupVersionKind{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"}
)

// HostedStep writes a hosted profile's outputs at apply time, after the
// source ConfigMap is applied, the way the performance profile controller
// reconciles it:
//
//   - It reads the source ConfigMap. When it is being deleted, the step
//     deletes the RuntimeClass (when it carries ProfileLabel for this
//     profile, as every RuntimeClass the step writes does) and then removes
//     Finalizer; the embedded ConfigMaps go with the source through their
//     owner references. It does nothing else then.
//   - Otherwise it adds Finalizer to the source, writes the ConfigMaps
//     embedding the Tuned, the MachineConfig and the KubeletConfig with a
//     controller owner reference to the source (its real UID), writes the
//     RuntimeClass, and writes the status ConfigMap with the Available,
//     Upgradeable, Progressing and Degraded conditions (Degraded=True with
//     ReasonComponentCreationFailed when an output could not be written).
//
// Every object is read first and written only when it differs from what
// the step wants, so a run with nothing to change sends no write request. A
// condition keeps its lastTransitionTime while its status stays the same.
// With Cluster.DryRun every write is a server-side dry run, and a source
// ConfigMap that does not exist yet is not an error.
//
// The step writes what the plan rendered; when the source ConfigMap in the
// cluster holds a different profile than the plan did, it fails without
// writing (plan again). It uses only Cluster.Client.
type HostedStep struct {
	hosted *Hosted
	// Now is the clock of condition transitions; nil: time.Now.
	Now func() time.Time
}

var _ component.Step = (*HostedStep)(nil)

// NewHostedStep returns the step that writes h.
func NewHostedStep(h *Hosted) *HostedStep { return &HostedStep{hosted: h} }

// Name is "nodetuning/NAMESPACE/NAME" of the source ConfigMap.
func (s *HostedStep) Name() string {
	return "nodetuning/" + s.hosted.Source.Namespace + "/" + s.hosted.Source.Name
}

// Rules returns what Run needs: the ConfigMaps it reads, creates and
// updates, and the RuntimeClass it writes and deletes.
func (s *HostedStep) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update"}},
		{APIGroups: []string{"node.k8s.io"}, Resources: []string{"runtimeclasses"}, Verbs: []string{"get", "create", "update", "delete"}},
	}
}

// Run reconciles the outputs once; see HostedStep.
func (s *HostedStep) Run(ctx context.Context, c *component.Cluster) error {
	src := s.hosted.Source
	cms, err := c.Resource(configMapKind, src.Namespace)
	if err != nil {
		return fmt.Errorf("%s: %w", configMapRef(src.Namespace, src.Name), err)
	}
	rcs, err := c.Resource(runtimeClassKind, "")
	if err != nil {
		return fmt.Errorf("RuntimeClass: %w", err)
	}
	w := &writer{c: c, cms: cms, rcs: rcs}
	live, err := cms.Get(ctx, src.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && c.DryRun:
		return nil
	case err != nil:
		return fmt.Errorf("%s: get: %w", configMapRef(src.Namespace, src.Name), err)
	}
	if live.GetDeletionTimestamp() != nil {
		return s.finalize(ctx, w, live)
	}
	if got, _, _ := unstructured.NestedString(live.Object, "data", src.Key); got != src.Data && !c.DryRun {
		return fmt.Errorf("%s: data.%s differs from the planned profile: plan again", configMapRef(src.Namespace, src.Name), src.Key)
	}
	if !slices.Contains(live.GetFinalizers(), Finalizer) {
		updated := live.DeepCopy()
		updated.SetFinalizers(append(updated.GetFinalizers(), Finalizer))
		if _, err := cms.Update(ctx, updated, w.updateOptions()); err != nil {
			return fmt.Errorf("%s: add finalizer %s: %w", configMapRef(src.Namespace, src.Name), Finalizer, err)
		}
	}

	uid := string(live.GetUID())
	var errs []error
	for _, cm := range s.hosted.ConfigMaps {
		errs = append(errs, w.ensureConfigMap(ctx, withOwner(cm, src.Name, uid)))
	}
	errs = append(errs, w.ensureRuntimeClass(ctx, s.hosted.Objects.RuntimeClass))
	conds := availableConditions()
	if err := errors.Join(errs...); err != nil {
		conds = degradedConditions(ReasonComponentCreationFailed, err.Error())
	}
	errs = append(errs, s.writeStatus(ctx, w, uid, conds))
	return errors.Join(errs...)
}

// finalize cleans up after a source ConfigMap that is being deleted: the
// RuntimeClass first, then the finalizer.
func (s *HostedStep) finalize(ctx context.Context, w *writer, live *unstructured.Unstructured) error {
	src := s.hosted.Source
	rcName := RuntimeClassName(src.Profile.Name)
	rcs := w.rcs
	rc, err := rcs.Get(ctx, rcName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("%s: get: %w", runtimeClassRef(rcName), err)
	case rc.GetLabels()[ProfileLabel] != src.Profile.Name:
		// Not rendered from this profile (the step never wrote it): leave it.
	default:
		opts := w.deleteOptions()
		opts.Preconditions = &metav1.Preconditions{UID: ptrTo(rc.GetUID())}
		if err := rcs.Delete(ctx, rcName, opts); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: delete: %w", runtimeClassRef(rcName), err)
		}
	}
	if !slices.Contains(live.GetFinalizers(), Finalizer) {
		return nil
	}
	updated := live.DeepCopy()
	updated.SetFinalizers(slices.DeleteFunc(updated.GetFinalizers(), func(f string) bool { return f == Finalizer }))
	if _, err := w.cms.Update(ctx, updated, w.updateOptions()); err != nil {
		return fmt.Errorf("%s: remove finalizer %s: %w", configMapRef(src.Namespace, src.Name), Finalizer, err)
	}
	return nil
}

// writeStatus writes the status ConfigMap with conds, keeping the
// transition times of conditions whose status did not change.
func (s *HostedStep) writeStatus(ctx context.Context, w *writer, uid string, conds []Condition) error {
	desired := withOwner(s.hosted.Status, s.hosted.Source.Name, uid)
	live, err := w.cms.Get(ctx, desired.GetName(), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: get: %w", configMapRef(desired.GetNamespace(), desired.GetName()), err)
	}
	var previous PerformanceProfileStatus
	if err == nil {
		if text, ok, _ := unstructured.NestedString(live.Object, "data", StatusKey); ok {
			// A status that does not parse is replaced.
			_ = yaml.Unmarshal([]byte(text), &previous)
		}
	} else {
		live = nil
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	text, err := marshalStatus(s.hosted.statusFor(withTransitionTimes(conds, previous.Conditions, now())))
	if err != nil {
		return err
	}
	desired.Object["data"] = map[string]any{StatusKey: text}
	return w.applyConfigMap(ctx, desired, live)
}

// withOwner returns an output ConfigMap with the controller reference to the
// source ConfigMap and its UID.
func withOwner(obj map[string]any, source, uid string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: copyMap(obj)}
	md, _ := obj["metadata"].(map[string]any)
	md = copyMap(md)
	md["ownerReferences"] = []any{ownerReference(source, uid)}
	u.Object["metadata"] = md
	return u.DeepCopy()
}

// writer reads and writes through the step's cluster.
type writer struct {
	c   *component.Cluster
	cms component.ResourceClient // ConfigMaps of the source's namespace
	rcs component.ResourceClient // RuntimeClasses
}

func (w *writer) dryRun() []string { return w.c.DryRunOption() }

func (w *writer) createOptions() metav1.CreateOptions {
	return metav1.CreateOptions{DryRun: w.dryRun(), FieldManager: w.c.FieldManager}
}

func (w *writer) updateOptions() metav1.UpdateOptions {
	return metav1.UpdateOptions{DryRun: w.dryRun(), FieldManager: w.c.FieldManager}
}

func (w *writer) deleteOptions() metav1.DeleteOptions {
	return metav1.DeleteOptions{DryRun: w.dryRun()}
}

// ensureConfigMap creates or updates an output ConfigMap.
func (w *writer) ensureConfigMap(ctx context.Context, desired *unstructured.Unstructured) error {
	live, err := w.cms.Get(ctx, desired.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return fmt.Errorf("%s: get: %w", configMapRef(desired.GetNamespace(), desired.GetName()), err)
	}
	return w.applyConfigMap(ctx, desired, live)
}

// applyConfigMap creates desired when live is nil, else updates live to it
// when they differ: desired's labels and annotations are set (others are
// kept), data is replaced, and desired's controller reference replaces any
// other reference to the source ConfigMap. A ConfigMap controlled by
// anything else is an error.
func (w *writer) applyConfigMap(ctx context.Context, desired, live *unstructured.Unstructured) error {
	ref := configMapRef(desired.GetNamespace(), desired.GetName())
	if live == nil {
		if _, err := w.cms.Create(ctx, desired, w.createOptions()); err != nil {
			return fmt.Errorf("%s: create: %w", ref, err)
		}
		return nil
	}
	want := desired.GetOwnerReferences()[0]
	if c := metav1.GetControllerOfNoCopy(live); c != nil && !(c.Kind == want.Kind && c.APIVersion == want.APIVersion && c.Name == want.Name) {
		return fmt.Errorf("%s: is controlled by %s/%s, not by the source ConfigMap %s", ref, c.Kind, c.Name, want.Name)
	}
	if configMapUpToDate(live, desired) {
		return nil
	}
	updated := live.DeepCopy()
	updated.SetLabels(mergeStrings(updated.GetLabels(), desired.GetLabels()))
	updated.SetAnnotations(mergeStrings(updated.GetAnnotations(), desired.GetAnnotations()))
	refs := slices.DeleteFunc(updated.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
		return r.Kind == want.Kind && r.APIVersion == want.APIVersion && r.Name == want.Name
	})
	updated.SetOwnerReferences(append(refs, want))
	updated.Object["data"] = desired.Object["data"]
	delete(updated.Object, "binaryData")
	if _, err := w.cms.Update(ctx, updated, w.updateOptions()); err != nil {
		return fmt.Errorf("%s: update: %w", ref, err)
	}
	return nil
}

// configMapUpToDate reports whether live has desired's labels, annotations,
// data and controller reference.
func configMapUpToDate(live, desired *unstructured.Unstructured) bool {
	if !containsStrings(live.GetLabels(), desired.GetLabels()) || !containsStrings(live.GetAnnotations(), desired.GetAnnotations()) {
		return false
	}
	if _, ok := live.Object["binaryData"]; ok {
		return false
	}
	liveData, _, _ := unstructured.NestedStringMap(live.Object, "data")
	wantData, _, _ := unstructured.NestedStringMap(desired.Object, "data")
	if !reflect.DeepEqual(normalize(liveData), normalize(wantData)) {
		return false
	}
	c := metav1.GetControllerOfNoCopy(live)
	want := desired.GetOwnerReferences()[0]
	return c != nil && reflect.DeepEqual(*c, want)
}

// ensureRuntimeClass creates the RuntimeClass or updates its labels and
// scheduling. Its handler cannot change: a RuntimeClass of that name with
// another handler is an error.
func (w *writer) ensureRuntimeClass(ctx context.Context, obj map[string]any) error {
	desired := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	ref := runtimeClassRef(desired.GetName())
	rcs := w.rcs
	live, err := rcs.Get(ctx, desired.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := rcs.Create(ctx, desired, w.createOptions()); err != nil {
			return fmt.Errorf("%s: create: %w", ref, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("%s: get: %w", ref, err)
	}
	if h, _, _ := unstructured.NestedString(live.Object, "handler"); h != RuntimeHandler {
		return fmt.Errorf("%s: has handler %q, want %q (a handler cannot change: delete the RuntimeClass)", ref, h, RuntimeHandler)
	}
	if containsStrings(live.GetLabels(), desired.GetLabels()) && reflect.DeepEqual(live.Object["scheduling"], desired.Object["scheduling"]) {
		return nil
	}
	updated := live.DeepCopy()
	updated.SetLabels(mergeStrings(updated.GetLabels(), desired.GetLabels()))
	updated.Object["scheduling"] = desired.Object["scheduling"]
	if _, err := rcs.Update(ctx, updated, w.updateOptions()); err != nil {
		return fmt.Errorf("%s: update: %w", ref, err)
	}
	return nil
}

func runtimeClassRef(name string) string {
	return manifest.ID{Group: "node.k8s.io", Kind: "RuntimeClass", Name: name}.Ref()
}

func configMapRef(namespace, name string) string {
	return manifest.ID{Kind: "ConfigMap", Namespace: namespace, Name: name}.Ref()
}

// containsStrings reports whether have holds every entry of want.
func containsStrings(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// mergeStrings returns base with over's entries set.
func mergeStrings(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// normalize makes an empty map and nil compare equal.
func normalize(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
