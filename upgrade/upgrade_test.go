package upgrade

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
)

// cm is a ConfigMap manifest of a payload file, included for the default
// profile; extra annotations are "key: value" lines.
func cm(file, name, data string, annotations ...string) string {
	ann := "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
	for _, a := range annotations {
		ann += "    " + a + "\n"
	}
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: ns\n  annotations:\n%sdata:\n  k: %q\n", name, ann, data)
}

// release is a payload of version with files.
func release(version string, files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"release-manifests/release-metadata": {Data: []byte(fmt.Sprintf(`{"kind":"cincinnati-metadata-v0","version":%q}`, version))},
		"release-manifests/image-references": {Data: []byte(fmt.Sprintf(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":%q},"spec":{"tags":[]}}`, version))},
	}
	for name, body := range files {
		fsys["release-manifests/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

func build(t *testing.T, fsys fstest.MapFS, caps ...string) *plan.Plan {
	t.Helper()
	opts := plan.Options{Payload: fsys, SkipOverlays: true}
	if caps != nil {
		opts.Capabilities, opts.BaselineCapabilitySet, opts.AdditionalCapabilities = true, "None", caps
	}
	p, err := plan.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func names(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID.Name)
	}
	return out
}

func TestCompare(t *testing.T) {
	a := build(t, release("4.22.0", map[string]string{
		"0000_50_x_01_same.yaml":    cm("", "same", "1"),
		"0000_50_x_02_changed.yaml": cm("", "changed", "1"),
		"0000_50_x_03_gone.yaml":    cm("", "gone", "1"),
		"0000_50_x_04_dropped.yaml": cm("", "dropped", "1"),
		"0000_50_x_05_moved.yaml":   cm("", "moved", "1"),
		"0000_50_x_07_once.yaml":    cm("", "once", "1", `release.openshift.io/create-only: "true"`),
		"0000_50_x_08_gone.yaml":    cm("", "long-gone", "1", `release.openshift.io/delete: "true"`),
	}))
	b := build(t, release("4.22.1", map[string]string{
		"0000_50_x_01_same.yaml":    cm("", "same", "1"),
		"0000_50_x_02_changed.yaml": cm("", "changed", "2"),
		"0000_50_x_03_gone.yaml":    cm("", "gone", "1", `release.openshift.io/delete: "true"`),
		"0000_70_y_05_moved.yaml":   cm("", "moved", "1"),
		"0000_50_x_06_new.yaml":     cm("", "new", "1"),
		"0000_50_x_07_once.yaml":    cm("", "once", "2", `release.openshift.io/create-only: "true"`),
		"0000_50_x_08_gone.yaml":    cm("", "long-gone", "1", `release.openshift.io/delete: "true"`),
	}))
	c := Compare(a.Selection.Included, b.Selection.Included)
	got := map[string][]string{"creates": names(c.Creates), "changes": names(c.Changes), "kept": names(c.Kept), "deletes": names(c.Deletes),
		"orphans": names(c.Orphans), "moves": names(c.Moves)}
	want := map[string][]string{"creates": {"new"}, "changes": {"changed"}, "kept": {"once"}, "deletes": {"gone"}, "orphans": {"dropped"}, "moves": {"moved"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if c.Unchanged != 2 || c.Deleted != 1 {
		t.Errorf("%d unchanged, %d deleted already; want 2 (same, moved) and 1 (long-gone)", c.Unchanged, c.Deleted)
	}
	if p := PlaceOf(c.Moves[0].To); p != (Place{Level: 70, Component: "y"}) {
		t.Errorf("moved to %+v", p)
	}
}

func TestImplicitlyEnabled(t *testing.T) {
	// A runs "console-config" without a capability; B puts it under
	// Console, which the cluster has not enabled: Console becomes
	// implicitly enabled. "other" was never included, so it enables
	// nothing.
	a := build(t, release("4.22.0", map[string]string{
		"0000_50_x_01.yaml": cm("", "console-config", "1"),
		"0000_50_x_02.yaml": cm("", "other", "1", `capability.openshift.io/name: Insights`),
	}), "Ingress")
	bFiles := map[string]string{
		"0000_50_x_01.yaml": cm("", "console-config", "1", `capability.openshift.io/name: Console`),
		"0000_50_x_02.yaml": cm("", "other", "1", `capability.openshift.io/name: Insights+Build`),
		"0000_50_x_03.yaml": cm("", "console-more", "1", `capability.openshift.io/name: Console`),
	}
	b := build(t, release("4.22.1", bFiles), "Ingress")
	caps := clusterversion.Capabilities{Enabled: []configv1.ClusterVersionCapability{"Ingress"}}
	got := ImplicitlyEnabled(a, b, caps)
	want := []Implicit{{Capability: "Console", Object: manifest.ID{Kind: "ConfigMap", Namespace: "ns", Name: "console-config"},
		To: []configv1.ClusterVersionCapability{"Console"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("implicitly enabled (-want +got):\n%s", diff)
	}
	// With Console enabled B includes both Console objects.
	b2 := build(t, release("4.22.1", bFiles), "Ingress", "Console")
	if n := len(b2.Selection.Included); n != 2 {
		t.Errorf("B with Console includes %d objects, want 2", n)
	}
	if got := ImplicitlyEnabled(a, b2, caps.WithImplicit(Capabilities(got))); got != nil {
		t.Errorf("already enabled: %v", got)
	}
}

func TestPreconditions(t *testing.T) {
	notUpgradeable := clusterversion.UpgradeableConditions([]clusterversion.Check{{Type: clusterversion.UpgradeableClusterOperators,
		Reason: "APIRemoved", Message: "Cluster operator kube-apiserver should not be upgraded between minor or major versions: APIs go"}})
	cur := configv1.Release{Version: "4.22.1", Image: "/b@sha256:b"}
	history := []configv1.UpdateHistory{{State: configv1.CompletedUpdate, Version: "4.22.1", Image: "/b@sha256:b"}, {State: configv1.CompletedUpdate, Version: "4.22.0", Image: "/a@sha256:a"}}
	tests := []struct {
		name   string
		facts  Facts
		failed map[string]string // name -> reason; warnings prefixed "warning "
	}{
		{name: "z-stream passes Upgradeable=False", facts: Facts{Current: cur, History: history, Conditions: notUpgradeable, Target: "4.22.2"}},
		{name: "minor blocked by Upgradeable=False", facts: Facts{Current: cur, History: history, Conditions: notUpgradeable, Target: "4.23.0"},
			failed: map[string]string{CheckUpgradeable: "APIRemoved"}},
		{name: "minor passes when upgradeable", facts: Facts{Current: cur, History: history, Target: "4.23.0"}},
		{name: "two minors at once", facts: Facts{Current: cur, History: history, Target: "4.24.0"}, failed: map[string]string{CheckGiantHop: "MultipleMinorVersionsUpdate"}},
		{name: "major", facts: Facts{Current: cur, History: history, Target: "5.1.0"}, failed: map[string]string{CheckGiantHop: "MajorVersionUpdate"}},
		{name: "4 to 5.0 passes the giant hop", facts: Facts{Current: cur, History: history, Target: "5.0.0"}},
		{name: "downgrade to another version", facts: Facts{Current: cur, History: history, Target: "4.21.9"}, failed: map[string]string{CheckRollback: "LowDesiredVersion"}},
		{name: "z-stream rollback needs to be allowed", facts: Facts{Current: cur, History: history, Target: "4.22.0"}, failed: map[string]string{CheckRollback: "LowDesiredVersion"}},
		{name: "z-stream rollback allowed", facts: Facts{Current: cur, History: history, Target: "4.22.0", AllowRollback: true}},
		{name: "target without a version", facts: Facts{Current: cur, History: history, Conditions: notUpgradeable, Target: ""},
			failed: map[string]string{CheckUpgradeable: "InvalidDesiredVersion", CheckGiantHop: "InvalidDesiredVersion", CheckRollback: "InvalidDesiredVersion"}},
		{name: "overrides only warn on a z-stream", facts: Facts{Current: cur, History: history, Conditions: notUpgradeable, Target: "4.22.2",
			Overrides: []configv1.ComponentOverride{{Unmanaged: true}}}, failed: map[string]string{CheckUpgradeable: "warning ClusterVersionOverridesSet"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, v := range Preconditions(tc.facts) {
				switch {
				case v.Passed:
				case v.Warning:
					got[v.Name] = "warning " + v.Reason
				default:
					got[v.Name] = v.Reason
				}
			}
			if tc.failed == nil {
				tc.failed = map[string]string{}
			}
			if diff := cmp.Diff(tc.failed, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	vs := func() []Verdict {
		return []Verdict{{Name: CheckUpgradeable, Reason: "AdminAckRequired", Message: "ack it"}, {Name: CheckGiantHop, Passed: true},
			{Name: CheckRollback, Warning: true, Reason: "InvalidCurrentVersion", Message: "bad"}}
	}
	s := Summarize(vs(), nil)
	if !s.Blocked || !strings.HasPrefix(s.Message, "Multiple precondition checks failed:\n* Precondition \"ClusterVersionUpgradeable\" failed because of \"AdminAckRequired\": ack it") || s.AcceptedRisks != "" {
		t.Errorf("not forced: %+v", s)
	}
	forced := vs()
	s = Summarize(forced, func(n string) bool { return n == CheckUpgradeable })
	if s.Blocked || !strings.HasPrefix(s.AcceptedRisks, "Forced through blocking failures: Multiple precondition checks failed") || !forced[0].Forced {
		t.Errorf("forced: %+v %+v", s, forced[0])
	}
	if s := Summarize([]Verdict{{Name: CheckGiantHop, Passed: true}}, nil); s != (Summary{}) {
		t.Errorf("all passed: %+v", s)
	}
	if s := Summarize(vs(), func(n string) bool { return n == CheckGiantHop }); !s.Blocked {
		t.Errorf("forcing another check unblocked it: %+v", s)
	}
}
