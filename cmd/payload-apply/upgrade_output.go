package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/upgrade"
)

// jsonUpgradePlan is the -o json shape of an upgrade plan (--dry-run's
// output, the "plan" event of a run); field names are part of the CLI
// contract.
type jsonUpgradePlan struct {
	From          configv1.Release                          `json:"from"`
	To            configv1.Release                          `json:"to"`
	Type          string                                    `json:"type"`
	Continuing    bool                                      `json:"continuing"`
	Done          bool                                      `json:"done"`
	Blocked       bool                                      `json:"blocked"`
	Preconditions []jsonVerdict                             `json:"preconditions"`
	Message       string                                    `json:"message,omitempty"`
	AcceptedRisks string                                    `json:"acceptedRisks,omitempty"`
	Implicit      []jsonImplicit                            `json:"implicitlyEnabledCapabilities"`
	Creates       []jsonUpgradeItem                         `json:"creates"`
	Changes       []jsonUpgradeItem                         `json:"changes"`
	Kept          []jsonUpgradeItem                         `json:"kept"`
	Deletes       []jsonUpgradeItem                         `json:"deletes"`
	Deleted       int                                       `json:"deletedAlready"`
	Orphans       []jsonUpgradeItem                         `json:"orphans"`
	Takes         []jsonTaken                               `json:"takes"`
	Moves         []jsonUpgradeItem                         `json:"moves"`
	Unchanged     int                                       `json:"unchanged"`
	Upgradeable   []configv1.ClusterOperatorStatusCondition `json:"upgradeable"`
}

// jsonTaken is what one delete of a Namespace or a CustomResourceDefinition
// takes with it.
type jsonTaken struct {
	Delete  jsonUpgradeItem   `json:"delete"`
	Scope   string            `json:"scope"`
	Wanted  []jsonUpgradeItem `json:"wanted"`
	Orphans []jsonUpgradeItem `json:"orphans"`
	Others  []string          `json:"others"`
	More    int               `json:"more,omitempty"`
}

func takenJSON(t upgrade.Taken) jsonTaken {
	j := jsonTaken{Delete: upgradeItems([]upgrade.Item{t.Delete})[0], Scope: t.Scope(), Wanted: upgradeItems(t.Wanted),
		Orphans: upgradeItems(t.Orphans), Others: []string{}, More: t.More}
	for _, id := range t.Others {
		j.Others = append(j.Others, id.Ref())
	}
	return j
}

type jsonVerdict struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Warning bool   `json:"warning,omitempty"`
	Forced  bool   `json:"forced,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

type jsonImplicit struct {
	Capability string `json:"capability"`
	Object     string `json:"object"`
}

// jsonUpgradeItem is an object of the plan: where it is in the new release
// (the old one for an orphan), and for a move where it was.
type jsonUpgradeItem struct {
	File       string `json:"file"`
	Doc        int    `json:"doc"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Place      string `json:"place"`
	From       string `json:"from,omitempty"`
}

func placeName(p upgrade.Place) string {
	if p.Level == payload.NoRunLevel {
		return "unordered"
	}
	return fmt.Sprintf("%02d/%s", p.Level, p.Component)
}

func upgradeItems(items []upgrade.Item) []jsonUpgradeItem {
	out := []jsonUpgradeItem{}
	for _, it := range items {
		m := it.To
		if m == nil {
			m = it.From
		}
		j := jsonUpgradeItem{File: m.File, Doc: m.Doc, APIVersion: m.Obj.GetAPIVersion(), Kind: m.GVK.Kind,
			Namespace: m.Obj.GetNamespace(), Name: m.Obj.GetName(), Place: placeName(upgrade.PlaceOf(m))}
		if it.From != nil && it.To != nil {
			if from := placeName(upgrade.PlaceOf(it.From)); from != j.Place {
				j.From = from
			}
		}
		out = append(out, j)
	}
	return out
}

func upgradePlanJSON(u *clustersync.Upgrade) jsonUpgradePlan {
	c := u.Changes
	j := jsonUpgradePlan{From: u.FromRelease, To: u.ToRelease, Type: string(u.Type), Continuing: u.Continuing, Done: u.Done,
		Blocked: u.Blocked(), Preconditions: []jsonVerdict{}, Message: u.Summary.Message, AcceptedRisks: u.Summary.AcceptedRisks,
		Implicit: []jsonImplicit{}, Creates: upgradeItems(c.Creates), Changes: upgradeItems(c.Changes), Kept: upgradeItems(c.Kept), Deletes: upgradeItems(c.Deletes), Deleted: c.Deleted,
		Orphans: upgradeItems(c.Orphans), Takes: []jsonTaken{}, Moves: upgradeItems(c.Moves), Unchanged: c.Unchanged, Upgradeable: u.Upgradeable}
	for _, t := range u.Takes {
		j.Takes = append(j.Takes, takenJSON(t))
	}
	for _, v := range u.Verdicts {
		j.Preconditions = append(j.Preconditions, jsonVerdict{Name: v.Name, Passed: v.Passed, Warning: v.Warning, Forced: v.Forced, Reason: v.Reason, Message: v.Message})
	}
	for _, i := range u.Implicit {
		j.Implicit = append(j.Implicit, jsonImplicit{Capability: string(i.Capability), Object: i.Object.String()})
	}
	return j
}

// writeUpgradePlan prints the plan on stdout: all of it for people, or the
// JSON object.
func writeUpgradePlan(s IOStreams, u *clustersync.Upgrade, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(upgradePlanJSON(u))
	}
	writeUpgradeHead(s.Out, u)
	c := u.Changes
	for _, sec := range []struct {
		title string
		items []upgrade.Item
	}{{"creates", c.Creates}, {"changes", c.Changes},
		{"changes not written (created once, never updated: create-only objects, ClusterOperators)", c.Kept},
		{"deletes (release.openshift.io/delete)", c.Deletes},
		{"orphans (dropped without a delete manifest: left on the cluster, unmanaged, as the CVO leaves them)", c.Orphans},
		{"moves to another run level or component", c.Moves}} {
		fmt.Fprintf(s.Out, "%s: %d\n", sec.title, len(sec.items))
		writeItems(s.Out, "  ", sec.items)
	}
	fmt.Fprintf(s.Out, "deletes that take objects with them (a Namespace takes every object in it, a CustomResourceDefinition every object of its kind): %d\n", len(u.Takes))
	for _, t := range u.Takes {
		fmt.Fprintf(s.Out, "  %s (%s) deletes %s:\n", t.Delete.ID.Ref(), t.Delete.To.Position(), t.Scope())
		if len(t.Wanted) > 0 {
			fmt.Fprintf(s.Out, "    objects this release applies, deleted with it (the release contradicts itself): %d\n", len(t.Wanted))
			writeItems(s.Out, "      ", t.Wanted)
		}
		if len(t.Orphans) > 0 {
			fmt.Fprintf(s.Out, "    objects of the running release this one drops, deleted with it (not left on the cluster): %d\n", len(t.Orphans))
			writeItems(s.Out, "      ", t.Orphans)
		}
		if n := len(t.Others) + t.More; n > 0 {
			fmt.Fprintf(s.Out, "    objects on the cluster no release applies, deleted with it: %d\n", n)
			for _, id := range t.Others {
				fmt.Fprintf(s.Out, "      %s\n", id.Ref())
			}
			if t.More > 0 {
				fmt.Fprintf(s.Out, "      ... and %d more\n", t.More)
			}
		}
	}
	fmt.Fprintln(s.Out, upgradeCounts(u))
	return nil
}

// writeItems prints one line per item: place, file#doc, object, and where
// it moves from.
func writeItems(w io.Writer, indent string, items []upgrade.Item) {
	for _, it := range upgradeItems(items) {
		obj := it.Kind + "/" + it.Name
		if it.Namespace != "" {
			obj = it.Kind + "/" + it.Namespace + "/" + it.Name
		}
		move := ""
		if it.From != "" {
			move = " (from " + it.From + ")"
		}
		fmt.Fprintf(w, "%s%s  %s#%d  %s%s\n", indent, it.Place, it.File, it.Doc, obj, move)
	}
}

// writeUpgradeHead prints what the update is and its preconditions.
func writeUpgradeHead(w io.Writer, u *clustersync.Upgrade) {
	kind := string(u.Type)
	if kind == "" {
		kind = "unknown kind"
	}
	fmt.Fprintf(w, "upgrade %s -> %s (%s)\n", clusterversion.VersionName(u.FromRelease), clusterversion.VersionName(u.ToRelease), kind)
	fmt.Fprintf(w, "  from: %s\n  to:   %s\n", dash(u.FromRelease.Image), u.ToRelease.Image)
	switch {
	case u.Done:
		fmt.Fprintf(w, "the cluster runs %s already: nothing to do\n", clusterversion.VersionName(u.ToRelease))
	case u.Continuing:
		fmt.Fprintf(w, "continuing the update to %s that stopped (its preconditions passed when it started)\n", clusterversion.VersionName(u.ToRelease))
	}
	if len(u.Verdicts) > 0 {
		fmt.Fprintln(w, "preconditions:")
	}
	for _, v := range u.Verdicts {
		verdict := "passed"
		switch {
		case v.Passed:
		case v.Forced:
			verdict = "forced (" + v.Reason + "): " + v.Message
		case v.Warning:
			verdict = "warning (" + v.Reason + "): " + v.Message
		default:
			verdict = "blocks (" + v.Reason + "): " + v.Message
		}
		fmt.Fprintf(w, "  %-27s %s\n", v.Name, strings.ReplaceAll(verdict, "\n", "\n    "))
	}
	if len(u.Implicit) > 0 {
		fmt.Fprintln(w, "capabilities enabled implicitly (enabled capabilities never become disabled):")
		for _, i := range u.Implicit {
			fmt.Fprintf(w, "  %s: %s moves to it\n", i.Capability, i.Object)
		}
	}
}

// upgradeCounts is the plan's summary line.
func upgradeCounts(u *clustersync.Upgrade) string {
	c := u.Changes
	taken := 0
	for _, t := range u.Takes {
		taken += len(t.Wanted) + len(t.Orphans) + len(t.Others) + t.More
	}
	return fmt.Sprintf("summary: %d to create, %d to change (%d more created once, not updated), %d to delete (%d deleted already, %d more objects with them), %d orphaned, %d moving, %d unchanged",
		len(c.Creates), len(c.Changes), len(c.Kept), len(c.Deletes), c.Deleted, taken, len(c.Orphans), len(c.Moves), c.Unchanged)
}

// announceUpgrade says, before the update runs, what it is: for people on
// stderr (the head and the counts), or a "plan" event on stdout. A blocked
// update ends here with exit 1, as a run.
func announceUpgrade(s IOStreams, prog progress, u *clustersync.Upgrade, asJSON bool) error {
	if jp, ok := prog.(*jsonProgress); ok && asJSON {
		plan := upgradePlanJSON(u)
		jp.mu.Lock()
		defer jp.mu.Unlock()
		jp.emit(jsonEvent{Event: "plan", Plan: &plan})
		return nil
	}
	writeUpgradeHead(s.ErrOut, u)
	fmt.Fprintln(s.ErrOut, upgradeCounts(u))
	return nil
}
