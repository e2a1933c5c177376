package nodetuning

import (
	"fmt"
	"strings"

	"k8s.io/utils/cpuset"
)

// tunedPriority is the recommendation priority of the rendered Tuned profile
// (lower wins); it sits above the operator's default node profiles.
const tunedPriority = 20

// tuned renders the Tuned openshift-node-performance-<p>: five TuneD
// profiles (the main one, a realtime-kernel one and one per CPU vendor,
// which the main one includes by what the node's kernel and lscpu say),
// recommended for the nodes of the machine config label. Kernel arguments
// live in the profiles' [bootloader] sections: TuneD computes the command
// line on the node and the operator turns it into a MachineConfig.
func tuned(pp *PerformanceProfile, cpus cpuSets) map[string]any {
	name := tunedName(pp.Name)
	v := tunedValuesOf(pp, cpus)
	profiles := []any{
		map[string]any{"name": name, "data": mainProfile(pp.Name, v)},
		map[string]any{"name": tunedVendorName(pp.Name, "rt"), "data": realtimeProfile()},
		map[string]any{"name": tunedVendorName(pp.Name, "amd-x86"), "data": amdProfile(v)},
		map[string]any{"name": tunedVendorName(pp.Name, "arm-aarch64"), "data": armProfile()},
		map[string]any{"name": tunedVendorName(pp.Name, "intel-x86"), "data": intelProfile(v)},
	}
	return map[string]any{
		"apiVersion": "tuned.openshift.io/v1",
		"kind":       "Tuned",
		"metadata":   metadata(pp, name, TunedNamespace, nil),
		"spec": map[string]any{
			"profile": profiles,
			"recommend": []any{map[string]any{
				"profile":             name,
				"priority":            int64(tunedPriority),
				"machineConfigLabels": stringMap(machineConfigLabels(&pp.Spec)),
			}},
		},
	}
}

// tunedValues are the facts of a profile the TuneD profiles are written
// from.
type tunedValues struct {
	name                 string
	isolated             cpuset.CPUSet // isolated and ovsDpdk CPUs
	reserved             cpuset.CPUSet
	irqAffinity          string // with ovsDpdk CPUs: every CPU but them
	staticIsolation      bool
	isolatedFreq         int64 // with hardwareTuning
	reservedFreq         int64
	hardwareTuning       bool
	defaultHugePageSize  string
	hugePages            []string
	additionalArgs       []string
	irqBalanceDisabled   bool
	realTime             bool
	highPowerConsumption bool
	perPodPower          bool
	net                  *Net
	reservedCount        int
}

func tunedValuesOf(pp *PerformanceProfile, cpus cpuSets) *tunedValues {
	s := &pp.Spec
	v := &tunedValues{
		name:                 pp.Name,
		isolated:             cpus.isolated.Union(cpus.ovsDpdk),
		reserved:             cpus.reserved,
		staticIsolation:      s.CPU.BalanceIsolated != nil && !*s.CPU.BalanceIsolated,
		additionalArgs:       s.AdditionalKernelArgs,
		irqBalanceDisabled:   isTrue(s.GloballyDisableIrqLoadBalancing),
		realTime:             s.realTimeHint(),
		highPowerConsumption: s.highPowerConsumption(),
		perPodPower:          !s.highPowerConsumption() && s.perPodPowerManagement(),
		reservedCount:        cpus.reserved.Size(),
	}
	if !cpus.ovsDpdk.IsEmpty() {
		all := v.isolated.Union(cpus.reserved).Union(cpus.shared)
		v.irqAffinity = all.Difference(cpus.ovsDpdk).String()
	}
	if h := s.HardwareTuning; h != nil {
		v.hardwareTuning = true
		v.isolatedFreq, v.reservedFreq = *h.IsolatedCpuFreq, *h.ReservedCpuFreq
	}
	if hp := s.HugePages; hp != nil {
		v.defaultHugePageSize = hp.DefaultHugePagesSize
		// 2M pages only on NUMA nodes, with a 1G default, need 2M pages on
		// the command line (none of them) or the kernel offers no 2M pool
		// for the allocation units to fill.
		var numa2M, spread2M bool
		for _, p := range hp.Pages {
			if p.Node != nil {
				numa2M = numa2M || (p.Size == "2M" && !spread2M)
				continue
			}
			if p.Size == "2M" {
				spread2M, numa2M = true, false
			}
			v.hugePages = append(v.hugePages, "hugepagesz="+p.Size, fmt.Sprintf("hugepages=%d", p.Count))
		}
		if numa2M && v.defaultHugePageSize == "1G" {
			v.hugePages = append(v.hugePages, "hugepagesz=2M", "hugepages=0")
		}
	}
	if n := s.Net; n != nil && isTrue(n.UserLevelNetworking) {
		v.net = n
	}
	return v
}

// iniWriter writes a TuneD profile: sections of options, each option
// optionally after a comment.
type iniWriter struct{ b strings.Builder }

func (w *iniWriter) section(name string) { fmt.Fprintf(&w.b, "\n[%s]\n", name) }
func (w *iniWriter) comment(text string) { w.b.WriteString("# " + text + "\n") }
func (w *iniWriter) set(key, value string) {
	fmt.Fprintf(&w.b, "%s=%s\n", key, value)
}
func (w *iniWriter) String() string { return strings.TrimPrefix(w.b.String(), "\n") }

// vendorInclude picks the vendor profile by lscpu: intel-x86, amd-x86 or
// arm-aarch64.
const vendorInclude = `${f:lscpu_check:Vendor ID\:\s*GenuineIntel:intel-x86:Vendor ID\:\s*AuthenticAMD:amd-x86:Architecture\:\s*aarch64:arm-aarch64}`

// mainProfile writes openshift-node-performance-<p>. It includes TuneD's
// openshift-node and cpu-partitioning profiles, then the realtime profile
// when the running kernel's release names "rt", then the vendor profile;
// its own options win over all of them.
func mainProfile(profile string, v *tunedValues) string {
	w := &iniWriter{}
	w.section("main")
	w.set("summary", fmt.Sprintf("Low-latency node tuning of PerformanceProfile %s (rendered by payload-apply)", profile))
	w.set("include", "openshift-node,cpu-partitioning"+
		"${f:regex_search_ternary:${f:exec:uname:-r}:rt:,"+tunedVendorName(profile, "rt")+":}"+
		",openshift-node-performance-"+vendorInclude+"-"+profile)

	w.section("variables")
	w.set("isolated_cores", v.isolated.String())
	w.set("not_isolated_cores_expanded", "${f:cpulist_invert:${isolated_cores_expanded}}")

	w.section("cpu")
	if v.perPodPower {
		w.comment("pods set their own power states (per-pod power management)")
		w.set("enabled", "false")
	} else {
		w.set("force_latency", "cstate.id:1|3")
		w.set("governor", "performance")
		w.set("energy_perf_bias", "performance")
		w.set("min_perf_pct", "100")
	}

	w.section("service")
	w.comment("firmware refreshes cause SMIs, latency spikes on isolated CPUs")
	w.set("service.fwupd-refresh.timer", "stop,disable")
	if v.realTime {
		w.set("service.stalld", "start,enable")
	} else {
		w.set("service.stalld", "stop,disable")
	}

	w.section("vm")
	w.set("transparent_hugepages", "never")

	if !v.irqBalanceDisabled {
		w.section("irqbalance")
		w.comment("interrupts stay balanced over all CPUs; pods opt out per CPU")
		w.set("enabled", "false")
	}

	w.section("scheduler")
	w.set("runtime", "0")
	for _, t := range []string{"ksoftirqd", "rcuc", "ktimers"} {
		w.set("group."+t, "0:f:11:*:"+t+".*")
	}
	if !v.irqBalanceDisabled {
		w.set("default_irq_smp_affinity", "ignore")
		w.set("irq_process", "false")
	}

	w.section("sysctl")
	if v.realTime {
		w.set("kernel.hung_task_timeout_secs", "600")
		w.set("kernel.nmi_watchdog", "0")
		w.set("kernel.sched_rt_runtime_us", "-1")
		w.set("vm.stat_interval", "10")
	}
	w.set("net.ipv4.tcp_fastopen", "3")
	w.set("vm.dirty_ratio", "10")
	w.set("vm.dirty_background_ratio", "3")
	w.set("vm.swappiness", "10")
	w.comment("1, not cpu-partitioning's 0: timers must leave CPUs that pinned pods take")
	w.set("kernel.timer_migration", "1")

	w.section("selinux")
	w.set("avc_cache_threshold", "8192")

	if v.net != nil {
		writeNet(w, v)
	}

	writeBootloader(w, v)

	w.section("rtentsk")

	if v.hardwareTuning {
		w.section("sysfs")
		w.comment("maximum CPU frequencies (kHz) of the isolated, then the reserved CPUs")
		for _, c := range v.isolated.List() {
			w.set(fmt.Sprintf("/sys/devices/system/cpu/cpufreq/policy%d/scaling_max_freq", c), fmt.Sprint(v.isolatedFreq))
		}
		for _, c := range v.reserved.List() {
			w.set(fmt.Sprintf("/sys/devices/system/cpu/cpufreq/policy%d/scaling_max_freq", c), fmt.Sprint(v.reservedFreq))
		}
	}
	return w.String()
}

// writeNet writes one [net] section per device (net, net_1, ...), or one
// for all devices, setting the combined channels to the reserved CPU count.
func writeNet(w *iniWriter, v *tunedValues) {
	channels := fmt.Sprintf("combined %d", v.reservedCount)
	if len(v.net.Devices) == 0 {
		w.section("net")
		w.set("channels", channels)
		return
	}
	for i, d := range v.net.Devices {
		name := "net"
		if i > 0 {
			name = fmt.Sprintf("net_%d", i)
		}
		w.section(name)
		w.set("type", "net")
		w.set("devices_udev_regex", deviceRegex(d))
		w.set("channels", channels)
	}
}

// writeBootloader writes the kernel command line. The option names matter
// beyond this profile: TuneD joins the cmdline* options sorted by name, some
// replace cpu-partitioning's options of the same name, and the vendor
// profiles add theirs; they are kept as the node tuning operator names them
// (cmdline_realtime_nosoftlookup included), so that the command line, and
// the MachineConfig the operator makes of it, come out in the same order.
func writeBootloader(w *iniWriter, v *tunedValues) {
	w.section("bootloader")
	w.comment("no initrd overlay (cpu-partitioning would add one)")
	w.set("initrd_remove_dir", "")
	w.set("initrd_dst_img", "")
	w.set("initrd_add_dir", "")
	w.set("cmdline_cpu_part", "+nohz=on rcu_nocbs=${isolated_cores} tuned.non_isolcpus=${not_isolated_cpumask} systemd.cpu_affinity=${not_isolated_cores_expanded}")
	w.set("cmdline_cpu_part_nohzfull", "+nohz_full=${isolated_cores}")
	w.set("cmdline_cpu_tuning", "+skew_tick=1")
	w.comment("the vendor profiles set the IOMMU options")
	w.set("cmdline_iommu", "")
	if v.staticIsolation {
		w.set("cmdline_isolation", "+isolcpus=domain,managed_irq,${isolated_cores}")
	} else {
		w.set("cmdline_isolation", "+isolcpus=managed_irq,${isolated_cores}")
	}
	if v.realTime {
		w.set("cmdline_realtime_nosoftlookup", "+nosoftlockup")
		w.set("cmdline_realtime_common", "+rcutree.kthread_prio=11")
	}
	if v.highPowerConsumption {
		w.set("cmdline_power_performance", "")
		if v.realTime {
			w.set("cmdline_idle_poll", "")
		}
	}
	if v.defaultHugePageSize != "" {
		w.set("cmdline_hugepages", "+"+strings.Join(append([]string{"default_hugepagesz=" + v.defaultHugePageSize}, v.hugePages...), " "))
	}
	if v.irqAffinity != "" {
		w.set("cmdline_irqaffinity", "+irqaffinity="+v.irqAffinity)
	}
	if len(v.additionalArgs) > 0 {
		w.set("cmdline_additionalArg", "+"+strings.Join(v.additionalArgs, " "))
	}
}

// realtimeProfile writes openshift-node-performance-rt-<p>, included on
// realtime kernels: it drops the sysctls they do not have.
func realtimeProfile() string {
	w := &iniWriter{}
	w.section("main")
	w.set("summary", "Realtime kernel: sysctls it lacks are not set")
	w.section("sysctl")
	w.comment("set by network-latency, absent from the realtime kernel")
	w.set("drop", "kernel.numa_balancing,net.core.busy_read,net.core.busy_poll")
	return w.String()
}

// amdProfile writes openshift-node-performance-amd-x86-<p>.
func amdProfile(v *tunedValues) string {
	w := &iniWriter{}
	w.section("main")
	w.set("summary", "AMD x86_64 kernel arguments")
	w.section("bootloader")
	w.set("cmdline_iommu_amd", "iommu=pt")
	switch {
	case v.perPodPower:
		w.set("cmdline_pstate", "amd_pstate=passive")
	case v.hardwareTuning:
		w.set("cmdline_pstate", "amd_pstate=active")
	default:
		w.set("cmdline_pstate", "amd_pstate=guided")
	}
	if v.realTime {
		w.set("cmdline_realtime_amd", "tsc=reliable nmi_watchdog=0 mce=off")
	}
	if v.highPowerConsumption {
		w.set("cmdline_power_performance_amd", "processor.max_cstate=1")
		if v.realTime {
			w.set("cmdline_idle_poll_amd", "idle=poll")
		}
	}
	return w.String()
}

// armProfile writes openshift-node-performance-arm-aarch64-<p>: aarch64
// needs no vendor arguments (no C-state or P-state options).
func armProfile() string {
	w := &iniWriter{}
	w.section("main")
	w.set("summary", "aarch64 kernel arguments (none beyond the common ones)")
	w.section("bootloader")
	return w.String()
}

// intelProfile writes openshift-node-performance-intel-x86-<p>.
func intelProfile(v *tunedValues) string {
	w := &iniWriter{}
	w.section("main")
	w.set("summary", "Intel x86_64 kernel arguments")
	w.section("bootloader")
	w.set("cmdline_iommu_intel", "intel_iommu=on iommu=pt")
	if v.realTime {
		w.set("cmdline_realtime_intel", "tsc=reliable")
		w.set("cmdline_realtime_intel_nmi", "nmi_watchdog=0 mce=off")
	}
	if v.highPowerConsumption {
		w.set("cmdline_power_performance_intel", "processor.max_cstate=1 intel_idle.max_cstate=0")
		if v.realTime {
			w.set("cmdline_idle_poll_intel", "idle=poll")
		}
	}
	switch {
	case v.perPodPower:
		w.set("cmdline_pstate", "intel_pstate=passive")
	case v.hardwareTuning:
		w.set("cmdline_pstate", "intel_pstate=active")
	default:
		w.set("cmdline_pstate", "intel_pstate=${f:intel_recommended_pstate}")
	}
	return w.String()
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
		pattern := strings.ReplaceAll(*d.InterfaceName, "*", ".*")
		if rest, negate := strings.CutPrefix(pattern, "!"); negate {
			parts = append(parts, "^INTERFACE=(?!"+rest+")")
		} else {
			parts = append(parts, "^INTERFACE="+pattern)
		}
	}
	return strings.Join(parts, `[\s\S]*`)
}
