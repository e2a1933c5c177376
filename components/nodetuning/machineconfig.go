package nodetuning

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Ignition and kernel settings of the MachineConfigs.
const (
	ignitionVersion     = "3.2.0"
	modeExecutable      = 0o700
	modeConfig          = 0o644
	kernelTypeRealtime  = "realtime"
	kernelType64kPages  = "64k-pages"
	kernelTypeDefault   = "default"
	dataURLPrefixBase64 = "data:text/plain;charset=utf-8;base64,"
)

// ignition collects the files and units of an Ignition config.
type ignition struct {
	files, units []any
}

func (g *ignition) file(path string, mode int, content string) {
	g.files = append(g.files, map[string]any{
		"path":     path,
		"mode":     int64(mode),
		"contents": map[string]any{"source": dataURLPrefixBase64 + base64.StdEncoding.EncodeToString([]byte(content))},
	})
}

// unit adds a unit; enabled false leaves it to be started by others (a
// template unit).
func (g *ignition) unit(name, content string, enabled bool) {
	u := map[string]any{"name": name, "contents": content}
	if enabled {
		u["enabled"] = true
	}
	g.units = append(g.units, u)
}

func (g *ignition) config() map[string]any {
	c := map[string]any{
		"ignition": map[string]any{"version": ignitionVersion},
		"storage":  map[string]any{"files": g.files},
	}
	if len(g.units) > 0 {
		c["systemd"] = map[string]any{"units": g.units}
	}
	return c
}

// rpsEnabled reads the enable-rps annotation: "true" or "enable" turn RPS
// on; anything else, or none, leaves it off.
func rpsEnabled(pp *PerformanceProfile) bool {
	v := pp.Annotations[AnnotationEnableRPS]
	return v == "true" || v == "enable"
}

// machineConfig renders the MachineConfig 50-performance-<p>, with the
// files and units of NTO's in the same order:
//   - the scripts (huge page allocation, RPS with RPS on, CPU offlining,
//     irqbalance's banned CPUs), always installed;
//   - the CRI-O runtime handler;
//   - with RPS on, the default RPS mask and, unless physical devices get it
//     too, a udev rule and template unit that clear it on physical devices;
//   - a unit per huge page size pinned to a NUMA node;
//   - with workload partitioning, the CRI-O and kubelet pinning files with
//     the reserved CPUs; the cgroup v1 cpuset unit and script;
//   - the CPU offlining unit, the irqbalance unit, TuneD's one-shot unit;
//   - OVS in its own slice (ovnkube-node's dynamic CPU affinity on), with
//     OVS-DPDK CPUs their partition;
//   - stalld's sched_debug backend; with mixed CPUs, the kubelet's limit.
//
// The kernel is realtime with the realtime kernel, 64k-pages with 64k
// kernel pages, else default. Kernel arguments are not here: they are in
// the Tuned's [bootloader] sections.
func machineConfig(pp *PerformanceProfile, cpus cpuSets, opts *Options) (map[string]any, error) {
	s := &pp.Spec
	mixed := opts.mixedCPUs(pp)
	rps := rpsEnabled(pp)
	g := &ignition{}

	scripts := []struct{ name, text string }{{hugepagesScript, hugepagesScriptText}}
	if rps {
		scripts = append(scripts, struct{ name, text string }{rpsScript, rpsScriptText})
	}
	scripts = append(scripts, struct{ name, text string }{offlineScript, offlineScriptText},
		struct{ name, text string }{clearIRQBalanceScript, clearIRQBalanceScriptText})
	for _, sc := range scripts {
		g.file(scriptPath(sc.name), modeExecutable, sc.text)
	}

	g.file(crioRuntimesConfig, modeConfig, crioConfig(pp, mixed))

	if rps {
		g.file(rpsSysctlConfig, modeConfig, rpsSysctl(cpuMaskList(cpus.reserved)))
		if pp.Annotations[AnnotationEnablePhysicalRPS] != "true" {
			g.file(rpsUdevRules, modeConfig, rpsRules)
			g.unit("update-rps@.service", rpsUnit("0"), false)
		}
	}

	if hp := s.HugePages; hp != nil {
		for _, p := range hp.Pages {
			if p.Node == nil {
				continue
			}
			kb, err := ParseHugePageSize(p.Size)
			if err != nil {
				return nil, fmt.Errorf("spec.hugepages: %w", err)
			}
			g.unit(fmt.Sprintf("hugepages-allocation-%dkB-NUMA%d.service", kb, *p.Node), hugepagesUnit(kb, p.Count, *p.Node), true)
		}
	}

	if opts.WorkloadPartitioning {
		g.file(crioPinningConfig, modeConfig, crioPinning(s.CPU.Reserved))
		g.file(kubeletPinningConfig, modeConfig, kubeletPinning(s.CPU.Reserved))
	}
	g.unit("cpuset-configure.service", cpusetUnit(), true)
	g.file(scriptPath(cpusetScript), modeExecutable, cpusetScriptText)

	if !cpus.offlined.IsEmpty() {
		g.unit("set-cpus-offline.service", offlineUnit(cpuList(cpus.offlined)), true)
	}
	ovsDpdkMask := ""
	if !cpus.ovsDpdk.IsEmpty() {
		ovsDpdkMask = cpuMask(cpus.ovsDpdk)
	}
	g.unit("clear-irqbalance-banned-cpus.service", clearIRQBalanceUnit(ovsDpdkMask), true)
	g.unit(unitTunedOneShot, tunedOneShotUnit(), true)

	g.file("/etc/systemd/system/"+ovsSlice, modeConfig, ovsSliceUnit)
	g.file("/etc/systemd/system/openvswitch.service.d/"+ovsSliceDropIn, modeConfig, ovsSliceDropInText)
	g.file("/etc/systemd/system/ovsdb-server.service.d/"+ovsSliceDropIn, modeConfig, ovsSliceDropInText)
	g.file("/etc/systemd/system/ovs-vswitchd.service.d/"+ovsSliceDropIn, modeConfig, ovsVswitchdDropIn(s.CPU.OvsDpdk))
	g.file(ovnDynamicAffinityMarker, modeConfig, ovnMarkerText)

	if !cpus.ovsDpdk.IsEmpty() {
		partition := "member"
		if strings.EqualFold(pp.Annotations[AnnotationOvsDpdkLoadBalancing], "disable") {
			partition = "isolated"
		}
		g.file(scriptPath(ovsDpdkScriptName), modeExecutable, ovsDpdkScript(s.CPU.OvsDpdk, partition))
		g.unit("ovs-dpdk-cpus-configure.service", ovsDpdkUnit(), true)
	}

	g.file(stalldSysconfig, modeConfig, stalldSysconfigText)
	g.file(stalldDropIn, modeConfig, stalldDropInText)
	if mixed {
		g.file(kubeletMixedCPUsConfig, modeConfig, mixedCPUsConfig())
	}

	kernelType := kernelTypeDefault
	switch {
	case s.realTimeKernel():
		kernelType = kernelTypeRealtime
	case s.kernelPageSize64k():
		kernelType = kernelType64kPages
	}
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind":       "MachineConfig",
		"metadata":   metadata(pp, MachineConfigName(pp.Name), "", machineConfigLabels(s)),
		"spec": map[string]any{
			"config":     g.config(),
			"kernelType": kernelType,
		},
	}, nil
}

// BootstrapPinningName is the name of a pool's workload partitioning
// MachineConfig: 01-<pool>-cpu-partitioning.
func BootstrapPinningName(pool string) string { return "01-" + pool + "-cpu-partitioning" }

// BootstrapPinningMachineConfig is the MachineConfig that makes a pool's
// nodes join a workload-partitioned cluster pinned, before any profile
// names their CPUs: the kubelet's and CRI-O's management workload files with
// an empty CPU set. A profile's MachineConfig (50-...) overrides them. It
// carries no profile label: it belongs to the cluster, not to a profile.
func BootstrapPinningMachineConfig(pool string) map[string]any {
	g := &ignition{}
	g.file(kubeletPinningConfig, modeConfig, kubeletPinning(""))
	g.file(crioDefaultPinningConfig, modeConfig, crioPinning(""))
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind":       "MachineConfig",
		"metadata": map[string]any{
			"name":   BootstrapPinningName(pool),
			"labels": map[string]any{roleLabel: pool},
		},
		"spec": map[string]any{"config": g.config()},
	}
}
