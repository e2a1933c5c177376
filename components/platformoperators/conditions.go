package platformoperators

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InstalledCondition derives a PlatformOperator's Installed condition from
// the conditions of its BundleDeployment bd (rukpak's HasValidBundle, then
// Installed), without LastTransitionTime:
//
//	HasValidBundle missing or Unknown            False UnpackPending
//	HasValidBundle False, UnpackPending/Unpacking False UnpackPending
//	HasValidBundle False, any other reason       False InstallFailed
//	HasValidBundle True, Installed missing/Unknown False InstallPending
//	HasValidBundle True, Installed False         False InstallFailed
//	HasValidBundle True, Installed True          True  InstallSuccessful
//
// The reasons stay the five the seed names: rukpak's own reason (upstream
// copies it, e.g. UnpackFailed) is in the message, which carries the
// BundleDeployment's name, the failing condition, its reason and its
// message (clipped to MaxCarriedMessage).
func InstalledCondition(bd string, conds []metav1.Condition) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: ConditionInstalled, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	valid := meta.FindStatusCondition(conds, BundleConditionHasValidBundle)
	switch {
	case valid == nil || valid.Status == metav1.ConditionUnknown:
		return c(metav1.ConditionFalse, ReasonUnpackPending, "waiting for BundleDeployment %s to unpack its bundle", bd)
	case valid.Status != metav1.ConditionTrue:
		if valid.Reason == bundleReasonUnpackPending || valid.Reason == bundleReasonUnpacking {
			return c(metav1.ConditionFalse, ReasonUnpackPending, "BundleDeployment %s: %s: %s", bd, valid.Reason, clip(valid.Message, MaxCarriedMessage))
		}
		return c(metav1.ConditionFalse, ReasonInstallFailed, "BundleDeployment %s: %s=False: %s: %s", bd, BundleConditionHasValidBundle, valid.Reason, clip(valid.Message, MaxCarriedMessage))
	}
	installed := meta.FindStatusCondition(conds, BundleConditionInstalled)
	switch {
	case installed == nil || installed.Status == metav1.ConditionUnknown:
		return c(metav1.ConditionFalse, ReasonInstallPending, "waiting for BundleDeployment %s to install its bundle", bd)
	case installed.Status != metav1.ConditionTrue:
		return c(metav1.ConditionFalse, ReasonInstallFailed, "BundleDeployment %s: %s=False: %s: %s", bd, BundleConditionInstalled, installed.Reason, clip(installed.Message, MaxCarriedMessage))
	}
	return c(metav1.ConditionTrue, ReasonInstallSuccessful, "BundleDeployment %s installed the bundle", bd)
}

// MaxCarriedMessage bounds, in bytes, a message the component copies from
// another object into its own condition: rukpak's messages into a
// PlatformOperator's (whose CRD allows 32768 characters), each
// PlatformOperator's into the aggregate ClusterOperator's.
const MaxCarriedMessage = 1024

// clip returns s cut to at most n bytes at a rune boundary, saying how
// much was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d more bytes)", s[:cut], len(s)-cut)
}
