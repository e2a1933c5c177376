package upgrade

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
)

// The preconditions, named as the CVO names them.
const (
	// CheckUpgradeable: Upgradeable=False on the ClusterVersion (which
	// sums up ClusterOperators that say Upgradeable=False, unacknowledged
	// admin gates, deletes in progress, overrides and an update in
	// progress) blocks a minor or major update, never a z-stream one.
	CheckUpgradeable = "ClusterVersionUpgradeable"
	// CheckGiantHop: a higher major version, or more than one minor
	// version at once, is refused.
	CheckGiantHop = "ClusterVersionGiantHop"
	// CheckRollback: a lower version is refused; the cluster's previous
	// version within a z-stream only when rollbacks are allowed.
	CheckRollback = "ClusterVersionRollback"
)

// Checks lists the preconditions in the order they run, the CVO's first,
// then what B's deletes take with them (takes.go).
var Checks = []string{CheckUpgradeable, CheckGiantHop, CheckRollback, CheckDeletesWhatItApplies, CheckDeletesOthers}

// Facts are what the preconditions look at.
type Facts struct {
	// Current is the release the cluster is reconciling towards (the
	// record's status.desired).
	Current configv1.Release
	// History is the record's history, newest first.
	History []configv1.UpdateHistory
	// Conditions are the record's conditions with the Upgradeable ones as
	// they stand now (clusterversion.UpgradeableConditions of the fresh
	// checks) and its Progressing.
	Conditions []configv1.ClusterOperatorStatusCondition
	// Overrides are the record's spec.overrides.
	Overrides []configv1.ComponentOverride
	// Target is B's version.
	Target string
	// AllowRollback lets a z-stream rollback to the previous version
	// pass.
	AllowRollback bool
}

// Verdict is the outcome of one precondition.
type Verdict struct {
	// Name is the check's name (CheckUpgradeable, ...).
	Name string
	// Passed: nothing to say. Otherwise Reason and Message say what is
	// wrong, and Warning says it does not block the update.
	Passed          bool
	Warning         bool
	Reason, Message string
	// Forced: it blocked and the caller forced it (see Summarize).
	Forced bool
}

// Blocks reports whether the verdict blocks the update (failed, not a
// warning, not forced).
func (v Verdict) Blocks() bool { return !v.Passed && !v.Warning && !v.Forced }

// Preconditions runs the checks on f, as the CVO's preconditions do
// (pkg/payload/precondition/clusterversion).
func Preconditions(f Facts) []Verdict {
	cur, curErr := semver.Parse(f.Current.Version)
	tgt, tgtErr := semver.Parse(f.Target)
	versions := func(name string) *Verdict {
		switch {
		case curErr != nil:
			return &Verdict{Name: name, Warning: true, Reason: "InvalidCurrentVersion", Message: fmt.Sprintf("current version %q: %v", f.Current.Version, curErr)}
		case tgtErr != nil:
			return &Verdict{Name: name, Reason: "InvalidDesiredVersion", Message: fmt.Sprintf("target version %q: %v", f.Target, tgtErr)}
		}
		return nil
	}
	var out []Verdict
	for _, check := range []func() Verdict{
		func() Verdict { return upgradeable(f, cur, tgt, versions) },
		func() Verdict { return giantHop(cur, tgt, versions) },
		func() Verdict { return rollback(f, cur, tgt, versions) },
	} {
		out = append(out, check())
	}
	return out
}

func upgradeable(f Facts, cur, tgt semver.Version, versions func(string) *Verdict) Verdict {
	v := Verdict{Name: CheckUpgradeable, Passed: true}
	up := clusterversion.FindCondition(f.Conditions, configv1.OperatorUpgradeable)
	if up == nil || up.Status != configv1.ConditionFalse {
		return v
	}
	if bad := versions(v.Name); bad != nil {
		return *bad
	}
	patchOnly := tgt.Major == cur.Major && tgt.Minor == cur.Minor
	if tgt.GT(cur) && !patchOnly {
		return Verdict{Name: v.Name, Reason: up.Reason, Message: up.Message}
	}
	// A z-stream update (or no update) passes Upgradeable=False; say so
	// when overrides leave objects unmanaged, or a minor update is still
	// in progress under it.
	if c := clusterversion.OverridesCheck(f.Overrides); c != nil {
		return Verdict{Name: v.Name, Warning: true, Reason: c.Reason,
			Message: fmt.Sprintf("Retarget from %s to %s is not blocked by %s, but the objects the overrides name are not managed: %s", cur, tgt, c.Reason, c.Message)}
	}
	if completed := clusterversion.CurrentVersion(f.History); completed != "" && patchOnly {
		if p := clusterversion.FindCondition(f.Conditions, configv1.OperatorProgressing); p != nil && p.Status == configv1.ConditionTrue {
			if t, err := clusterversion.UpdateTypeOf(completed, cur.String()); err == nil && (t == clusterversion.UpdateMinor || t == clusterversion.UpdateMajor) {
				kind := "Minor"
				if t == clusterversion.UpdateMajor {
					kind = "Major"
				}
				return Verdict{Name: v.Name, Warning: true, Reason: kind + "VersionClusterUpdateInProgress",
					Message: fmt.Sprintf("Retarget to %s while a %s version update from %s to %s is in progress", tgt, strings.ToLower(kind), completed, cur)}
			}
		}
	}
	return v
}

func giantHop(cur, tgt semver.Version, versions func(string) *Verdict) Verdict {
	v := Verdict{Name: CheckGiantHop, Passed: true}
	if bad := versions(v.Name); bad != nil {
		return *bad
	}
	switch {
	case tgt.Major > cur.Major && tgt.Major == 5 && cur.Major == 4 && tgt.Minor == 0:
		// The CVO lets 4.y go to 5.0.
	case tgt.Major > cur.Major:
		return Verdict{Name: v.Name, Reason: "MajorVersionUpdate",
			Message: fmt.Sprintf("%s has a larger major version than the current target %s (%d > %d), and only updates within the current major version are supported.", tgt, cur, tgt.Major, cur.Major)}
	case tgt.Minor > cur.Minor+1:
		return Verdict{Name: v.Name, Reason: "MultipleMinorVersionsUpdate",
			Message: fmt.Sprintf("%s is more than one minor version beyond the current target %s (%d.%d > %d.(%d+1)), and only updates within the current minor version or to the next minor version are supported.",
				tgt, cur, tgt.Major, tgt.Minor, cur.Major, cur.Minor)}
	}
	return v
}

func rollback(f Facts, cur, tgt semver.Version, versions func(string) *Verdict) Verdict {
	v := Verdict{Name: CheckRollback, Passed: true}
	if bad := versions(v.Name); bad != nil {
		return *bad
	}
	if !tgt.LT(cur) {
		return v
	}
	v = Verdict{Name: v.Name, Reason: "LowDesiredVersion"}
	// The previous version: the newest entry that is not the current
	// target.
	var prev *semver.Version
	var prevImage string
	for _, e := range f.History {
		if e.Version == cur.String() && e.Image == f.Current.Image {
			continue
		}
		if p, err := semver.Parse(e.Version); err == nil {
			prev, prevImage = &p, e.Image
		}
		break
	}
	switch {
	case prev == nil:
		v.Message = fmt.Sprintf("%s is less than the current target %s, and the cluster has no previous Semantic Version", tgt, cur)
	case !tgt.EQ(*prev):
		v.Message = fmt.Sprintf("%s is less than the current target %s, and the only supported rollback is to the cluster's previous version %s (%s)", tgt, cur, prev, prevImage)
	case prev.Major != cur.Major || prev.Minor != cur.Minor:
		v.Message = fmt.Sprintf("%s is less than the current target %s and matches the cluster's previous version, but rollbacks that change major or minor versions are not recommended", tgt, cur)
	case !f.AllowRollback:
		v.Message = fmt.Sprintf("%s is less than the current target %s and is the cluster's previous version within its z-stream: such a rollback has to be allowed explicitly", tgt, cur)
	default:
		return Verdict{Name: v.Name, Passed: true}
	}
	return v
}

// Summary is what the verdicts mean for the update, in the CVO's words
// (precondition.Summarize).
type Summary struct {
	// Blocked: a verdict blocks the update.
	Blocked bool
	// Message sums up the failed verdicts, forced or not ("" when all
	// passed): `Precondition "NAME" failed because of "REASON": MESSAGE`,
	// one per line under "Multiple precondition checks failed:" when
	// several; prefixed "Forced through blocking failures: " when every
	// blocking one was forced.
	Message string
	// AcceptedRisks is Message when the update goes ahead despite failed
	// verdicts (the history entry records it).
	AcceptedRisks string
}

// Summarize marks the verdicts force says to override (by name) as Forced
// and sums them up.
func Summarize(vs []Verdict, force func(name string) bool) Summary {
	var msgs []string
	blocking, forced := false, false
	for i := range vs {
		v := &vs[i]
		if v.Passed {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("Precondition %q failed because of %q: %s", v.Name, v.Reason, v.Message))
		if v.Warning {
			continue
		}
		if force != nil && force(v.Name) {
			v.Forced, forced = true, true
			continue
		}
		blocking = true
	}
	if len(msgs) == 0 {
		return Summary{}
	}
	msg := msgs[0]
	if len(msgs) > 1 {
		msg = "Multiple precondition checks failed:\n* " + strings.Join(msgs, "\n* ")
	}
	if blocking {
		return Summary{Blocked: true, Message: msg}
	}
	if forced {
		msg = "Forced through blocking failures: " + msg
	}
	return Summary{Message: msg, AcceptedRisks: msg}
}
