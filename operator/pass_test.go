package operator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/upgrade"
)

func TestResult(t *testing.T) {
	blocked := &clustersync.PreconditionError{Summary: upgrade.Summary{Blocked: true,
		Message: `Precondition "ClusterVersionUpgradeable" failed because of "APIRemovedInNextRelease": gone`}}
	for _, tc := range []struct {
		name     string
		r        *PassReport
		want     string
		rejected bool
	}{
		{name: "applied", r: &PassReport{}, want: "success"},
		{name: "failed", r: &PassReport{Err: errors.New("boom")}, want: "failure"},
		{name: "interrupted", r: &PassReport{Apply: &clustersync.ApplyReport{Interrupted: &clustersync.InterruptCounts{}}, Err: errors.New("interrupted")}, want: "interrupted"},
		{name: "rejected by a precondition", r: &PassReport{Err: rejection([]error{fmt.Errorf("run: %w", blocked)})}, want: "rejected", rejected: true},
		{name: "rejected payload", r: &PassReport{Err: &RejectedError{Reason: ReasonRetrievePayload, Message: "no such payload"}}, want: "rejected", rejected: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Result(); got != tc.want {
				t.Errorf("Result %q, want %q", got, tc.want)
			}
			if got := tc.r.Rejected(); got != tc.rejected {
				t.Errorf("Rejected %v, want %v", got, tc.rejected)
			}
		})
	}
	re := rejection([]error{errors.New("other"), blocked})
	if re == nil || re.Reason != "PreconditionChecks" || re.Message != blocked.Summary.Message {
		t.Errorf("rejection: %+v, want PreconditionChecks with the summary", re)
	}
	if rejection([]error{errors.New("other")}) != nil {
		t.Error("rejection of a plain failure: want nil")
	}
}
