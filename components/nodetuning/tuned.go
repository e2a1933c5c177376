package nodetuning

import (
	"fmt"
	"strings"
)

// tunedPriority is the recommendation priority of the rendered Tuned profile
// (lower wins); it sits above the operator's default node profiles.
const tunedPriority = 20

// tuned renders the Tuned openshift-node-performance-<p>: one TuneD profile
// on top of openshift-node and cpu-partitioning, recommended for the nodes
// of the machine config pool. Kernel arguments are not part of it: the
// MachineConfig carries them.
func tuned(pp *PerformanceProfile, cpus cpuSets) map[string]any {
	name := tunedName(pp.Name)
	return map[string]any{
		"apiVersion": "tuned.openshift.io/v1",
		"kind":       "Tuned",
		"metadata":   metadata(pp, name, TunedNamespace, nil),
		"spec": map[string]any{
			"profile": []any{map[string]any{"name": name, "data": tunedProfile(pp, cpus)}},
			"recommend": []any{map[string]any{
				"profile":             name,
				"priority":            int64(tunedPriority),
				"machineConfigLabels": stringMap(machineConfigLabels(&pp.Spec)),
			}},
		},
	}
}

// tunedProfile writes the TuneD profile: isolated cores for cpu-partitioning,
// CPUs held at full performance, no transparent huge pages, quieter
// housekeeping, and, by workload hint, real-time scheduling of the kernel
// threads that serve the isolated CPUs; with user-level networking, device
// queues sized to the reserved CPUs.
func tunedProfile(pp *PerformanceProfile, cpus cpuSets) string {
	s := &pp.Spec
	var b strings.Builder
	section := func(name string, lines ...string) {
		fmt.Fprintf(&b, "\n[%s]\n", name)
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	fmt.Fprintf(&b, "[main]\nsummary=Low-latency nodes of PerformanceProfile %s (written by payload-apply; kernel arguments are in MachineConfig %s)\ninclude=openshift-node,cpu-partitioning\n",
		pp.Name, MachineConfigName(pp.Name))

	vars := []string{"isolated_cores=" + cpus.isolated.String()}
	if s.CPU.BalanceIsolated != nil && !*s.CPU.BalanceIsolated {
		vars = append(vars, "no_balance_cores="+cpus.isolated.String())
	}
	section("variables", vars...)

	cpu := []string{"governor=performance", "energy_perf_bias=performance", "min_perf_pct=100"}
	switch {
	case s.highPowerConsumption():
		cpu = append(cpu, "force_latency=cstate.id:0|1")
	case s.realTimeHint():
		cpu = append(cpu, "force_latency=cstate.id:1|3")
	}
	section("cpu", cpu...)
	section("vm", "transparent_hugepages=never")
	if isTrue(s.GloballyDisableIrqLoadBalancing) {
		section("irqbalance", "banned_cpus=${isolated_cores}")
	}

	sysctl := []string{
		"kernel.hung_task_timeout_secs=600",
		"kernel.nmi_watchdog=0",
		"kernel.timer_migration=1",
		"vm.stat_interval=10",
		"vm.dirty_ratio=10",
		"vm.dirty_background_ratio=3",
		"vm.swappiness=10",
	}
	if s.realTimeHint() {
		sysctl = append(sysctl, "kernel.sched_rt_runtime_us=-1")
	}
	section("sysctl", sysctl...)

	if s.realTimeHint() {
		section("scheduler",
			"group.ksoftirqd=0:f:11:*:ksoftirqd.*",
			"group.rcuc=0:f:11:*:rcuc.*",
			"group.ktimers=0:f:11:*:ktimers.*")
	}

	if n := s.Net; n != nil && isTrue(n.UserLevelNetworking) {
		channels := fmt.Sprintf("channels=combined %d", cpus.reserved.Size())
		if len(n.Devices) == 0 {
			section("net", channels)
		}
		for i, d := range n.Devices {
			name := "net"
			if i > 0 {
				name = fmt.Sprintf("net_%d", i)
			}
			section(name, "type=net", "devices_udev_regex="+deviceRegex(d), channels)
		}
	}
	return b.String()
}

// deviceRegex matches a device's udev properties: model and vendor ID, and
// the interface name as a pattern ("*" any run, a leading "!" negates).
func deviceRegex(d Device) string {
	var parts []string
	if d.DeviceID != nil {
		parts = append(parts, "^ID_MODEL_ID="+*d.DeviceID)
	}
	if d.VendorID != nil {
		parts = append(parts, "^ID_VENDOR_ID="+*d.VendorID)
	}
	if d.InterfaceName != nil {
		pattern, negate := strings.CutPrefix(*d.InterfaceName, "!")
		pattern = strings.ReplaceAll(pattern, "*", ".*")
		if negate {
			parts = append(parts, "^INTERFACE=(?!"+pattern+")")
		} else {
			parts = append(parts, "^INTERFACE="+pattern)
		}
	}
	return strings.Join(parts, `[\s\S]*`)
}
