package resourceapply

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/payload-apply/payload-apply/lib/component"
)

// countingMapper is a RESTMapper that knows ConfigMaps and counts resets.
type countingMapper struct {
	*meta.DefaultRESTMapper
	resets int
}

func (m *countingMapper) Reset() { m.resets++ }

func newCountingMapper() *countingMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	return &countingMapper{DefaultRESTMapper: m}
}

// funcStep is a step made of a function.
type funcStep struct {
	name string
	run  func(context.Context, *component.Cluster) error
}

func (s funcStep) Name() string                                        { return s.name }
func (s funcStep) Run(ctx context.Context, c *component.Cluster) error { return s.run(ctx, c) }

func configMap(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName(name)
	return u
}

func TestRunStep(t *testing.T) {
	// ensure creates ConfigMap ns/x when missing, through the mapper.
	ensure := func(ctx context.Context, c *component.Cluster) error {
		ri, err := c.ResourceFor(configMap("x"))
		if err != nil {
			return err
		}
		if _, err := ri.Get(ctx, "x", metav1.GetOptions{}); err == nil {
			return nil
		}
		_, err = ri.Create(ctx, configMap("x"), metav1.CreateOptions{FieldManager: c.FieldManager, DryRun: dryRunAll(c.DryRun)})
		return err
	}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Required(field.NewPath("data"), "")})
	retry := RetryOptions{Timeout: 5 * time.Second, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	tests := []struct {
		name    string
		runs    []func(context.Context, *component.Cluster) error // one per RunStep call
		opts    StepOptions
		want    []StepResult
		wantErr []string
		reason  Reason
		calls   int
	}{
		{
			name: "a write is Configured, then nothing to do is Unchanged",
			runs: []func(context.Context, *component.Cluster) error{ensure, ensure},
			want: []StepResult{{Step: "s", Action: Configured, Writes: 1}, {Step: "s", Action: Unchanged}},
		},
		{
			name: "a dry run says so",
			runs: []func(context.Context, *component.Cluster) error{ensure},
			opts: StepOptions{DryRun: true},
			want: []StepResult{{Step: "s", Action: Configured, Writes: 1, DryRun: true}},
		},
		{
			name: "a transient failure runs the step again",
			runs: []func(context.Context, *component.Cluster) error{func() func(context.Context, *component.Cluster) error {
				n := 0
				return func(ctx context.Context, c *component.Cluster) error {
					if n++; n == 1 {
						return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("changed"))
					}
					return ensure(ctx, c)
				}
			}()},
			opts: StepOptions{Retry: retry},
			want: []StepResult{{Step: "s", Action: Configured, Writes: 1}},
		},
		{
			name: "a permanent failure is a StepError at once",
			runs: []func(context.Context, *component.Cluster) error{func(context.Context, *component.Cluster) error {
				return errors.Join(errors.New("ConfigMap/ns/x: update"), invalid)
			}},
			opts:    StepOptions{Retry: retry},
			want:    []StepResult{{Step: "s", Action: Failed}},
			wantErr: []string{"step s: invalid: ConfigMap/ns/x: update\n" + invalid.Error()},
			reason:  ReasonInvalid,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
			m := New(client, newCountingMapper(), Options{})
			var got []StepResult
			var errs []string
			for _, run := range tc.runs {
				res, err := m.RunStep(t.Context(), funcStep{name: "s", run: run}, tc.opts)
				got = append(got, res)
				if err != nil {
					errs = append(errs, err.Error())
					var se *StepError
					if !errors.As(err, &se) || ReasonOf(err) != tc.reason {
						t.Errorf("error %v: not a StepError with reason %s", err, tc.reason)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunStepCluster(t *testing.T) {
	mapper := newCountingMapper()
	m := New(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), mapper, Options{FieldManager: "fm"})
	var seen *component.Cluster
	step := funcStep{name: "s", run: func(_ context.Context, c *component.Cluster) error {
		seen = c
		_, err := c.Resource(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "ns")
		return err
	}}
	if _, err := m.RunStep(t.Context(), step, StepOptions{}); err != nil {
		t.Fatal(err)
	}
	if seen.FieldManager != "fm" || seen.DryRun || mapper.resets != 0 {
		t.Errorf("cluster %+v, %d resets", seen, mapper.resets)
	}
	// A CRD became established whose kinds cannot be read from it: the
	// step's next mapping resets the mapper.
	m.crdEstablished(nil)
	if _, err := m.RunStep(t.Context(), step, StepOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if !seen.DryRun || mapper.resets != 1 {
		t.Errorf("dry run %v, %d resets, want 1", seen.DryRun, mapper.resets)
	}
	// A kind the server does not serve (yet): the mapper is reset once and
	// the error says there is no match.
	_, err := seen.Resource(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "")
	if !meta.IsNoMatchError(err) || mapper.resets != 2 {
		t.Errorf("unknown kind: err %v, %d resets, want a no-match error after 2", err, mapper.resets)
	}
}

func dryRunAll(dry bool) []string {
	if dry {
		return []string{metav1.DryRunAll}
	}
	return nil
}
