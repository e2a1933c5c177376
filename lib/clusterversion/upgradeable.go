package clusterversion

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Upgradeable sub-conditions, one per check, as the CVO names them
// (they are written only when more than one check fails).
const (
	UpgradeableAdminAckRequired        configv1.ClusterStatusConditionType = "UpgradeableAdminAckRequired"
	UpgradeableClusterOperators        configv1.ClusterStatusConditionType = "UpgradeableClusterOperators"
	UpgradeableDeletesInProgress       configv1.ClusterStatusConditionType = "UpgradeableDeletesInProgress"
	UpgradeableClusterVersionOverrides configv1.ClusterStatusConditionType = "UpgradeableClusterVersionOverrides"
	UpgradeableUpgradeInProgress       configv1.ClusterStatusConditionType = "UpgradeableUpgradeInProgress"
)

// Check is one failing upgradeability check: the sub-condition Type it
// sets, a Reason and a Message.
type Check struct {
	Type            configv1.ClusterStatusConditionType
	Reason, Message string
}

// UpgradeableConditions turns failing checks into the record's Upgradeable
// conditions, as the CVO does: none, no condition (the record's is
// removed); one, Upgradeable=False with its reason and message; several,
// each check's sub-condition plus Upgradeable=False "MultipleReasons".
// The result is sorted by type.
func UpgradeableConditions(checks []Check) []configv1.ClusterOperatorStatusCondition {
	if len(checks) == 0 {
		return nil
	}
	if len(checks) == 1 {
		return []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse,
			Reason: checks[0].Reason, Message: checks[0].Message}}
	}
	var out []configv1.ClusterOperatorStatusCondition
	reasons := make([]string, len(checks))
	msgs := make([]string, len(checks))
	for i, c := range checks {
		reasons[i], msgs[i] = c.Reason, c.Message
		out = append(out, configv1.ClusterOperatorStatusCondition{Type: c.Type, Status: configv1.ConditionFalse, Reason: c.Reason, Message: c.Message})
	}
	out = append(out, configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: "MultipleReasons",
		Message: fmt.Sprintf("Cluster should not be upgraded between minor or major versions for multiple reasons: %s\n* %s", strings.Join(reasons, ","), strings.Join(msgs, "\n* "))})
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// SetUpgradeable replaces the Upgradeable conditions (Upgradeable and its
// Upgradeable* sub-conditions) of conds with want (see SetCondition for
// now).
func SetUpgradeable(conds *[]configv1.ClusterOperatorStatusCondition, want []configv1.ClusterOperatorStatusCondition, now metav1.Time) {
	keep := map[configv1.ClusterStatusConditionType]bool{}
	for _, c := range want {
		keep[c.Type] = true
		SetCondition(conds, c, now)
	}
	for _, c := range append([]configv1.ClusterOperatorStatusCondition(nil), *conds...) {
		if strings.HasPrefix(string(c.Type), string(configv1.OperatorUpgradeable)) && !keep[c.Type] {
			RemoveCondition(conds, c.Type)
		}
	}
}

// OperatorUpgradeable is a ClusterOperator's Upgradeable condition.
type OperatorUpgradeable struct {
	Name      string
	Condition configv1.ClusterOperatorStatusCondition
}

// ClusterOperatorsCheck fails when ClusterOperators say Upgradeable=False:
// with one, its reason and "Cluster operator X should not be upgraded
// between minor or major versions: MESSAGE"; with several,
// ClusterOperatorsNotUpgradeable and one line each. Nil when none does.
func ClusterOperatorsCheck(ops []OperatorUpgradeable) *Check {
	var not []OperatorUpgradeable
	for _, op := range ops {
		if op.Condition.Status == configv1.ConditionFalse {
			not = append(not, op)
		}
	}
	if len(not) == 0 {
		return nil
	}
	sort.Slice(not, func(i, j int) bool { return not[i].Name < not[j].Name })
	c := &Check{Type: UpgradeableClusterOperators}
	if len(not) == 1 {
		c.Reason = not[0].Condition.Reason
		c.Message = fmt.Sprintf("Cluster operator %s should not be upgraded between minor or major versions: %s", not[0].Name, not[0].Condition.Message)
		return c
	}
	lines := make([]string, len(not))
	for i, op := range not {
		lines[i] = fmt.Sprintf("Cluster operator %s should not be upgraded between minor or major versions: %s: %s", op.Name, op.Condition.Reason, op.Condition.Message)
	}
	c.Reason = "ClusterOperatorsNotUpgradeable"
	c.Message = "Multiple cluster operators should not be upgraded between minor or major versions:\n* " + strings.Join(lines, "\n* ")
	return c
}

// DeletesCheck fails while resources the release deletes still exist
// (reason ResourceDeletesInProgress); resources are "Kind ns/name".
func DeletesCheck(resources []string) *Check {
	if len(resources) == 0 {
		return nil
	}
	rs := append([]string(nil), resources...)
	sort.Strings(rs)
	return &Check{Type: UpgradeableDeletesInProgress, Reason: "ResourceDeletesInProgress",
		Message: "Cluster minor or major version upgrades are not allowed while resource deletions are in progress; resources=" + strings.Join(rs, ",")}
}

// OverridesCheck fails when a ClusterVersion override makes an object
// unmanaged (reason ClusterVersionOverridesSet).
func OverridesCheck(overrides []configv1.ComponentOverride) *Check {
	for _, o := range overrides {
		if o.Unmanaged {
			return &Check{Type: UpgradeableClusterVersionOverrides, Reason: "ClusterVersionOverridesSet",
				Message: "Disabling ownership via cluster version overrides prevents upgrades between minor or major versions. Please remove overrides before requesting a minor or major version update."}
		}
	}
	return nil
}

// UpdateInProgressCheck fails while an update is in progress (the record
// says Progressing=True): reason UpdateInProgress.
func UpdateInProgressCheck(conds []configv1.ClusterOperatorStatusCondition) *Check {
	if c := FindCondition(conds, configv1.OperatorProgressing); c != nil && c.Status == configv1.ConditionTrue {
		return &Check{Type: UpgradeableUpgradeInProgress, Reason: "UpdateInProgress",
			Message: "An update is already in progress and the details are in the Progressing condition"}
	}
	return nil
}

// adminGateRE is the name of an admin gate: ack-<major>.<minor>-<text>.
var adminGateRE = regexp.MustCompile(`^ack-[4-5][.]([0-9]{1,})-[^-]`)

// AdminAcksCheck fails when admin gates that apply to the current version
// are not acknowledged, as the CVO checks them: gates are the data of
// openshift-config-managed/admin-gates, named ack-<major.minor>-<text>
// with a description; a gate applies when its minor is the current
// version's; it is acknowledged when openshift-config/admin-acks has the
// gate's key set to "true". A gate with a bad name or an empty value is a
// failure of its own. gates or acks nil means the ConfigMap is missing
// (UnableToAccessAdminGatesConfigMap, UnableToAccessAdminAcksConfigMap). An
// empty current version (nothing installed yet) checks nothing.
func AdminAcksCheck(current string, gates, acks map[string]string) *Check {
	if current == "" {
		return nil
	}
	c := &Check{Type: UpgradeableAdminAckRequired}
	switch {
	case gates == nil:
		c.Reason, c.Message = "UnableToAccessAdminGatesConfigMap", "admin-gates configmap not found."
		return c
	case acks == nil:
		c.Reason, c.Message = "UnableToAccessAdminAcksConfigMap", "admin-acks configmap not found."
		return c
	}
	byReason := map[string][]string{}
	for name, value := range gates {
		m := adminGateRE.FindStringSubmatch(name)
		switch {
		case m == nil:
			byReason["AdminAckConfigMapGateNameError"] = append(byReason["AdminAckConfigMapGateNameError"],
				fmt.Sprintf("admin-gates configmap gate name %s has invalid format; must comply with %q.", name, adminGateRE.String()))
		case m[1] != minorOf(current):
		case value == "":
			byReason["AdminAckConfigMapGateValueError"] = append(byReason["AdminAckConfigMapGateValueError"],
				fmt.Sprintf("admin-gates configmap gate %s must contain a non-empty value.", name))
		case acks[name] != "true":
			byReason["AdminAckRequired"] = append(byReason["AdminAckRequired"], value)
		}
	}
	if len(byReason) == 0 {
		return nil
	}
	var reasons, msgs []string
	for r, ms := range byReason {
		sort.Strings(ms)
		reasons = append(reasons, r)
		msgs = append(msgs, strings.Join(ms, " "))
	}
	sort.Strings(msgs)
	if len(reasons) == 1 {
		c.Reason = reasons[0]
	} else {
		c.Reason = "MultipleReasons"
	}
	c.Message = strings.Join(msgs, " ")
	return c
}
