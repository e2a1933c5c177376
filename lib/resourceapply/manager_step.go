package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/lib/component"
)

// StepOptions say how RunStep runs a component's step.
type StepOptions struct {
	// DryRun runs the step with Cluster.DryRun set: its writes are
	// server-side dry runs.
	DryRun bool
	// Retry bounds how long a step that failed with a transient error
	// (see Classify: connection errors, timeouts, 429, 5xx, conflicts) is
	// run again; steps are idempotent. Zero Timeout: not at all.
	Retry RetryOptions
}

// DefaultStepOptions run again on transient failures for two minutes, as
// Apply retries a request.
func DefaultStepOptions() StepOptions { return StepOptions{Retry: DefaultRetryOptions()} }

// StepResult says what one RunStep did.
type StepResult struct {
	// Step is the step's name.
	Step string
	// Action is Configured when the step made a write that succeeded,
	// else Unchanged (or Failed, with the error).
	Action Action
	// Writes counts the step's write requests that succeeded, over every
	// attempt.
	Writes int
	// DryRun is true when the writes were server-side dry runs.
	DryRun bool
}

// Message says what the step wrote: "1 write", "3 writes (dry run)" or
// "no writes".
func (r StepResult) Message() string {
	var s string
	switch r.Writes {
	case 0:
		s = "no writes"
	case 1:
		s = "1 write"
	default:
		s = fmt.Sprintf("%d writes", r.Writes)
	}
	if r.DryRun && r.Writes > 0 {
		s += " (dry run)"
	}
	return s
}

// StepError is the failure of a component's step.
type StepError struct {
	// Step is the step's name.
	Step string
	// Reason classifies Err (Classify).
	Reason Reason
	// Err is the step's error.
	Err error
}

// Error prints "step NAME: reason: cause".
func (e *StepError) Error() string {
	return fmt.Sprintf("step %s: %s: %v", e.Step, e.Reason.Text(), e.Err)
}

// Unwrap returns the step's error.
func (e *StepError) Unwrap() error { return e.Err }

// RunStep runs a component's step against the Manager's cluster: its
// dynamic client, and a RESTMapper that is reset whenever a
// CustomResourceDefinition applied through the Manager became established
// since the last reset; field manager FieldManager. A transient failure
// runs the whole step again (opts.Retry). The error is a *StepError.
func (m *Manager) RunStep(ctx context.Context, s component.Step, opts StepOptions) (StepResult, error) {
	var writes atomic.Int64
	c := &component.Cluster{
		Client:       countingClient{Client: DynamicClient(m.client, &syncedMapper{m: m}), writes: &writes},
		FieldManager: m.fieldManager,
		DryRun:       opts.DryRun,
	}
	res := StepResult{Step: s.Name(), DryRun: opts.DryRun}
	ctx = withOutageLimit(ctx, m.health, opts.Retry.Timeout)
	err := retry(ctx, opts.Retry, func() error { return s.Run(ctx, c) })
	res.Writes = int(writes.Load())
	switch {
	case err != nil:
		res.Action = Failed
		reason := Classify(err)
		if ctx.Err() != nil {
			reason = Classify(ctx.Err())
		}
		return res, &StepError{Step: res.Step, Reason: reason, Err: err}
	case res.Writes > 0:
		res.Action = Configured
	default:
		res.Action = Unchanged
	}
	return res, nil
}

// syncedMapper is the Manager's RESTMapper, reset first when a
// CustomResourceDefinition became established since its last reset.
type syncedMapper struct{ m *Manager }

var _ meta.ResettableRESTMapper = (*syncedMapper)(nil)

func (s *syncedMapper) mapper() meta.RESTMapper {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.m.mapperGen != s.m.crdGen {
		s.m.mapper.Reset()
		s.m.mapperGen = s.m.crdGen
	}
	return s.m.mapper
}

func (s *syncedMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return s.mapper().KindFor(r)
}

func (s *syncedMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return s.mapper().KindsFor(r)
}

func (s *syncedMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return s.mapper().ResourceFor(r)
}

func (s *syncedMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return s.mapper().ResourcesFor(r)
}

func (s *syncedMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return s.mapper().RESTMapping(gk, versions...)
}

func (s *syncedMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return s.mapper().RESTMappings(gk, versions...)
}

func (s *syncedMapper) ResourceSingularizer(resource string) (string, error) {
	return s.mapper().ResourceSingularizer(resource)
}

// Reset forgets what discovery said, as a step does when a kind has no
// match yet.
func (s *syncedMapper) Reset() {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.mapper.Reset()
	s.m.mapperGen = s.m.crdGen
}

// DynamicClient returns the component.Client of a dynamic client: kinds
// are mapped to resources by mapper, which is reset once when a kind has
// no match (its CustomResourceDefinition may have just been established).
func DynamicClient(client dynamic.Interface, mapper meta.ResettableRESTMapper) component.Client {
	return dynamicClient{client: client, mapper: mapper}
}

type dynamicClient struct {
	client dynamic.Interface
	mapper meta.ResettableRESTMapper
}

func (d dynamicClient) Resource(gvk schema.GroupVersionKind, namespace string) (component.ResourceClient, error) {
	mapping, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		d.mapper.Reset()
		mapping, err = d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	r := d.client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace && namespace != "" {
		return r.Namespace(namespace), nil
	}
	return r, nil
}

// countingClient counts the write requests of its resources' clients that
// succeed.
type countingClient struct {
	component.Client
	writes *atomic.Int64
}

func (c countingClient) Resource(gvk schema.GroupVersionKind, namespace string) (component.ResourceClient, error) {
	r, err := c.Client.Resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	return countingNamespaced{ResourceClient: r, writes: c.writes}, nil
}

type countingNamespaced struct {
	component.ResourceClient
	writes *atomic.Int64
}

func (c countingNamespaced) count(err error) {
	if err == nil {
		c.writes.Add(1)
	}
}

func (c countingNamespaced) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := c.ResourceClient.Create(ctx, obj, opts, sub...)
	c.count(err)
	return out, err
}

func (c countingNamespaced) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := c.ResourceClient.Update(ctx, obj, opts, sub...)
	c.count(err)
	return out, err
}

func (c countingNamespaced) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	out, err := c.ResourceClient.UpdateStatus(ctx, obj, opts)
	c.count(err)
	return out, err
}

func (c countingNamespaced) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	err := c.ResourceClient.Delete(ctx, name, opts, sub...)
	c.count(err)
	return err
}

func (c countingNamespaced) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := c.ResourceClient.Patch(ctx, name, pt, data, opts, sub...)
	c.count(err)
	return out, err
}

func (c countingNamespaced) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := c.ResourceClient.Apply(ctx, name, obj, opts, sub...)
	c.count(err)
	return out, err
}

// isStepError reports whether err holds a *StepError and returns it.
func isStepError(err error) (*StepError, bool) {
	var se *StepError
	return se, errors.As(err, &se)
}
