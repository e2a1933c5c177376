package nodetuning

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// Paths and names on the node.
const (
	scriptDir           = "/usr/local/bin"
	hugepagesScript     = "hugepages-allocation.sh"
	offlineScript       = "set-cpus-offline.sh"
	crioRuntimeConfig   = "/etc/crio/crio.conf.d/99-performance-runtimes.conf"
	ignitionVersion     = "3.2.0"
	modeExecutable      = 0o700
	modeConfig          = 0o644
	unitOfflineCPUs     = "set-cpus-offline.service"
	kernelTypeRealtime  = "realtime"
	kernelTypeDefault   = "default"
	dataURLPrefixBase64 = "data:text/plain;charset=utf-8;base64,"
)

// The scripts and configuration the MachineConfig writes. They are ours,
// kept small: each does one thing and fails loudly.
const (
	hugepagesScriptText = `#!/usr/bin/env bash
# Allocates HUGEPAGES_COUNT huge pages of HUGEPAGES_SIZE kB on NUMA node
# NUMA_NODE, retrying for a minute while the kernel frees memory.
# Written by payload-apply from a PerformanceProfile.
set -euo pipefail

target="/sys/devices/system/node/node${NUMA_NODE}/hugepages/hugepages-${HUGEPAGES_SIZE}kB/nr_hugepages"
if [[ ! -w "${target}" ]]; then
  echo "hugepages: ${target}: missing or not writable" >&2
  exit 1
fi
for _ in $(seq 60); do
  echo "${HUGEPAGES_COUNT}" >"${target}"
  if [[ "$(cat "${target}")" == "${HUGEPAGES_COUNT}" ]]; then
    exit 0
  fi
  sleep 1
done
echo "hugepages: ${target}: holds $(cat "${target}") pages, want ${HUGEPAGES_COUNT}" >&2
exit 1
`
	offlineScriptText = `#!/usr/bin/env bash
# Takes the CPUs of OFFLINE_CPUS (a comma-separated list) offline. Every CPU
# is checked before any is touched.
# Written by payload-apply from a PerformanceProfile.
set -euo pipefail

IFS=, read -ra cpus <<<"${OFFLINE_CPUS}"
for cpu in "${cpus[@]}"; do
  if [[ ! -w "/sys/devices/system/cpu/cpu${cpu}/online" ]]; then
    echo "offline cpus: cpu${cpu} cannot be taken offline" >&2
    exit 1
  fi
done
for cpu in "${cpus[@]}"; do
  echo 0 >"/sys/devices/system/cpu/cpu${cpu}/online"
done
`
)

// crioConfig is the CRI-O drop-in that defines the runtime handler the
// RuntimeClass uses: the default runtime, with the annotations through
// which pods ask for per-pod tuning, and infrastructure containers pinned
// to the reserved CPUs.
func crioConfig(profile string, reserved cpuset.CPUSet) string {
	return fmt.Sprintf(`# Runtime handler %q for RuntimeClass %s.
# Written by payload-apply from PerformanceProfile %s.
[crio.runtime]
infra_ctr_cpuset = %q

[crio.runtime.runtimes.%s]
inherit_default_runtime = true
allowed_annotations = ["cpu-load-balancing.crio.io", "cpu-quota.crio.io", "irq-load-balancing.crio.io", "cpu-c-states.crio.io", "cpu-freq-governor.crio.io"]
`, RuntimeHandler, RuntimeClassName(profile), profile, reserved.String(), RuntimeHandler)
}

// hugepagesUnit allocates one NUMA node's pages of one size before the
// kubelet starts.
func hugepagesUnit(sizeKB int64, count, node int32) string {
	return fmt.Sprintf(`[Unit]
Description=Allocate %d huge pages of %d kB on NUMA node %d
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
Environment=HUGEPAGES_COUNT=%d
Environment=HUGEPAGES_SIZE=%d
Environment=NUMA_NODE=%d
ExecStart=%s/%s

[Install]
WantedBy=multi-user.target
`, count, sizeKB, node, count, sizeKB, node, scriptDir, hugepagesScript)
}

// offlineUnit takes the offlined CPUs down before the kubelet starts.
func offlineUnit(cpus string) string {
	return fmt.Sprintf(`[Unit]
Description=Take CPUs %s offline
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
Environment=OFFLINE_CPUS=%s
ExecStart=%s/%s

[Install]
WantedBy=multi-user.target
`, cpus, cpus, scriptDir, offlineScript)
}

// machineConfig renders the MachineConfig 50-performance-<p>: the kernel
// (realtime or default), the kernel arguments, huge pages pinned to NUMA
// nodes and offline CPUs as systemd units, and the CRI-O runtime handler.
func machineConfig(pp *PerformanceProfile, cpus cpuSets) map[string]any {
	var files, units []any
	addFile := func(path string, mode int, content string) {
		files = append(files, map[string]any{
			"path":      path,
			"mode":      int64(mode),
			"overwrite": true,
			"contents":  map[string]any{"source": dataURLPrefixBase64 + base64.StdEncoding.EncodeToString([]byte(content))},
		})
	}
	addUnit := func(name, content string) {
		units = append(units, map[string]any{"name": name, "enabled": true, "contents": content})
	}

	var numaPages []HugePage
	if hp := pp.Spec.HugePages; hp != nil {
		for _, p := range hp.Pages {
			if p.Node != nil {
				numaPages = append(numaPages, p)
			}
		}
	}
	if len(numaPages) > 0 {
		addFile(scriptDir+"/"+hugepagesScript, modeExecutable, hugepagesScriptText)
		for _, p := range numaPages {
			kb := hugePageSizes[p.Size]
			addUnit(fmt.Sprintf("hugepages-allocation-%dkB-NUMA%d.service", kb, *p.Node), hugepagesUnit(kb, p.Count, *p.Node))
		}
	}
	if !cpus.offlined.IsEmpty() {
		addFile(scriptDir+"/"+offlineScript, modeExecutable, offlineScriptText)
		addUnit(unitOfflineCPUs, offlineUnit(cpuList(cpus.offlined)))
	}
	addFile(crioRuntimeConfig, modeConfig, crioConfig(pp.Name, cpus.reserved))

	ignition := map[string]any{
		"ignition": map[string]any{"version": ignitionVersion},
		"storage":  map[string]any{"files": files},
	}
	if len(units) > 0 {
		ignition["systemd"] = map[string]any{"units": units}
	}
	kernelType := kernelTypeDefault
	if pp.Spec.realTimeKernel() {
		kernelType = kernelTypeRealtime
	}
	args := make([]any, 0, 16)
	for _, a := range kernelArgs(pp, cpus) {
		args = append(args, a)
	}
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind":       "MachineConfig",
		"metadata":   metadata(pp, MachineConfigName(pp.Name), "", machineConfigLabels(&pp.Spec)),
		"spec": map[string]any{
			"config":          ignition,
			"kernelType":      kernelType,
			"kernelArguments": args,
		},
	}
}

// kernelArgs composes the kernel command line of a profile, in a fixed
// order: CPU isolation, the workload hints, huge pages, then the admin's
// additional arguments.
//
//   - Always: skew_tick=1, nohz=on, rcu_nocbs=<isolated>,
//     isolcpus=managed_irq,<isolated> (isolcpus=domain,managed_irq,... when
//     spec.cpu.balanceIsolated is false), and systemd.cpu_affinity=<reserved>
//     so that system services start on the reserved CPUs.
//   - globallyDisableIrqLoadBalancing: irqaffinity=<reserved>.
//   - realTime hint (the default): nohz_full=<isolated>, nosoftlockup,
//     rcutree.kthread_prio=11.
//   - highPowerConsumption: processor.max_cstate=1 intel_idle.max_cstate=0,
//     and with the realTime hint also idle=poll.
//   - perPodPowerManagement: intel_pstate=passive.
//   - Huge pages: default_hugepagesz=<size>, then hugepagesz=<size>
//     hugepages=<count> for each size not pinned to a NUMA node. When 2M
//     pages are only pinned to NUMA nodes and the default size is 1G,
//     hugepagesz=2M hugepages=0 keeps the 2M pool available to the units.
func kernelArgs(pp *PerformanceProfile, cpus cpuSets) []string {
	s := &pp.Spec
	isolated, reserved := cpus.isolated.String(), cpus.reserved.String()
	args := []string{"skew_tick=1", "nohz=on", "rcu_nocbs=" + isolated}
	if s.CPU.BalanceIsolated != nil && !*s.CPU.BalanceIsolated {
		args = append(args, "isolcpus=domain,managed_irq,"+isolated)
	} else {
		args = append(args, "isolcpus=managed_irq,"+isolated)
	}
	args = append(args, "systemd.cpu_affinity="+cpuList(cpus.reserved))
	if isTrue(s.GloballyDisableIrqLoadBalancing) {
		args = append(args, "irqaffinity="+reserved)
	}
	if s.realTimeHint() {
		args = append(args, "nohz_full="+isolated, "nosoftlockup", "rcutree.kthread_prio=11")
	}
	if s.highPowerConsumption() {
		args = append(args, "processor.max_cstate=1", "intel_idle.max_cstate=0")
		if s.realTimeHint() {
			args = append(args, "idle=poll")
		}
	}
	if s.perPodPowerManagement() {
		args = append(args, "intel_pstate=passive")
	}
	if hp := s.HugePages; hp != nil {
		if hp.DefaultHugePagesSize != "" {
			args = append(args, "default_hugepagesz="+hp.DefaultHugePagesSize)
		}
		pinned2M, spread2M := false, false
		for _, p := range hp.Pages {
			if p.Node != nil {
				pinned2M = pinned2M || p.Size == "2M"
				continue
			}
			spread2M = spread2M || p.Size == "2M"
			args = append(args, "hugepagesz="+p.Size, "hugepages="+strconv.Itoa(int(p.Count)))
		}
		if pinned2M && !spread2M && hp.DefaultHugePagesSize == "1G" {
			args = append(args, "hugepagesz=2M", "hugepages=0")
		}
	}
	return append(args, s.AdditionalKernelArgs...)
}

// cpuList prints a CPU set as a comma-separated list of CPUs ("0,1,2"), the
// form systemd and the offline script read.
func cpuList(s cpuset.CPUSet) string {
	list := s.List()
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = strconv.Itoa(c)
	}
	return strings.Join(out, ",")
}
