package nodetuning_test

import "slices"

// The properties of our own scenarios, which cover what NTO's eight do not:
// every spec field, every workload hint and every annotation.
func init() {
	scenarioWants["everything"] = struct {
		objects  []string
		pinned   []string
		profiles []profileWant
		findings []string
	}{pinned: []string{"master", "worker", "ran"}, profiles: []profileWant{everything()}}

	worker := func(name string) profileWant {
		return profileWant{
			name: name, nodeRole: "worker", mcLabels: role("worker"), kernelType: "default",
			files: baseFiles, units: baseUnits,
			poolSelector: builtin("worker"),
			kubelet:      map[string]any{"reservedSystemCPUs": "0-1", "topologyManagerPolicy": "best-effort", "cpuManagerPolicy": "static", "cpuManagerReconcilePeriod": "5s"},
		}
	}

	saving := worker("power-saving")
	saving.cmdline = map[string]string{
		"intel-rt": cpuPart + " intel_iommu=on iommu=pt isolcpus=managed_irq,${isolated_cores} intel_pstate=passive",
		"amd":      cpuPart + " iommu=pt isolcpus=managed_irq,${isolated_cores} amd_pstate=passive",
		"arm":      cpuPart + " isolcpus=managed_irq,${isolated_cores}",
	}
	saving.tuned = map[string]string{"cpu.enabled": "false", "service.service.stalld": "stop,disable", "variables.isolated_cores": "2-15"}
	saving.absent = []string{"cpu.governor", "cpu.force_latency", "sysctl.kernel.sched_rt_runtime_us", "sysctl.kernel.nmi_watchdog",
		"bootloader.cmdline_realtime_nosoftlookup", "bootloader.cmdline_realtime_common"}
	scenarioWants["power-saving"] = profiles(saving)

	high := worker("high-power")
	high.units = slices.Concat([]string{"hugepages-allocation-2048kB-NUMA0.service"}, baseUnits)
	high.cmdline = map[string]string{
		"intel": cpuPart + " default_hugepagesz=1G hugepagesz=2M hugepages=0 intel_iommu=on iommu=pt isolcpus=managed_irq,${isolated_cores} processor.max_cstate=1 intel_idle.max_cstate=0 intel_pstate=${f:intel_recommended_pstate}",
		"amd":   cpuPart + " default_hugepagesz=1G hugepagesz=2M hugepages=0 iommu=pt isolcpus=managed_irq,${isolated_cores} processor.max_cstate=1 amd_pstate=guided",
	}
	high.tuned = map[string]string{"bootloader.cmdline_power_performance": "", "service.service.stalld": "stop,disable", "cpu.governor": "performance"}
	high.absent = []string{"bootloader.cmdline_idle_poll", "bootloader.cmdline_realtime_nosoftlookup", "sysctl.kernel.sched_rt_runtime_us"}
	scenarioWants["high-power"] = profiles(high)

	dra := worker("dra")
	dra.kubelet = map[string]any{"cpuManagerPolicy": "none", "topologyManagerPolicy": "none", "memoryManagerPolicy": "None"}
	dra.kubeletAbsent = []string{"reservedSystemCPUs", "evictionHard", "kubeReserved", "systemReserved", "reservedMemory", "cpuManagerPolicyOptions"}
	scenarioWants["dra"] = profiles(dra)

	master := worker("control-plane")
	master.nodeRole, master.mcLabels, master.poolSelector = "master", role("master"), builtin("master")
	master.kubelet = map[string]any{"reservedSystemCPUs": "0-3"}
	master.tuned = map[string]string{"irqbalance.enabled": "false", "scheduler.irq_process": "false", "variables.isolated_cores": "4-15"}
	scenarioWants["master-pool"] = profiles(master)

	rps := worker("physical-rps")
	rps.files = slices.Concat(baseFiles[:1], []string{"/usr/local/bin/set-rps-mask.sh"}, baseFiles[1:4], []string{"/etc/sysctl.d/99-default-rps-mask.conf"}, baseFiles[4:])
	rps.fileHas = map[string][]string{"/etc/sysctl.d/99-default-rps-mask.conf": {"net.core.rps_default_mask = 00000001,00000001"}}
	rps.kubelet = map[string]any{"reservedSystemCPUs": "0,32"}
	scenario := profiles(rps)
	scenario.findings = []string{`metadata.annotations["performance.openshift.io/pause-reconcile"]: pauses only the operator's reconcile`}
	scenarioWants["physical-rps"] = scenario
	scenarioWants["rps-and-net"] = profiles(rpsAndNet())
}

// rpsAndNet renders what both NTO's render and ours render beyond NTO's
// scenarios.
func rpsAndNet() profileWant {
	return profileWant{
		name: "rps-and-net", nodeRole: "worker-cnf", mcLabels: role("worker-cnf"), kernelType: "default",
		files: slices.Concat(baseFiles[:1], []string{"/usr/local/bin/set-rps-mask.sh"}, baseFiles[1:4],
			[]string{"/etc/sysctl.d/99-default-rps-mask.conf", "/etc/udev/rules.d/99-netdev-physical-rps.rules"}, baseFiles[4:]),
		units: slices.Concat([]string{"update-rps@.service"}, baseUnits),
		fileHas: map[string][]string{
			"/etc/crio/crio.conf.d/99-runtimes.conf": {`infra_ctr_cpuset = "0-1"`},
			"/etc/sysctl.d/99-default-rps-mask.conf": {"net.core.rps_default_mask = 00000003"},
			"update-rps@.service":                    {"ExecStart=/usr/local/bin/set-rps-mask.sh %I 0", "Type=oneshot"},
		},
		fileLacks:    map[string][]string{"/etc/crio/crio.conf.d/99-runtimes.conf": {`exec_cpu_affinity = "first"`}},
		poolSelector: role("worker-cnf"),
		kubelet: map[string]any{
			"reservedSystemCPUs": "0-1",
			"evictionHard":       map[string]any{"memory.available": "200Mi", "nodefs.available": "10%", "imagefs.available": "15%", "nodefs.inodesFree": "5%"},
			"kubeReserved":       map[string]any{"memory": "1Gi"},
			"reservedMemory":     []any{map[string]any{"numaNode": 0, "limits": map[string]any{"memory": "1724Mi"}}},
		},
		cmdline: map[string]string{
			"intel-rt": "nmi_watchdog=0 audit=0 loglevel=7 " + cpuPart + " idle=poll intel_iommu=on iommu=pt isolcpus=domain,managed_irq,${isolated_cores} processor.max_cstate=1 intel_idle.max_cstate=0 intel_pstate=${f:intel_recommended_pstate} rcutree.kthread_prio=11 tsc=reliable nmi_watchdog=0 mce=off nosoftlockup",
		},
		tuned: map[string]string{
			"net.devices_udev_regex": "^INTERFACE=eth.*", "net_1.devices_udev_regex": "^ID_VENDOR_ID=0x15b3", "net.channels": "combined 2",
			"variables.isolated_cores": "2-39",
		},
		absent: []string{"irqbalance.enabled", "scheduler.irq_process", "bootloader.cmdline_hugepages", "bootloader.cmdline_irqaffinity"},
	}
}

func profiles(p ...profileWant) struct {
	objects  []string
	pinned   []string
	profiles []profileWant
	findings []string
} {
	return struct {
		objects  []string
		pinned   []string
		profiles []profileWant
		findings []string
	}{profiles: p}
}

// everything is the profile that uses every field and annotation, with the
// mixed CPUs feature gate on, on a workload-partitioned cluster.
func everything() profileWant {
	freq := func(cpu string) string {
		return "sysfs./sys/devices/system/cpu/cpufreq/policy" + cpu + "/scaling_max_freq"
	}
	return profileWant{
		name: "everything", nodeRole: "ran", mcLabels: role("ran"), kernelType: "default",
		files: []string{
			"/usr/local/bin/hugepages-allocation.sh", "/usr/local/bin/set-rps-mask.sh", "/usr/local/bin/set-cpus-offline.sh", "/usr/local/bin/clear-irqbalance-banned-cpus.sh",
			"/etc/crio/crio.conf.d/99-runtimes.conf", "/etc/sysctl.d/99-default-rps-mask.conf", "/etc/udev/rules.d/99-netdev-physical-rps.rules",
			"/etc/crio/crio.conf.d/99-workload-pinning.conf", "/etc/kubernetes/openshift-workload-pinning", "/usr/local/bin/cpuset-configure.sh",
			"/etc/systemd/system/ovs.slice", "/etc/systemd/system/openvswitch.service.d/01-use-ovs-slice.conf",
			"/etc/systemd/system/ovsdb-server.service.d/01-use-ovs-slice.conf", "/etc/systemd/system/ovs-vswitchd.service.d/01-use-ovs-slice.conf",
			"/var/lib/ovn-ic/etc/enable_dynamic_cpu_affinity", "/usr/local/bin/ovs-dpdk-cpus-configure.sh",
			"/etc/sysconfig/stalld-backend", "/etc/systemd/system/stalld.service.d/stalld-backend.conf", "/etc/kubernetes/openshift-workload-mixed-cpus",
		},
		units: []string{"update-rps@.service", "hugepages-allocation-2048kB-NUMA0.service", "hugepages-allocation-2048kB-NUMA1.service", "cpuset-configure.service",
			"set-cpus-offline.service", "clear-irqbalance-banned-cpus.service", "ocp-tuned-one-shot.service", "ovs-dpdk-cpus-configure.service"},
		fileHas: map[string][]string{
			"/etc/crio/crio.conf.d/99-runtimes.conf": {`infra_ctr_cpuset = "0-1,32-33"`, `shared_cpuset = "2,34"`,
				`allowed_annotations = ["cpu-load-balancing.crio.io", "cpu-quota.crio.io", "irq-load-balancing.crio.io", "cpu-c-states.crio.io", "cpu-freq-governor.crio.io", "cpu-shared.crio.io"]`},
			"/etc/sysctl.d/99-default-rps-mask.conf":                           {"net.core.rps_default_mask = 00000003,00000003"},
			"/etc/crio/crio.conf.d/99-workload-pinning.conf":                   {`resources = { "cpushares" = 0, "cpuset" = "0-1,32-33" }`},
			"/etc/systemd/system/ovs-vswitchd.service.d/01-use-ovs-slice.conf": {"Slice=ovs.slice", "Delegate=cpuset cpu pids", "Environment=OVS_DPDK_CPUS=3,35"},
			"/etc/systemd/system/openvswitch.service.d/01-use-ovs-slice.conf":  {"Slice=ovs.slice"},
			"/usr/local/bin/ovs-dpdk-cpus-configure.sh":                        {`cpus="3,35"`, `partition="isolated"`},
			"/etc/kubernetes/openshift-workload-mixed-cpus":                    {`     "containers_limit": 256`},
			"update-rps@.service":                                              {"ExecStart=/usr/local/bin/set-rps-mask.sh %I 0"},
			"set-cpus-offline.service":                                         {"Environment=OFFLINE_CPUS=64,65,66,67,68,69,70,71"},
			"clear-irqbalance-banned-cpus.service":                             {"Environment=OVS_DPDK_CPUS=800000008", "Before=irqbalance.service"},
			"ovs-dpdk-cpus-configure.service":                                  {"After=ovs-vswitchd.service", "Requires=ovs-vswitchd.service"},
			"hugepages-allocation-2048kB-NUMA1.service":                        {"Environment=HUGEPAGES_COUNT=256", "Environment=NUMA_NODE=1"},
			"/etc/udev/rules.d/99-netdev-physical-rps.rules":                   {},
			"/usr/local/bin/set-rps-mask.sh":                                   {`path="${path/x2d/-}"`},
			"/etc/systemd/system/stalld.service.d/stalld-backend.conf":         {"EnvironmentFile=/etc/sysconfig/stalld-backend"},
			"/var/lib/ovn-ic/etc/enable_dynamic_cpu_affinity":                  {},
			"/etc/systemd/system/ovsdb-server.service.d/01-use-ovs-slice.conf": {"Slice=ovs.slice"},
			"/etc/kubernetes/openshift-workload-pinning":                       {`    "cpuset": "0-1,32-33"`},
			"/usr/local/bin/cpuset-configure.sh":                               {`echo 0 >"${root}/cpuset.sched_load_balance"`},
			"/usr/local/bin/clear-irqbalance-banned-cpus.sh":                   {`mask="${OVS_DPDK_CPUS:-0}"`},
			"/usr/local/bin/hugepages-allocation.sh":                           {"set -euo pipefail"},
			"/usr/local/bin/set-cpus-offline.sh":                               {"set -euo pipefail"},
			"/etc/systemd/system/ovs.slice":                                    {"[Slice]"},
			"/etc/sysconfig/stalld-backend":                                    {`BE="-b sched_debug"`},
			"hugepages-allocation-2048kB-NUMA0.service":                        {"Environment=HUGEPAGES_COUNT=512", "Environment=HUGEPAGES_SIZE=2048"},
			"cpuset-configure.service":                                         {"After=crio.service", "WantedBy=multi-user.target crio.service"},
			"ocp-tuned-one-shot.service":                                       {"ExecStart=/usr/bin/true"},
		},
		fileLacks: map[string][]string{
			"/etc/crio/crio.conf.d/99-runtimes.conf": {`exec_cpu_affinity = "first"`},
		},
		poolSelector: map[string]string{"pools.example.com/ran": ""},
		kubelet: map[string]any{
			"reservedSystemCPUs": "0-3,32-35", "topologyManagerPolicy": "restricted", "memoryManagerPolicy": "Static",
			"cpuManagerPolicyOptions": map[string]any{"strict-cpu-reservation": "true"},
			"systemReserved":          map[string]any{"memory": "1Gi", "cpu": "500m"},
			"reservedMemory":          []any{map[string]any{"numaNode": 0, "limits": map[string]any{"memory": "1624Mi"}}},
			"maxPods":                 300,
		},
		kubeletAbsent: []string{"noSuchField"},
		cmdline: map[string]string{
			"intel-rt": "audit=0 console=ttyS0,115200 " + cpuPart + " default_hugepagesz=1G hugepagesz=1G hugepages=16 hugepagesz=2M hugepages=0 idle=poll intel_iommu=on iommu=pt irqaffinity=0-2,4-34,36-63 isolcpus=domain,managed_irq,${isolated_cores} processor.max_cstate=1 intel_idle.max_cstate=0 intel_pstate=active rcutree.kthread_prio=11 tsc=reliable nmi_watchdog=0 mce=off nosoftlockup",
			"amd":      "audit=0 console=ttyS0,115200 " + cpuPart + " default_hugepagesz=1G hugepagesz=1G hugepages=16 hugepagesz=2M hugepages=0 idle=poll iommu=pt irqaffinity=0-2,4-34,36-63 isolcpus=domain,managed_irq,${isolated_cores} processor.max_cstate=1 amd_pstate=active tsc=reliable nmi_watchdog=0 mce=off rcutree.kthread_prio=11 nosoftlockup",
		},
		tuned: map[string]string{
			"variables.isolated_cores": "3-31,35-63",
			"net.type":                 "net", "net.devices_udev_regex": "^INTERFACE=ens.*", "net.channels": "combined 4",
			"net_1.devices_udev_regex": `^ID_MODEL_ID=0x1592[\s\S]*^ID_VENDOR_ID=0x8086`, "net_2.devices_udev_regex": "^INTERFACE=(?!eno1)",
			freq("3"): "3000000", freq("63"): "3000000", freq("0"): "2000000", freq("33"): "2000000",
			"bootloader.cmdline_isolation": "+isolcpus=domain,managed_irq,${isolated_cores}",
		},
		absent: []string{"irqbalance.enabled", "scheduler.irq_process", "scheduler.default_irq_smp_affinity", freq("2"), freq("64")},
	}
}
