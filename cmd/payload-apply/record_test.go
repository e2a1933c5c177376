package main

import (
	"bytes"
	"testing"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/payload"
)

// TestPrintRecordLine: a run says what it recorded; a refused or blocked
// update, which ran nothing, says what the record still holds (it said
// "4.22.1 Partial ( order, 0 status writes)" of a blocked rollback while
// the cluster was at 4.22.2 Completed).
func TestPrintRecordLine(t *testing.T) {
	rec := &configv1.ClusterVersion{Status: configv1.ClusterVersionStatus{History: []configv1.UpdateHistory{
		{Version: "4.22.2", State: configv1.CompletedUpdate}, {Version: "4.22.1", State: configv1.CompletedUpdate}}}}
	cases := []struct {
		name string
		r    clustersync.ApplyReport
		want string
	}{
		{name: "a run", r: clustersync.ApplyReport{Record: rec, Order: payload.OrderUpdate, Completed: true, RecordWrites: 3, Release: configv1.Release{Version: "4.22.2"}},
			want: "record: ClusterVersion version: 4.22.2 Completed (update order, 3 status writes)\n"},
		{name: "a blocked rollback", r: clustersync.ApplyReport{Record: rec, Release: configv1.Release{Version: "4.22.1"}},
			want: "record: ClusterVersion version: 4.22.2 Completed (the update to 4.22.1 was not run)\n"},
		{name: "refused", r: clustersync.ApplyReport{Record: rec},
			want: "record: ClusterVersion version: 4.22.2 Completed (nothing was applied)\n"},
		{name: "no record", r: clustersync.ApplyReport{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printRecordLine(&b, &tc.r)
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}
