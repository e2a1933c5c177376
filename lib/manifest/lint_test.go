package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testProfiles = []string{"hypershift", "ibm-cloud-managed", "self-managed-high-availability", "single-node-developer"}

func TestLint(t *testing.T) {
	ha := IncludePrefix + "self-managed-high-availability"
	tests := []struct {
		name        string
		annotations map[string]string
		want        []string // "severity: message prefix"
	}{
		{name: "clean", annotations: map[string]string{ha: "true", CapabilityAnnotation: "Ingress"}},
		{name: "no annotations", want: []string{"warning: ConfigMap/ns/cm has no annotations"}},
		{name: "no profile annotation", annotations: map[string]string{FeatureSetAnnotation: "Default"}, want: []string{"warning: ConfigMap/ns/cm has no include.release.openshift.io/<profile> annotation"}},
		{name: "misspelt profile", annotations: map[string]string{IncludePrefix + "self-managed-high-availabilty": "true"},
			want: []string{`error: annotation include.release.openshift.io/self-managed-high-availabilty names an unknown profile "self-managed-high-availabilty" (did you mean "self-managed-high-availability"?)`}},
		{name: "unknown profile", annotations: map[string]string{IncludePrefix + "edge": "true"}, want: []string{`warning: annotation include.release.openshift.io/edge names an unknown profile "edge" (known:`}},
		{name: "value not true", annotations: map[string]string{ha: "false-except-for-the-config-operator"}, want: []string{`warning: annotation ` + ha + `="false-except-for-the-config-operator" is not "true"`}},
		{name: "misspelt release key", annotations: map[string]string{ha: "true", "release.openshift.io/feature-sets": "Default"}, want: []string{"error: unknown annotation release.openshift.io/feature-sets (did you mean release.openshift.io/feature-set?)"}},
		{name: "misspelt domain", annotations: map[string]string{ha: "true", "relase.openshift.io/feature-set": "Default"}, want: []string{"error: annotation relase.openshift.io/feature-set looks like a misspelling of release.openshift.io/feature-set"}},
		{name: "misspelt capability key", annotations: map[string]string{ha: "true", "capability.openshift.io/nme": "Ingress"}, want: []string{"error: unknown annotation capability.openshift.io/nme (did you mean capability.openshift.io/name?)"}},
		{name: "unknown capability", annotations: map[string]string{ha: "true", CapabilityAnnotation: "Ingress+Consol"}, want: []string{`warning: annotation capability.openshift.io/name names an unknown capability "Consol" (did you mean "Console"?)`}},
		{name: "unknown feature set", annotations: map[string]string{ha: "true", FeatureSetAnnotation: "Default,TechPreview"}, want: []string{`error: annotation release.openshift.io/feature-set names an unknown feature set "TechPreview"`}},
		{name: "feature set and gate", annotations: map[string]string{ha: "true", FeatureSetAnnotation: "Default", FeatureGateAnnotation: "NoSuchGate"}, want: []string{`warning: annotation release.openshift.io/feature-gate names an unknown feature gate "NoSuchGate"`, "error: both release.openshift.io/feature-set and release.openshift.io/feature-gate are set"}},
		{name: "major version on a ConfigMap", annotations: map[string]string{ha: "true", MajorVersionAnnotation: "4"}, want: []string{"error: annotation release.openshift.io/major-version is only supported on CustomResourceDefinitions and FeatureGates"}},
		{name: "create-only not true", annotations: map[string]string{ha: "true", CreateOnlyAnnotation: "yes"}, want: []string{`warning: annotation release.openshift.io/create-only="yes" is not "true"`}},
		{name: "other domains are not linted", annotations: map[string]string{ha: "true", "openshift.io/node-selector": "", "include.example.com/x": "y"}},
	}
	l := NewLinter(testProfiles)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustParseOne(t, tc.annotations)
			var got []string
			for _, f := range l.Lint(m) {
				if f.File != "f.yaml" || f.Doc != 0 {
					t.Errorf("finding position %s#%d", f.File, f.Doc)
				}
				got = append(got, string(f.Severity)+": "+f.Message)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("finding %d:\n got %s\nwant %s...", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestDuplicateKeys(t *testing.T) {
	data := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\ndata:\n  x: \"1\"\n  y2: \"2\"\n  x: \"3\"\n"
	docs, err := SplitDocuments([]byte("# header\n---\n" + data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		for _, f := range DuplicateKeys("f.yaml", d) {
			got = append(got, f.String())
		}
	}
	want := []string{
		`f.yaml#0: warning: line 7: key "name" repeated in metadata (first at line 6): the last value wins`,
		`f.yaml#0: warning: line 11: key "x" repeated in data (first at line 9): the last value wins`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"feature-set", "feature-sets", 1}, {"relase", "release", 1}} {
		if got := levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
