package platformoperators

import (
	"fmt"

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
// Failure messages carry the BundleDeployment's reason and message.
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
			return c(metav1.ConditionFalse, ReasonUnpackPending, "BundleDeployment %s: %s: %s", bd, valid.Reason, valid.Message)
		}
		return c(metav1.ConditionFalse, ReasonInstallFailed, "BundleDeployment %s: %s=False: %s: %s", bd, BundleConditionHasValidBundle, valid.Reason, valid.Message)
	}
	installed := meta.FindStatusCondition(conds, BundleConditionInstalled)
	switch {
	case installed == nil || installed.Status == metav1.ConditionUnknown:
		return c(metav1.ConditionFalse, ReasonInstallPending, "waiting for BundleDeployment %s to install its bundle", bd)
	case installed.Status != metav1.ConditionTrue:
		return c(metav1.ConditionFalse, ReasonInstallFailed, "BundleDeployment %s: %s=False: %s: %s", bd, BundleConditionInstalled, installed.Reason, installed.Message)
	}
	return c(metav1.ConditionTrue, ReasonInstallSuccessful, "BundleDeployment %s installed the bundle", bd)
}
