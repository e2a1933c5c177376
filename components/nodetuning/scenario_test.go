package nodetuning_test

import (
	"testing"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/internal/golden"
)

// scenarios are the render scenarios of testdata/scenarios: NTO's eight
// render tests (default, no-rps, cpu-frequency, arm, pinned,
// pinned-single-node-legacy, bootstrap-no-pools, bootstrap-extra-pool) and
// ours, which together use every field of the API, every workload hint and
// every annotation the render reads. gates are the enabled feature gates.
var scenarios = []struct {
	name  string
	gates []string
}{
	{name: "default"},
	{name: "no-rps"},
	{name: "cpu-frequency"},
	{name: "arm"},
	{name: "pinned"},
	{name: "pinned-single-node-legacy"},
	{name: "bootstrap-no-pools"},
	{name: "bootstrap-extra-pool"},
	{name: "everything", gates: []string{nodetuning.FeatureGateMixedCPUs}},
	{name: "power-saving"},
	{name: "high-power"},
	{name: "dra"},
	{name: "master-pool"},
	{name: "physical-rps"},
	{name: "rps-and-net"},
}

// TestScenarioGolden renders each scenario: the objects, the
// MachineConfigs' files and units decoded, and the Tuned's profiles with
// their effective form on each host. The goldens are for review; the
// properties are asserted one by one in TestScenarioProperties.
func TestScenarioGolden(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			out := renderScenario(t, sc.name, sc.gates...)
			golden.AssertTestdata(t, "objects.yaml", yamlStream(t, out.Add))
			golden.AssertTestdata(t, "ignition.txt", ignitionText(t, out.Add))
			golden.AssertTestdata(t, "tuned.txt", tunedText(t, out.Add))
		})
	}
}
