package nodetuning_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// FuzzRenderProfile: any YAML either fails to parse, decode or validate
// with an error, or renders; decoding never lets a number wrap around and
// rendering never panics.
func FuzzRenderProfile(f *testing.F) {
	files, _ := filepath.Glob("testdata/scenarios/*/extra/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata: {name: x}\nspec:\n  cpu: {reserved: \"0\", isolated: \"2-2000000000\"}\n  nodeSelector: {node-role.kubernetes.io/x: \"\"}\n"))
	f.Add([]byte("apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata: {name: x}\nspec:\n  hugepages: {pages: [{size: 2M, count: 4294967297, node: 2147483648}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		ms, err := manifest.Parse("fuzz.yaml", data, manifest.ParseOptions{})
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.GVK != nodetuning.GroupVersionKind {
				continue
			}
			pp, err := nodetuning.Decode(m.Obj.Object)
			if err != nil {
				continue
			}
			if hp := pp.Spec.HugePages; hp != nil {
				for i, p := range hp.Pages {
					raw, _ := m.Obj.Object["spec"].(map[string]any)["hugepages"].(map[string]any)["pages"].([]any)[i].(map[string]any)["count"]
					if n, ok := raw.(int64); ok && int64(p.Count) != n {
						t.Fatalf("count %d decoded as %d", n, p.Count)
					}
				}
			}
			_, _ = nodetuning.Render(pp, nodetuning.Options{WorkloadPartitioning: true, MixedCPUsFeatureGate: true})
		}
	})
}
