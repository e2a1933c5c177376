package nodetuning_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cpuPart is the start of every command line: cpu-partitioning's options
// as the main profile replaces them.
const cpuPart = "nohz=on rcu_nocbs=${isolated_cores} tuned.non_isolcpus=${not_isolated_cpumask} systemd.cpu_affinity=${not_isolated_cores_expanded} nohz_full=${isolated_cores} skew_tick=1"

var (
	role = func(r string) map[string]string {
		return map[string]string{"machineconfiguration.openshift.io/role": r}
	}
	builtin = func(p string) map[string]string {
		return map[string]string{"pools.operator.machineconfiguration.openshift.io/" + p: ""}
	}
	baseUnits      = []string{"cpuset-configure.service", "clear-irqbalance-banned-cpus.service", "ocp-tuned-one-shot.service"}
	manualUnits    = []string{"hugepages-allocation-1048576kB-NUMA0.service", "cpuset-configure.service", "set-cpus-offline.service", "clear-irqbalance-banned-cpus.service", "ocp-tuned-one-shot.service"}
	singleNUMANode = map[string]any{
		"cpuManagerPolicy": "static", "cpuManagerReconcilePeriod": "5s", "topologyManagerPolicy": "single-numa-node",
		"memoryManagerPolicy": "Static", "cpuManagerPolicyOptions": map[string]any{"full-pcpus-only": "true"},
		"reservedMemory": []any{map[string]any{"numaNode": 0, "limits": map[string]any{"memory": "1100Mi"}}},
		"evictionHard":   map[string]any{"memory.available": "100Mi", "nodefs.available": "10%", "imagefs.available": "15%", "nodefs.inodesFree": "5%"},
		"kubeReserved":   map[string]any{"memory": "500Mi"}, "systemReserved": map[string]any{"memory": "500Mi"},
	}
	rtTuned = map[string]string{
		"cpu.force_latency": "cstate.id:1|3", "cpu.governor": "performance", "cpu.energy_perf_bias": "performance", "cpu.min_perf_pct": "100",
		"service.service.stalld": "start,enable", "service.service.fwupd-refresh.timer": "stop,disable", "vm.transparent_hugepages": "never",
		"irqbalance.enabled": "false", "scheduler.runtime": "0", "scheduler.irq_process": "false", "scheduler.default_irq_smp_affinity": "ignore",
		"scheduler.group.ksoftirqd": "0:f:11:*:ksoftirqd.*", "sysctl.kernel.sched_rt_runtime_us": "-1", "sysctl.kernel.timer_migration": "1",
		"sysctl.drop": "kernel.numa_balancing,net.core.busy_read,net.core.busy_poll", "selinux.avc_cache_threshold": "8192",
		"bootloader.initrd_remove_dir": "", "bootloader.cmdline_iommu": "",
	}
)

// with returns m with more entries.
func with[V any](m map[string]V, kv ...any) map[string]V {
	out := map[string]V{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1].(V)
	}
	return out
}

// manual is NTO's "manual" profile of its default scenario.
func manual() profileWant {
	return profileWant{
		name: "manual", nodeRole: "worker-cnf", mcLabels: role("worker-cnf"), kernelType: "realtime",
		files: baseFiles, units: manualUnits,
		fileHas: map[string][]string{
			"hugepages-allocation-1048576kB-NUMA0.service": {"Environment=HUGEPAGES_COUNT=1", "Environment=HUGEPAGES_SIZE=1048576", "Environment=NUMA_NODE=0", "ExecStart=/usr/local/bin/hugepages-allocation.sh", "Before=kubelet.service"},
			"set-cpus-offline.service":                     {"Environment=OFFLINE_CPUS=2,3"},
			"/etc/crio/crio.conf.d/99-runtimes.conf": {`infra_ctr_cpuset = "0"`, `exec_cpu_affinity = "first"`, `min_injected_gomaxprocs = 4`, "[crio.runtime.runtimes.high-performance]",
				`allowed_annotations = ["cpu-load-balancing.crio.io", "cpu-quota.crio.io", "irq-load-balancing.crio.io", "cpu-c-states.crio.io", "cpu-freq-governor.crio.io"]`},
			"ocp-tuned-one-shot.service":    {"Requires=kubelet-dependencies.target", "Before=kubelet-dependencies.target", "RequiredBy=kubelet-dependencies.target", "ConditionPathExists=/var/lib/ocp-tuned/image.env"},
			"/etc/sysconfig/stalld-backend": {`BE="-b sched_debug"`},
		},
		poolSelector: role("worker-cnf"),
		kubelet:      with(singleNUMANode, "reservedSystemCPUs", any("0")),
		cmdline: map[string]string{
			"intel-rt": cpuPart + " default_hugepagesz=1G hugepagesz=2M hugepages=128 intel_iommu=on iommu=pt isolcpus=managed_irq,${isolated_cores} intel_pstate=${f:intel_recommended_pstate} rcutree.kthread_prio=11 tsc=reliable nmi_watchdog=0 mce=off nosoftlockup",
			"amd":      cpuPart + " default_hugepagesz=1G hugepagesz=2M hugepages=128 iommu=pt isolcpus=managed_irq,${isolated_cores} amd_pstate=guided tsc=reliable nmi_watchdog=0 mce=off rcutree.kthread_prio=11 nosoftlockup",
			"arm-rt":   cpuPart + " default_hugepagesz=1G hugepagesz=2M hugepages=128 isolcpus=managed_irq,${isolated_cores} rcutree.kthread_prio=11 nosoftlockup",
		},
		tuned:  with(rtTuned, "variables.isolated_cores", "1"),
		absent: []string{"sysfs./sys/devices/system/cpu/cpufreq/policy1/scaling_max_freq", "net.channels", "bootloader.cmdline_irqaffinity", "bootloader.cmdline_power_performance"},
	}
}

// bootstrap is a profile of NTO's bootstrap scenarios.
func bootstrap(pool, reserved string) profileWant {
	return profileWant{
		name: "openshift-bootstrap-" + pool, nodeRole: pool, mcLabels: role(pool), kernelType: "default",
		files: pinnedFiles, units: baseUnits,
		fileHas: map[string][]string{
			"/etc/crio/crio.conf.d/99-workload-pinning.conf": {`resources = { "cpushares" = 0, "cpuset" = "` + reserved + `" }`, `activation_annotation = "target.workload.openshift.io/management"`},
			"/etc/kubernetes/openshift-workload-pinning":     {`    "cpuset": "` + reserved + `"`},
		},
		poolSelector:  builtin(pool),
		kubelet:       map[string]any{"reservedSystemCPUs": reserved, "topologyManagerPolicy": "best-effort", "cpuManagerPolicy": "static"},
		kubeletAbsent: []string{"memoryManagerPolicy", "reservedMemory", "cpuManagerPolicyOptions"},
		cmdline: map[string]string{
			"intel": cpuPart + " intel_iommu=on iommu=pt isolcpus=managed_irq,${isolated_cores} intel_pstate=${f:intel_recommended_pstate} rcutree.kthread_prio=11 tsc=reliable nmi_watchdog=0 mce=off nosoftlockup",
		},
		tuned:  with(rtTuned, "variables.isolated_cores", "0-1"),
		absent: []string{"bootloader.cmdline_hugepages"},
	}
}

// scenarioWants are the properties of each scenario's render.
var scenarioWants = map[string]struct {
	objects  []string
	pinned   []string
	profiles []profileWant
	findings []string
}{
	"default": {profiles: []profileWant{manual()}},
	"no-rps":  {profiles: []profileWant{manual()}},
	"cpu-frequency": {profiles: []profileWant{func() profileWant {
		w := manual()
		w.units = slices.DeleteFunc(slices.Clone(manualUnits), func(u string) bool { return u == "set-cpus-offline.service" })
		w.fileHas = map[string][]string{"/etc/crio/crio.conf.d/99-runtimes.conf": {`infra_ctr_cpuset = "0-1"`}}
		w.kubelet = with(singleNUMANode, "reservedSystemCPUs", any("0-1"))
		w.cmdline = map[string]string{
			"intel": cpuPart + " default_hugepagesz=1G hugepagesz=2M hugepages=128 intel_iommu=on iommu=pt isolcpus=managed_irq,${isolated_cores} intel_pstate=active rcutree.kthread_prio=11 tsc=reliable nmi_watchdog=0 mce=off nosoftlockup",
			"amd":   cpuPart + " default_hugepagesz=1G hugepagesz=2M hugepages=128 iommu=pt isolcpus=managed_irq,${isolated_cores} amd_pstate=active tsc=reliable nmi_watchdog=0 mce=off rcutree.kthread_prio=11 nosoftlockup",
		}
		freq := func(cpu string) string {
			return "sysfs./sys/devices/system/cpu/cpufreq/policy" + cpu + "/scaling_max_freq"
		}
		w.tuned = with(rtTuned, "variables.isolated_cores", "2-3", freq("2"), "2500000", freq("3"), "2500000", freq("0"), "2800000", freq("1"), "2800000")
		w.absent = []string{freq("4")}
		return w
	}()}},
	"arm": {profiles: []profileWant{func() profileWant {
		w := manual()
		w.kernelType = "64k-pages"
		w.units = slices.Clone(manualUnits)
		w.units[0] = "hugepages-allocation-32768kB-NUMA0.service"
		w.fileHas = map[string][]string{"hugepages-allocation-32768kB-NUMA0.service": {"Environment=HUGEPAGES_COUNT=4", "Environment=HUGEPAGES_SIZE=32768", "Environment=NUMA_NODE=0"}}
		w.cmdline = map[string]string{
			"arm":    cpuPart + " default_hugepagesz=32M hugepagesz=512M hugepages=1 isolcpus=managed_irq,${isolated_cores} rcutree.kthread_prio=11 nosoftlockup",
			"arm-rt": cpuPart + " default_hugepagesz=32M hugepagesz=512M hugepages=1 isolcpus=managed_irq,${isolated_cores} rcutree.kthread_prio=11 nosoftlockup",
		}
		return w
	}()}, findings: []string{
		`spec.hugepages.defaultHugepagesSize "32M" is not a huge page size of aarch64 with 64k kernel pages (2M, 512M, 16G)`,
		`spec.hugepages.pages[0].size "32M" is not a huge page size of aarch64 with 64k kernel pages`,
	}},
	"pinned":                    {pinned: []string{"master", "worker"}},
	"pinned-single-node-legacy": {pinned: []string{"master", "worker"}, findings: []string{"MachineConfig/02-master-workload-partitioning: writes /etc/kubernetes/openshift-workload-pinning on a single-node control plane"}},
	"bootstrap-no-pools":        {pinned: []string{"master", "worker"}, profiles: []profileWant{bootstrap("master", "2-7"), bootstrap("worker", "2-3")}},
	"bootstrap-extra-pool":      {pinned: []string{"master", "worker", "worker-cnf"}, profiles: []profileWant{bootstrap("master", "2-7"), bootstrap("worker", "2-3")}},
}

// TestScenarioProperties asserts each scenario's render object by object:
// the objects and their order, each pool's workload partitioning
// MachineConfig, and each profile's MachineConfig (labels, kernel, files,
// units and their lines), KubeletConfig (pool selector, kubelet fields),
// Tuned (profiles, recommendation, the kernel command line TuneD composes
// on each host, effective options) and RuntimeClass.
func TestScenarioProperties(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			want, ok := scenarioWants[sc.name]
			if !ok {
				t.Fatalf("no properties for scenario %s", sc.name)
			}
			out := renderScenario(t, sc.name, sc.gates...)
			objs, order := byName(out.Add)
			wantOrder := want.objects
			if wantOrder == nil {
				for _, p := range want.pinned {
					wantOrder = append(wantOrder, "MachineConfig/01-"+p+"-cpu-partitioning")
				}
				for _, p := range want.profiles {
					wantOrder = append(wantOrder, "MachineConfig/50-performance-"+p.name, "KubeletConfig/performance-"+p.name,
						"Tuned/openshift-node-performance-"+p.name, "RuntimeClass/performance-"+p.name)
				}
			}
			if diff := cmp.Diff(wantOrder, order); diff != "" {
				t.Fatalf("objects (-want +got):\n%s", diff)
			}
			for _, p := range want.pinned {
				checkPinning(t, objs, p)
			}
			for _, p := range want.profiles {
				checkProfile(t, objs, p)
			}
			var findings []string
			for _, f := range out.Findings {
				if !strings.Contains(f.Message, "the plan has no CRD") {
					findings = append(findings, f.Message)
				}
			}
			if len(findings) != len(want.findings) {
				t.Errorf("findings %q, want %d", findings, len(want.findings))
			}
			for _, w := range want.findings {
				if !slices.ContainsFunc(findings, func(f string) bool { return strings.Contains(f, w) }) {
					t.Errorf("no finding says %q; findings: %q", w, findings)
				}
			}
		})
	}
}
