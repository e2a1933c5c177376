package nodetuning_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/components/nodetuning"
)

// validSpec is a profile that validates; cases change one thing.
const validSpec = `
apiVersion: performance.openshift.io/v2
kind: PerformanceProfile
metadata:
  name: manual
spec:
  cpu:
    reserved: "0-1"
    isolated: "2-7"
  nodeSelector:
    node-role.kubernetes.io/worker-cnf: ""
`

// profile decodes validSpec with changes applied to its object.
func profile(t *testing.T, change func(obj map[string]any)) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(validSpec), &obj); err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(obj)
	}
	return obj
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }
func cpu(obj map[string]any) map[string]any  { return spec(obj)["cpu"].(map[string]any) }

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(obj map[string]any)
		want   []string
	}{
		{name: "valid", change: nil, want: nil},
		{name: "isolated overlaps reserved", change: func(o map[string]any) { cpu(o)["isolated"] = "1-3" },
			want: []string{`spec.cpu.isolated "1-3" overlaps spec.cpu.reserved "0-1"`}},
		{name: "every CPU set overlapping the others", change: func(o map[string]any) {
			cpu(o)["offlined"] = "1-2"
			cpu(o)["shared"] = "7-8"
			cpu(o)["ovsDpdk"] = "8"
		}, want: []string{
			`spec.cpu.offlined "1-2" overlaps spec.cpu.reserved "0-1"`, `spec.cpu.offlined "1-2" overlaps spec.cpu.isolated "2-7"`,
			`spec.cpu.shared "7-8" overlaps spec.cpu.isolated "2-7"`, `spec.cpu.ovsDpdk "8" overlaps spec.cpu.shared "7-8"`,
		}},
		{name: "cpu lists must parse", change: func(o map[string]any) {
			cpu(o)["reserved"] = "0-x"
			cpu(o)["offlined"] = "9-8"
			cpu(o)["shared"] = "1,,2"
			cpu(o)["ovsDpdk"] = " 8"
		}, want: []string{
			`spec.cpu.reserved "0-x" is not a CPU list such as "0-3,8": "0-x": "x" is not a CPU id (a decimal number)`,
			`spec.cpu.offlined "9-8" is not a CPU list such as "0-3,8": "9-8": range from 9 down to 8`,
			`spec.cpu.shared "1,,2" is not a CPU list such as "0-3,8": "": a CPU id is missing`,
			`spec.cpu.ovsDpdk " 8" is not a CPU list such as "0-3,8": " 8": " 8" is not a CPU id (a decimal number)`,
		}},
		{name: "cpu lists are bounded before they are expanded", change: func(o map[string]any) {
			cpu(o)["isolated"] = "2-2000000000"
			cpu(o)["offlined"] = "99999999999999999999"
		}, want: []string{
			`spec.cpu.isolated "2-2000000000" is not a CPU list such as "0-3,8": "2-2000000000": CPU 2000000000 is above the highest CPU id 8191`,
			`spec.cpu.offlined "99999999999999999999" is not a CPU list such as "0-3,8": "99999999999999999999": CPU 99999999999999999999 is above the highest CPU id 8191`,
		}},
		{name: "reserved and isolated required", change: func(o map[string]any) { delete(cpu(o), "reserved"); cpu(o)["isolated"] = "" },
			want: []string{`spec.cpu.reserved: required (a CPU list such as "0-1")`, `spec.cpu.isolated: required (a CPU list such as "0-1")`}},
		{name: "cpu required", change: func(o map[string]any) { delete(spec(o), "cpu") },
			want: []string{"spec.cpu: required"}},
		{name: "node selector required", change: func(o map[string]any) { delete(spec(o), "nodeSelector") },
			want: []string{`spec.nodeSelector: required (for example node-role.kubernetes.io/worker-cnf: "")`}},
		{name: "node selector without a role", change: func(o map[string]any) { spec(o)["nodeSelector"] = map[string]any{"worker": ""} },
			want: []string{`spec.nodeSelector: label "worker" is not <domain>/<role>, to default spec.machineConfigLabel and spec.machineConfigPoolSelector`}},
		{name: "node selector of two labels", change: func(o map[string]any) {
			spec(o)["nodeSelector"] = map[string]any{"a.io/x": "", "b.io/y": "1"}
			spec(o)["machineConfigLabel"] = map[string]any{"pool": "x"}
			spec(o)["machineConfigPoolSelector"] = map[string]any{"pool": "x"}
		}, want: []string{"spec.nodeSelector: must have exactly one label, has 2"}},
		{name: "machine config label of two labels", change: func(o map[string]any) {
			spec(o)["machineConfigLabel"] = map[string]any{"a": "1", "b": "2"}
		}, want: []string{"spec.machineConfigLabel: must have exactly one label, has 2"}},
		{name: "bad label value", change: func(o map[string]any) {
			spec(o)["nodeSelector"] = map[string]any{"node-role.kubernetes.io/x": "a b"}
		}, want: []string{`spec.nodeSelector["node-role.kubernetes.io/x"] "a b" is not a label value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{name: "unknown huge page sizes", change: func(o map[string]any) {
			spec(o)["hugepages"] = map[string]any{"defaultHugepagesSize": "4M", "pages": []any{map[string]any{"size": "3M", "count": 1}}}
		}, want: []string{
			`spec.hugepages.defaultHugepagesSize "4M" is not a known huge page size (64k, 2M, 32M, 512M, 1G, 16G)`,
			`spec.hugepages.pages[0].size "3M" is not a known huge page size (64k, 2M, 32M, 512M, 1G, 16G)`,
		}},
		{name: "pages without a default size", change: func(o map[string]any) {
			spec(o)["hugepages"] = map[string]any{"pages": []any{map[string]any{"size": "2M", "count": 4}}}
		}, want: []string{"spec.hugepages.defaultHugepagesSize: required when pages are given"}},
		{name: "page count, node, size and repeats", change: func(o map[string]any) {
			spec(o)["hugepages"] = map[string]any{"defaultHugepagesSize": "1G", "pages": []any{
				map[string]any{"size": "1G", "count": 0},
				map[string]any{"count": 2},
				map[string]any{"size": "2M", "count": -2, "node": -1},
				map[string]any{"size": "2M", "count": 2, "node": 0},
				map[string]any{"size": "2M", "count": 9, "node": 0},
				map[string]any{"size": "1G", "count": 9},
			}}
		}, want: []string{
			`spec.hugepages.pages[1].size: required (a size such as 2M)`,
			`spec.hugepages.pages[2].count "-2" must not be negative`,
			`spec.hugepages.pages[2].node "-1" must not be negative`,
			`spec.hugepages.pages[4]: repeats spec.hugepages.pages[3]: pages of size 2M on NUMA node 0`,
			`spec.hugepages.pages[5]: repeats spec.hugepages.pages[0]: pages of size 1G without a NUMA node`,
		}},
		{name: "kernel page size", change: func(o map[string]any) {
			spec(o)["kernelPageSize"] = "16k"
		}, want: []string{`spec.kernelPageSize "16k" is not a kernel page size (4k, 64k)`}},
		{name: "64k pages with the realtime kernel", change: func(o map[string]any) {
			spec(o)["kernelPageSize"] = "64k"
			spec(o)["realTimeKernel"] = map[string]any{"enabled": true}
		}, want: []string{`spec.kernelPageSize "64k" cannot be used with the realtime kernel (spec.realTimeKernel.enabled)`}},
		{name: "topology policy", change: func(o map[string]any) { spec(o)["numa"] = map[string]any{"topologyPolicy": "numa-first"} },
			want: []string{`spec.numa.topologyPolicy "numa-first" is not one of none, best-effort, restricted, single-numa-node`}},
		{name: "kernel arguments: spaces are fine, line breaks are not", change: func(o map[string]any) {
			spec(o)["additionalKernelArgs"] = []any{"audit=0", "", "a b", "x\n[sysctl]\nkernel.panic=1"}
		}, want: []string{"spec.additionalKernelArgs[3] \"x\\n[sysctl]\\nkernel.panic=1\" holds a control character (a line break would end the TuneD option)"}},
		{name: "workload hints", change: func(o map[string]any) {
			spec(o)["realTimeKernel"] = map[string]any{"enabled": true}
			spec(o)["workloadHints"] = map[string]any{"highPowerConsumption": true, "perPodPowerManagement": true, "realTime": false, "mixedCpus": true}
		}, want: []string{
			"spec.workloadHints.realTime: cannot be false when spec.realTimeKernel.enabled is true",
			"spec.workloadHints.perPodPowerManagement: cannot be true together with spec.workloadHints.highPowerConsumption",
			"spec.workloadHints.mixedCpus: needs shared CPUs (spec.cpu.shared)",
		}},
		{name: "mixed CPUs with shared CPUs", change: func(o map[string]any) {
			cpu(o)["shared"] = "8"
			spec(o)["workloadHints"] = map[string]any{"mixedCpus": true}
		}, want: nil},
		{name: "hardware tuning", change: func(o map[string]any) {
			spec(o)["hardwareTuning"] = map[string]any{"isolatedCpuFreq": 0, "reservedCpuFreq": -5}
		}, want: []string{
			`spec.hardwareTuning.isolatedCpuFreq "0" must be a frequency above 0 (kHz)`,
			`spec.hardwareTuning.reservedCpuFreq "-5" must be a frequency above 0 (kHz)`,
		}},
		{name: "hardware tuning needs both", change: func(o map[string]any) {
			spec(o)["hardwareTuning"] = map[string]any{"isolatedCpuFreq": 2000000}
		}, want: []string{"spec.hardwareTuning: needs both isolatedCpuFreq and reservedCpuFreq"}},
		{name: "net devices", change: func(o map[string]any) {
			spec(o)["net"] = map[string]any{"userLevelNetworking": true, "devices": []any{
				map[string]any{"interfaceName": ""},
				map[string]any{"vendorID": "8086", "deviceID": "0x15923"},
				map[string]any{"deviceID": "0x1592"},
				map[string]any{"interfaceName": "!eno1", "vendorID": "0x15"},
			}}
		}, want: []string{
			`spec.net.devices[0].interfaceName: must not be empty`,
			`spec.net.devices[1].vendorID "8086" is not 0x and up to four hexadecimal digits (a 16-bit PCI id)`,
			`spec.net.devices[1].deviceID "0x15923" is not 0x and up to four hexadecimal digits (a 16-bit PCI id)`,
			`spec.net.devices[2].deviceID: needs a vendorID`,
		}},
		{name: "name too long for the rendered objects", change: func(o map[string]any) {
			o["metadata"].(map[string]any)["name"] = strings.Repeat("a", 220)
		}, want: []string{`metadata.name "` + strings.Repeat("a", 220) + `" cannot name the rendered objects (openshift-node-performance-intel-x86-` + strings.Repeat("a", 220) + `): must be no more than 253 characters`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pp, err := nodetuning.Decode(profile(t, tc.change))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fe := range nodetuning.Validate(pp) {
				got = append(got, fe.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeErrors: wrong types and numbers out of their field's range are
// errors naming the field with its indexes, never values that wrap around.
func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name   string
		change func(obj map[string]any)
		want   string
	}{
		{"unknown field", func(o map[string]any) { cpu(o)["isolatd"] = "1" }, `unknown field "spec.cpu.isolatd"`},
		{"wrong type", func(o map[string]any) { spec(o)["hugepages"] = map[string]any{"pages": "many"} }, "spec.hugepages.pages: is a string, want a list"},
		{"wrong number", func(o map[string]any) {
			spec(o)["hugepages"] = map[string]any{"pages": []any{map[string]any{"count": "2"}}}
		}, "spec.hugepages.pages[0].count: is a string, want an integer"},
		{"fraction", func(o map[string]any) {
			spec(o)["hugepages"] = map[string]any{"pages": []any{map[string]any{"count": 2.5}}}
		}, "spec.hugepages.pages[0].count: is the number 2.5, want an integer"},
		{"count above int32", func(o map[string]any) {
			spec(o)["hugepages"] = map[string]any{"pages": []any{map[string]any{"size": "2M"}, map[string]any{"size": "1G", "count": int64(4294967297)}}}
		}, "spec.hugepages.pages[1].count: 4294967297 is out of range: want a 32-bit integer (-2147483648 to 2147483647)"},
		{"NUMA node above int32", func(o map[string]any) {
			spec(o)["hugepages"] = map[string]any{"pages": []any{map[string]any{"size": "2M", "count": 1, "node": 2147483648.0}}}
		}, "spec.hugepages.pages[0].node: 2147483648 is out of range: want a 32-bit integer (-2147483648 to 2147483647)"},
		{"label value not a string", func(o map[string]any) { spec(o)["nodeSelector"] = map[string]any{"a/b": 1} },
			`spec.nodeSelector["a/b"]: is the number 1, want a string`},
		{"frequency not a number", func(o map[string]any) { spec(o)["hardwareTuning"] = map[string]any{"isolatedCpuFreq": "fast"} },
			"spec.hardwareTuning.isolatedCpuFreq: is a string, want an integer"},
		{"wrong kind", func(o map[string]any) { o["apiVersion"] = "performance.openshift.io/v1" },
			"is performance.openshift.io/v1 PerformanceProfile, want performance.openshift.io/v2 PerformanceProfile"},
	}
	t.Run("a live profile's status is not read", func(t *testing.T) {
		obj := profile(t, func(o map[string]any) {
			o["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:00Z"}}, "tuned": "x/y"}
		})
		if _, err := nodetuning.Decode(obj); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nodetuning.Decode(profile(t, tc.change))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
