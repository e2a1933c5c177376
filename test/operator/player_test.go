//go:build e2e

package operator

import (
	"context"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

var clusterOperators = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusteroperators"}

// operatorVersions returns the versions each ClusterOperator of a
// payload's default plan lists, by name.
func operatorVersions(t *testing.T, payloadDir string) map[string][]configv1.OperandVersion {
	t.Helper()
	p, err := plan.Build(t.Context(), plan.Options{Payload: os.DirFS(payloadDir), Lean: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]configv1.OperandVersion{}
	for _, m := range p.Objects {
		if m.GVK.Kind != "ClusterOperator" || m.IsDelete() {
			continue
		}
		var co configv1.ClusterOperator
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Obj.Object, &co); err != nil {
			t.Fatal(err)
		}
		out[co.Name] = co.Status.Versions
	}
	return out
}

// player plays the cluster's operators: every ClusterOperator of want
// that exists is made Available, not Progressing nor Degraded,
// Upgradeable, at the versions want lists, as the operators would report
// them once they run. Set changes what they report.
type player struct {
	mu   sync.Mutex
	want map[string][]configv1.OperandVersion
}

// play starts a player on s until the test ends.
func play(t *testing.T, s *apiserver.Server, want map[string][]configv1.OperandVersion) *player {
	t.Helper()
	dc, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := &player{want: want}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			p.round(ctx, dc)
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

// set changes the versions the operators report.
func (p *player) set(want map[string][]configv1.OperandVersion) {
	p.mu.Lock()
	p.want = want
	p.mu.Unlock()
}

func (p *player) round(ctx context.Context, dc dynamic.Interface) {
	p.mu.Lock()
	want := p.want
	p.mu.Unlock()
	list, err := dc.Resource(clusterOperators).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, item := range list.Items {
		versions, ok := want[item.GetName()]
		if !ok {
			continue
		}
		var co configv1.ClusterOperator
		if runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &co) != nil {
			continue
		}
		if reportsAvailable(&co) && reflect.DeepEqual(co.Status.Versions, versions) {
			continue
		}
		now := metav1.Now()
		co.Status.Versions = versions
		co.Status.Conditions = []configv1.ClusterOperatorStatusCondition{
			{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, Reason: "AsExpected", LastTransitionTime: now},
			{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: now},
			{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: now},
			{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionTrue, Reason: "AsExpected", LastTransitionTime: now},
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&co)
		if err != nil {
			continue
		}
		_, _ = dc.Resource(clusterOperators).UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{FieldManager: "test-player"})
	}
}

func reportsAvailable(co *configv1.ClusterOperator) bool {
	for _, c := range co.Status.Conditions {
		if c.Type == configv1.OperatorAvailable {
			return c.Status == configv1.ConditionTrue
		}
	}
	return false
}
