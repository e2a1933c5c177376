package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func mustParseOne(t *testing.T, annotations map[string]string) *Manifest {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: ns\n")
	if annotations != nil {
		b.WriteString("  annotations:\n")
		for k, v := range annotations {
			b.WriteString("    " + k + ": \"" + v + "\"\n")
		}
	}
	ms, err := Parse("f.yaml", []byte(b.String()), ParseOptions{})
	if err != nil || len(ms) != 1 {
		t.Fatalf("parse: %v (%d manifests)", err, len(ms))
	}
	return &ms[0]
}

func ptr[T any](v T) *T { return &v }

func TestSelectorInclude(t *testing.T) {
	const (
		sno  = "single-node-developer"
		ha   = "self-managed-high-availability"
		crc  = "crc"
		inc  = IncludePrefix
		tech = "TechPreviewNoUpgrade"
	)
	tests := []struct {
		name        string
		annotations map[string]string
		sel         Selector
		want        Decision
	}{
		{name: "no annotations", sel: Selector{}, want: Decision{Reason: "no annotations"}},
		{name: "profile match", annotations: map[string]string{inc + ha: "true"}, sel: Selector{Profiles: []string{ha}}, want: Decision{Included: true, Matched: inc + ha}},
		{name: "profile unset", annotations: map[string]string{inc + sno: "true"}, sel: Selector{Profiles: []string{ha}}, want: Decision{Reason: inc + ha + " unset"}},
		{name: "profile not true", annotations: map[string]string{inc + ha: "false"}, sel: Selector{Profiles: []string{ha}}, want: Decision{Reason: "unrecognized value " + inc + ha + "=false"}},
		{name: "no profile filter", annotations: map[string]string{inc + sno: "true"}, sel: Selector{}, want: Decision{Included: true}},
		{name: "derived profile: own annotation", annotations: map[string]string{inc + crc: "true"}, sel: Selector{Profiles: []string{crc, sno}}, want: Decision{Included: true, Matched: inc + crc}},
		{name: "derived profile: parent annotation", annotations: map[string]string{inc + sno: "true"}, sel: Selector{Profiles: []string{crc, sno}}, want: Decision{Included: true, Matched: inc + sno}},
		{name: "derived profile: nearest wins", annotations: map[string]string{inc + sno: "true", inc + crc: "false"}, sel: Selector{Profiles: []string{crc, sno}}, want: Decision{Reason: "unrecognized value " + inc + crc + "=false"}},
		{name: "derived profile: none", annotations: map[string]string{inc + ha: "true"}, sel: Selector{Profiles: []string{crc, sno}}, want: Decision{Reason: inc + crc + ", " + inc + sno + " unset"}},
		{name: "derived profile: other filters first", annotations: map[string]string{inc + sno: "true", FeatureSetAnnotation: tech}, sel: Selector{Profiles: []string{crc, sno}, FeatureSet: ptr("Default")}, want: Decision{Reason: `"Default" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade`}},
		{name: "feature set match", annotations: map[string]string{inc + ha: "true", FeatureSetAnnotation: "Default,TechPreviewNoUpgrade"}, sel: Selector{Profiles: []string{ha}, FeatureSet: ptr(tech)}, want: Decision{Included: true, Matched: inc + ha}},
		{name: "feature gate required", annotations: map[string]string{inc + ha: "true", FeatureGateAnnotation: "A"}, sel: Selector{Profiles: []string{ha}, FeatureGates: sets.New("B")}, want: Decision{Reason: "feature gate A is required but not enabled"}},
		{name: "feature gate negated", annotations: map[string]string{inc + ha: "true", FeatureGateAnnotation: "-A"}, sel: Selector{Profiles: []string{ha}, FeatureGates: sets.New("A")}, want: Decision{Reason: "feature gate A is enabled but manifest requires it to be disabled"}},
		{name: "exclude id", annotations: map[string]string{inc + ha: "true", ExcludePrefix + "x": "true"}, sel: Selector{Profiles: []string{ha}, ExcludeID: ptr("x")}, want: Decision{Reason: "exclude.release.openshift.io/x=true"}},
		{name: "capability disabled", annotations: map[string]string{inc + ha: "true", CapabilityAnnotation: "Console"},
			sel:  Selector{Profiles: []string{ha}, Capabilities: &configv1.ClusterVersionCapabilitiesStatus{KnownCapabilities: []configv1.ClusterVersionCapability{"Console"}}},
			want: Decision{Reason: "disabled capabilities: Console"}},
		{name: "override unmanaged", annotations: map[string]string{inc + ha: "true"},
			sel:  Selector{Profiles: []string{ha}, Overrides: []configv1.ComponentOverride{{Kind: "ConfigMap", Namespace: "ns", Name: "cm", Unmanaged: true}}},
			want: Decision{Reason: "overridden"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustParseOne(t, tc.annotations)
			got := tc.sel.Include(m)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			// With at most one profile, the decision is library-go's.
			if len(tc.sel.Profiles) <= 1 {
				var profile *string
				if len(tc.sel.Profiles) == 1 {
					profile = &tc.sel.Profiles[0]
				}
				lg := m.Manifest.Include(tc.sel.ExcludeID, tc.sel.FeatureSet, profile, tc.sel.Capabilities, tc.sel.Overrides, tc.sel.FeatureGates, tc.sel.MajorVersion)
				if (lg == nil) != got.Included {
					t.Errorf("library-go says %v, Selector says included=%v", lg, got.Included)
				}
			}
		})
	}
}
