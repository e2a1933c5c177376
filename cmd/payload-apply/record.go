package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/clustersync"
)

// jsonRecord is the -o json shape of the cluster's record (ClusterVersion
// version) in status and upgrade; field names are part of the CLI
// contract.
type jsonRecord struct {
	Desired      configv1.Release                          `json:"desired"`
	History      []configv1.UpdateHistory                  `json:"history"`
	Conditions   []configv1.ClusterOperatorStatusCondition `json:"conditions"`
	Capabilities configv1.ClusterVersionCapabilitiesStatus `json:"capabilities"`
}

// recordJSON returns the record's JSON shape, nil without a record.
func recordJSON(rec *configv1.ClusterVersion) *jsonRecord {
	if rec == nil {
		return nil
	}
	r := &jsonRecord{Desired: rec.Status.Desired, History: rec.Status.History, Conditions: rec.Status.Conditions, Capabilities: rec.Status.Capabilities}
	if r.History == nil {
		r.History = []configv1.UpdateHistory{}
	}
	return r
}

// printRecord prints the record for people: the release the cluster works
// towards, the history (newest first) and the conditions.
func printRecord(w io.Writer, rec *configv1.ClusterVersion) {
	if rec == nil {
		fmt.Fprintf(w, "ClusterVersion %s: none (no release recorded)\n", clustersync.RecordName)
		return
	}
	st := rec.Status
	fmt.Fprintf(w, "ClusterVersion %s: desired %s (%s)\n", clustersync.RecordName, dash(st.Desired.Version), dash(st.Desired.Image))
	for _, h := range st.History {
		done := "-"
		if h.CompletionTime != nil {
			done = h.CompletionTime.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  %-10s %-24s started %s completed %s verified %v  %s\n", h.State, dash(h.Version),
			h.StartedTime.UTC().Format(time.RFC3339), done, h.Verified, h.Image)
		if h.AcceptedRisks != "" {
			fmt.Fprintf(w, "    accepted risks: %s\n", strings.ReplaceAll(h.AcceptedRisks, "\n", "\n      "))
		}
	}
	for _, c := range st.Conditions {
		line := fmt.Sprintf("  %s=%s", c.Type, c.Status)
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		if c.Message != "" {
			line += ": " + strings.ReplaceAll(c.Message, "\n", "\n    ")
		}
		fmt.Fprintln(w, line)
	}
}

// recordFailing reports whether the record says Failing=True.
func recordFailing(rec *configv1.ClusterVersion) bool {
	if rec == nil {
		return false
	}
	for _, c := range rec.Status.Conditions {
		if c.Type == "Failing" && c.Status == configv1.ConditionTrue {
			return true
		}
	}
	return false
}

// printRecordLine says what a run recorded: "record: ClusterVersion
// version: 4.22.1 Completed (install order, 3 status writes)". When
// nothing ran (an update refused or blocked: no order), it says what the
// record holds still: "record: ClusterVersion version: 4.22.2 Completed
// (the update to 4.22.1 was not run)".
func printRecordLine(w io.Writer, r *clustersync.ApplyReport) {
	if r.Record == nil {
		return
	}
	if r.Order == "" {
		version, state := "-", "(no history)"
		if h := r.Record.Status.History; len(h) > 0 {
			version, state = dash(h[0].Version), string(h[0].State)
		}
		why := "nothing was applied"
		if v := r.Release.Version; v != "" && v != version {
			why = "the update to " + v + " was not run"
		}
		fmt.Fprintf(w, "record: ClusterVersion %s: %s %s (%s)\n", clustersync.RecordName, version, state, why)
		return
	}
	state := "Partial"
	if r.Completed {
		state = "Completed"
	}
	fmt.Fprintf(w, "record: ClusterVersion %s: %s %s (%s order, %s)\n", clustersync.RecordName, dash(r.Release.Version), state, r.Order,
		clustersync.Plural(r.RecordWrites, "status write"))
}
