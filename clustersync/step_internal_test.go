package clustersync

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// resettable is a RESTMapper whose Reset does nothing.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// unavailableStep fails as the server being unavailable every time it
// runs, counting its runs.
type unavailableStep struct{ runs atomic.Int32 }

func (s *unavailableStep) Name() string { return "test/unavailable" }

func (s *unavailableStep) Run(context.Context, *component.Cluster) error {
	s.runs.Add(1)
	return apierrors.NewServiceUnavailable("the server is down")
}

// TestStepRetriesWithinRunWindow: a step that keeps failing transiently
// is retried, and given up within the run's retry window, not the
// two-minute default (a step in flight when the server went away kept an
// apply with --retry-timeout=5s alive until the server came back).
func TestStepRetriesWithinRunWindow(t *testing.T) {
	mgr := resourceapply.New(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), resettable{meta.NewDefaultRESTMapper(nil)}, resourceapply.Options{})
	opts := resourceapply.DefaultApplyOptions()
	opts.Retry.Timeout = time.Second
	a := newApplier(mgr, opts, 1, t.Context(), nil)
	step := &unavailableStep{}
	task := &payload.Task{Index: 1, Step: step}

	start := time.Now()
	err := a.runStep(t.Context(), task)
	took := time.Since(start)
	if err == nil {
		t.Fatal("the step succeeded")
	}
	if got := resourceapply.ReasonOf(err); got != resourceapply.ReasonUnavailable {
		t.Errorf("reason %q, want %q (err %v)", got, resourceapply.ReasonUnavailable, err)
	}
	if n := step.runs.Load(); n < 2 {
		t.Errorf("the step ran %d times: a transient failure is retried", n)
	}
	if took > 10*time.Second {
		t.Errorf("the step was given up after %s: want about the run's retry window of %s", took.Round(time.Millisecond), opts.Retry.Timeout)
	}
}
