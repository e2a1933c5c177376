package platformoperators

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestInstalledCondition(t *testing.T) {
	c := func(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
	}
	valid := func(s metav1.ConditionStatus, reason string) metav1.Condition {
		return c(BundleConditionHasValidBundle, s, reason, "unpack says "+reason)
	}
	installed := func(s metav1.ConditionStatus, reason string) metav1.Condition {
		return c(BundleConditionInstalled, s, reason, "install says "+reason)
	}
	cases := []struct {
		name  string
		conds []metav1.Condition
		want  metav1.Condition
	}{
		{"no conditions", nil,
			c(ConditionInstalled, "False", ReasonUnpackPending, "waiting for BundleDeployment bd to unpack its bundle")},
		{"HasValidBundle Unknown", []metav1.Condition{valid("Unknown", "Pending")},
			c(ConditionInstalled, "False", ReasonUnpackPending, "waiting for BundleDeployment bd to unpack its bundle")},
		{"unpack pending", []metav1.Condition{valid("False", "UnpackPending")},
			c(ConditionInstalled, "False", ReasonUnpackPending, "BundleDeployment bd: UnpackPending: unpack says UnpackPending")},
		{"unpacking", []metav1.Condition{valid("False", "Unpacking")},
			c(ConditionInstalled, "False", ReasonUnpackPending, "BundleDeployment bd: Unpacking: unpack says Unpacking")},
		{"unpack failed", []metav1.Condition{valid("False", "UnpackFailed"), installed("True", "InstallationSucceeded")},
			c(ConditionInstalled, "False", ReasonInstallFailed, "BundleDeployment bd: HasValidBundle=False: UnpackFailed: unpack says UnpackFailed")},
		{"unpacked, not installed yet", []metav1.Condition{valid("True", "UnpackSuccessful")},
			c(ConditionInstalled, "False", ReasonInstallPending, "waiting for BundleDeployment bd to install its bundle")},
		{"unpacked, Installed Unknown", []metav1.Condition{valid("True", "UnpackSuccessful"), installed("Unknown", "InstallationStatusUnknown")},
			c(ConditionInstalled, "False", ReasonInstallPending, "waiting for BundleDeployment bd to install its bundle")},
		{"install failed", []metav1.Condition{valid("True", "UnpackSuccessful"), installed("False", "InstallFailed")},
			c(ConditionInstalled, "False", ReasonInstallFailed, "BundleDeployment bd: Installed=False: InstallFailed: install says InstallFailed")},
		{"installed", []metav1.Condition{installed("True", "InstallationSucceeded"), valid("True", "UnpackSuccessful")},
			c(ConditionInstalled, "True", ReasonInstallSuccessful, "BundleDeployment bd installed the bundle")},
		{"installed but no HasValidBundle", []metav1.Condition{installed("True", "InstallationSucceeded")},
			c(ConditionInstalled, "False", ReasonUnpackPending, "waiting for BundleDeployment bd to unpack its bundle")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, InstalledCondition("bd", tc.conds)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestInstalledConditionClipsRukpakMessages: rukpak's message (up to 32768
// characters) is carried clipped, so the PlatformOperator's condition stays
// within its CRD's maxLength with room to spare.
func TestInstalledConditionClipsRukpakMessages(t *testing.T) {
	long := strings.Repeat("é", 20000) // 40000 bytes
	got := InstalledCondition("bd", []metav1.Condition{{Type: BundleConditionHasValidBundle, Status: "False", Reason: "UnpackFailed", Message: long}})
	if len(got.Message) > MaxCarriedMessage+100 || !utf8.ValidString(got.Message) {
		t.Fatalf("message of %d bytes (valid UTF-8: %v)", len(got.Message), utf8.ValidString(got.Message))
	}
	if want := "BundleDeployment bd: HasValidBundle=False: UnpackFailed: éé"; !strings.HasPrefix(got.Message, want) {
		t.Errorf("message %.80q, want prefix %q", got.Message, want)
	}
	if want := "... (38976 more bytes)"; !strings.HasSuffix(got.Message, want) {
		t.Errorf("message ends %q, want %q", got.Message[len(got.Message)-30:], want)
	}
}
