package manifest

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// fuzzSelector builds a Selector from fuzzed strings: a profile chain
// (comma separated, nearest first), a feature set, gates (comma
// separated; "!" alone means no gate filter) and capabilities (comma
// separated enabled ones; "" means no capability filter).
func fuzzSelector(chain, featureSet, gates, caps string) *Selector {
	s := &Selector{FeatureSet: &featureSet}
	major := uint64(4)
	s.MajorVersion = &major
	if chain != "" {
		s.Profiles = strings.Split(chain, ",")
	}
	if gates != "!" {
		s.FeatureGates = sets.New(strings.Split(gates, ",")...)
	}
	if caps != "" {
		enabled := []configv1.ClusterVersionCapability{}
		for _, c := range strings.Split(caps, ",") {
			enabled = append(enabled, configv1.ClusterVersionCapability(c))
		}
		known := append(append([]configv1.ClusterVersionCapability(nil), enabled...), "baremetal", "Console", "Insights")
		s.Capabilities = &configv1.ClusterVersionCapabilitiesStatus{EnabledCapabilities: enabled, KnownCapabilities: known}
	}
	return s
}

// FuzzInclude decides fuzzed manifests (the real payload's documents as
// seeds) for fuzzed clusters and checks the decision against library-go's
// Manifest.Include: a chain of profiles decides as library-go does for the
// nearest profile the manifest is annotated for (or for the farthest when
// it is annotated for none), a decision is consistent (a reason exactly
// when excluded, a matched annotation that is "true"), and a manifest any
// selector includes, the filterless selector includes too.
func FuzzInclude(f *testing.F) {
	add := func(doc []byte) {
		f.Add(doc, "single-node-developer,self-managed-high-availability", "Default", "!", "")
		f.Add(doc, "self-managed-high-availability", "TechPreviewNoUpgrade", "GateA,GateB", "baremetal,Console")
	}
	add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    include.release.openshift.io/a: \"true\"\n    include.release.openshift.io/b: \"false\"\n    release.openshift.io/feature-set: Default,TechPreviewNoUpgrade\n    capability.openshift.io/name: baremetal+Console\n"))
	add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    release.openshift.io/feature-gate: GateA,-GateB\n    exclude.release.openshift.io/internal-openshift-hosted: \"true\"\n"))
	for _, file := range realpayload.Sample(f, 60, 64<<10) {
		docs, err := SplitDocuments(file.Data)
		if err == nil && len(docs) > 0 {
			add(docs[0].Data)
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, chain, featureSet, gates, caps string) {
		ms, err := Parse("fuzz.yaml", doc, ParseOptions{})
		if err != nil || len(ms) == 0 {
			return
		}
		m := &ms[0]
		sel := fuzzSelector(chain, featureSet, gates, caps)
		d := sel.Include(m)
		if again := sel.Include(m); again != d {
			t.Fatalf("Include is not deterministic: %+v then %+v", d, again)
		}
		if d.Included != (d.Reason == "") {
			t.Fatalf("decision %+v: a reason must be given exactly when excluded", d)
		}
		annotations := m.Obj.GetAnnotations()
		if d.Matched != "" {
			if !d.Included || annotations[d.Matched] != "true" || len(sel.Profiles) == 0 {
				t.Fatalf("decision %+v: matched an annotation that is %q", d, annotations[d.Matched])
			}
		}
		if d.Included && (&Selector{}).Include(m).Reason != "" && len(annotations) > 0 {
			t.Fatalf("included by %+v but not by the filterless selector: %s", sel, (&Selector{}).Include(m).Reason)
		}
		if len(sel.Profiles) == 0 {
			return
		}
		// The profile that decides: the nearest one the manifest is
		// annotated for, else the farthest.
		decider := sel.Profiles[len(sel.Profiles)-1]
		for _, p := range sel.Profiles {
			if _, ok := annotations[IncludePrefix+p]; ok {
				decider = p
				break
			}
		}
		err = m.Manifest.Include(sel.ExcludeID, sel.FeatureSet, &decider, sel.Capabilities, sel.Overrides, sel.FeatureGates, sel.MajorVersion)
		if (err == nil) != d.Included {
			t.Fatalf("chain %q decides %+v; library-go for profile %q says %v", sel.Profiles, d, decider, err)
		}
		if d.Included && d.Matched != IncludePrefix+decider {
			t.Fatalf("chain %q matched %q, want %q", sel.Profiles, d.Matched, IncludePrefix+decider)
		}
	})
}
