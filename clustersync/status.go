package clustersync

import (
	"context"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

// StatusReport is the state of the plan's ClusterOperators on the cluster
// and the aggregate status ClusterVersion would report.
type StatusReport struct {
	// Version is the release version of the plan's payload ("" when it
	// has none).
	Version string
	// Operators are the plan's ClusterOperators in apply order.
	Operators []resourceapply.OperatorState
	// Cluster is the aggregate: conditions, done and total.
	Cluster resourceapply.ClusterStatus
	// Unmanaged are the objects of the release that the record's
	// spec.overrides leave unmanaged (plan.Plan.Unmanaged): never written.
	Unmanaged []*manifest.Manifest
}

// Status reads every ClusterOperator the session's plan includes (those
// not annotated for deletion) and aggregates them as the CVO computes
// ClusterVersion's conditions at install time (resourceapply.Aggregate).
// A ClusterOperator the cluster lacks, or whose kind it does not serve yet,
// counts as not found.
func Status(ctx context.Context, s *Session) (*StatusReport, error) {
	p := s.Plan
	r := &StatusReport{}
	if p.Payload.Release != nil {
		r.Version = p.Payload.Release.Version
	}
	for _, m := range p.Objects {
		if m.GVK.Group != configv1.GroupName || m.GVK.Kind != "ClusterOperator" || m.IsDelete() {
			continue
		}
		var want configv1.ClusterOperator
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Obj.Object, &want); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", m.Position(), m.ID(), err)
		}
		live, err := s.Cluster.Manager.Get(ctx, m.GVK, "", m.Obj.GetName(), s.Cluster.RetryOptions())
		if err != nil && !resourceapply.IsResourceTypeMissing(err) {
			return nil, err
		}
		var got *configv1.ClusterOperator
		if live != nil {
			got = &configv1.ClusterOperator{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, got); err != nil {
				return nil, fmt.Errorf("%s: %w", m.ID(), err)
			}
		}
		r.Operators = append(r.Operators, resourceapply.OperatorStatus(&want, got))
	}
	r.Cluster = resourceapply.Aggregate(r.Version, r.Operators)
	r.Unmanaged = p.Unmanaged()
	return r, nil
}
