package clustersync

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/diff"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

// DiffOptions say how Diff reads the cluster.
type DiffOptions struct {
	// Parallelism is the most objects read and dry-run at once; below 1:
	// resourceapply.DefaultDiffOptions' value.
	Parallelism int
}

// DiffReport is what an apply would change on the cluster.
type DiffReport struct {
	// Result compares the live objects with what an apply would leave.
	Result *diff.Result
	// Failures are the objects that could not be compared (FILE#DOC:
	// error); the others are in Result.
	Failures []error
}

// Diff computes what Apply would change on the session's cluster, writing
// nothing: every object of the plan is read (by lists where several share
// a resource, Secrets one by one), and objects that differ are sent as
// server-side dry runs (resourceapply.Manager.DiffAll). The live and the
// would-be objects are compared by lib/diff, status dropped.
func Diff(ctx context.Context, s *Session, opts DiffOptions) (*DiffReport, error) {
	logger := klog.FromContext(ctx)
	p := s.Plan
	dopts := resourceapply.DefaultDiffOptions()
	if opts.Parallelism > 0 {
		dopts.Parallelism = opts.Parallelism
	}
	previews, _ := s.Cluster.Manager.DiffAll(ctx, p.Unstructured(), dopts)
	placed := p.DiffObjects()
	var live, merged []diff.Object
	r := &DiffReport{}
	for i, pv := range previews {
		m := p.Objects[i]
		if pv.Err != nil {
			r.Failures = append(r.Failures, fmt.Errorf("%s: %w", m.Position(), pv.Err))
			logger.V(2).Info("Failed", "object", m.ID().String(), "file", m.Position(), "reason", resourceapply.ReasonOf(pv.Err), "err", pv.Err)
			continue
		}
		logger.V(2).Info(string(pv.Action), "object", m.ID().String(), "file", m.Position(), "asGiven", pv.AsGiven, "message", pv.Message)
		if pv.Live != nil {
			o := placed[i]
			o.Obj = pv.Live
			live = append(live, o)
		}
		if pv.Merged != nil {
			o := placed[i]
			o.Obj = pv.Merged
			merged = append(merged, o)
		}
	}
	c := s.Cluster.Requests
	logger.V(1).Info("Requests", "reads", c.Reads(), "writes", c.Writes(), "byVerb", c.Counts())
	res, err := diff.Compare(live, merged, diff.Options{})
	if err != nil {
		return nil, err
	}
	r.Result = res
	return r, nil
}
