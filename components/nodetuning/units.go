package nodetuning

import (
	"fmt"
	"strings"
)

// unit writes a systemd unit: sections in order, each a list of
// "Key=Value" directives.
type unit struct {
	sections []unitSection
}

type unitSection struct {
	name       string
	directives []string
}

func (u *unit) add(section string, directives ...string) *unit {
	for i := range u.sections {
		if u.sections[i].name == section {
			u.sections[i].directives = append(u.sections[i].directives, directives...)
			return u
		}
	}
	u.sections = append(u.sections, unitSection{section, directives})
	return u
}

func (u *unit) String() string {
	var b strings.Builder
	for i, s := range u.sections {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, d := range s.directives {
			b.WriteString(d + "\n")
		}
	}
	return b.String()
}

// oneshot is a unit that runs a script once before the kubelet starts,
// wanted by multi-user.target.
func oneshot(description, script string, env ...string) *unit {
	u := &unit{}
	u.add("Unit", "Description="+description, "Before=kubelet.service")
	service := make([]string, 0, len(env)+3)
	for _, e := range env {
		service = append(service, "Environment="+e)
	}
	service = append(service, "Type=oneshot", "RemainAfterExit=true", "ExecStart="+scriptPath(script))
	u.add("Service", service...)
	u.add("Install", "WantedBy=multi-user.target")
	return u
}

func scriptPath(name string) string { return scriptDir + "/" + name }

// hugepagesUnit allocates one NUMA node's pages of one size.
func hugepagesUnit(sizeKB int64, count, node int32) string {
	return oneshot(fmt.Sprintf("Allocate %d huge pages of %d kB on NUMA node %d", count, sizeKB, node), hugepagesScript,
		fmt.Sprintf("HUGEPAGES_COUNT=%d", count), fmt.Sprintf("HUGEPAGES_SIZE=%d", sizeKB), fmt.Sprintf("NUMA_NODE=%d", node)).String()
}

// offlineUnit takes the offlined CPUs down.
func offlineUnit(cpus string) string {
	return oneshot("Take CPUs "+cpus+" offline", offlineScript, "OFFLINE_CPUS="+cpus).String()
}

// clearIRQBalanceUnit clears irqbalance's banned CPUs before irqbalance
// starts; with OVS-DPDK CPUs it bans those (mask in hexadecimal).
func clearIRQBalanceUnit(ovsDpdkMask string) string {
	u := &unit{}
	u.add("Unit", "Description=Let irqbalance use every CPU (pods opt out through CRI-O)", "Before=kubelet.service", "Before=irqbalance.service")
	u.add("Service", "Type=oneshot", "RemainAfterExit=true", "ExecStart="+scriptPath(clearIRQBalanceScript))
	if ovsDpdkMask != "" {
		u.add("Service", "Environment=OVS_DPDK_CPUS="+ovsDpdkMask)
	}
	u.add("Install", "WantedBy=multi-user.target")
	return u.String()
}

// cpusetUnit prepares the cgroup v1 cpusets once CRI-O runs.
func cpusetUnit() string {
	u := &unit{}
	u.add("Unit", "Description=Confine system services to the reserved CPUs (cgroup v1 cpusets)", "Before=kubelet.service", "After=crio.service")
	u.add("Service", "Type=oneshot", "ExecStart="+scriptPath(cpusetScript))
	u.add("Install", "WantedBy=multi-user.target crio.service")
	return u.String()
}

// rpsUnit is the template unit update-rps@DEVPATH.service the udev rule
// starts for each physical device's receive queue.
func rpsUnit(mask string) string {
	u := &unit{}
	u.add("Unit", "Description=Set the receive packet steering mask of %I")
	u.add("Service", "Type=oneshot", fmt.Sprintf("ExecStart=%s %%I %s", scriptPath(rpsScript), mask))
	return u.String()
}

// ovsDpdkUnit makes the OVS-DPDK partition once ovs-vswitchd runs.
func ovsDpdkUnit() string {
	u := &unit{}
	u.add("Unit", "Description=Give OVS-DPDK its CPUs as a cpuset partition", "Requires=ovs-vswitchd.service",
		"Before=kubelet.service", "After=ovs-vswitchd.service")
	u.add("Service", "Type=oneshot", "RemainAfterExit=true", "ExecStart="+scriptPath(ovsDpdkScriptName))
	u.add("Install", "WantedBy=multi-user.target")
	return u.String()
}

// tunedOneShotUnit runs TuneD once from the node tuning operator's image
// before the kubelet (and its dependencies) start, so that the node boots
// tuned before any pod runs. The image comes from /var/lib/ocp-tuned/
// image.env, which the operator writes; without it the unit does nothing.
func tunedOneShotUnit() string {
	podman := []string{
		"-/usr/bin/podman run --rm --name openshift-tuned",
		"--privileged --net=host --pid=host --security-opt label=disable --log-driver=none",
		"--authfile /var/lib/kubelet/config.json",
		"--volume /etc/modprobe.d:/etc/modprobe.d:rslave",
		"--volume /etc/sysconfig:/etc/sysconfig:rslave",
		"--volume /etc/sysctl.conf:/etc/sysctl.conf:rslave,ro",
		"--volume /etc/sysctl.d:/etc/sysctl.d:rslave,ro",
		"--volume /etc/systemd:/etc/systemd:rslave",
		"--volume /run/systemd:/run/systemd:rslave",
		"--volume /run/tuned:/run/tuned:rslave",
		"--volume /sys:/sys:rslave",
		"--volume /var/lib/kubelet:/var/lib/kubelet:rslave,ro",
		"--volume /var/lib/ocp-tuned:/host/var/lib/ocp-tuned:rslave",
		"--volume /var/lib/tuned:/host/var/lib/tuned:rslave",
		`--entrypoint '["/usr/bin/cluster-node-tuning-operator","ocp-tuned","--in-cluster=false","--one-shot=true","-v=1"]'`,
		"$NTO_IMAGE",
	}
	u := &unit{}
	u.add("Unit",
		"Description=Tune the node once with TuneD from the node tuning operator's image, before the kubelet",
		"After=firstboot-osupdate.target systemd-sysctl.service network.target polkit.service",
		"Requires=kubelet-dependencies.target",
		"Before=kubelet-dependencies.target",
		"ConditionPathExists=/var/lib/ocp-tuned/image.env")
	u.add("Service",
		// oneshot, not forking: kubelet-dependencies.target must wait for it.
		"Type=oneshot",
		"Restart=on-failure",
		"RestartSec=5s",
		"ExecReload=/bin/pkill --signal HUP --pidfile /run/tuned/tuned.pid",
		`ExecStartPre=/bin/bash -c "mkdir -p /run/tuned"`,
		"ExecStart="+strings.Join(podman, " \\\n    "),
		"ExecStart=/usr/bin/true",
		"Environment=PODMAN_SYSTEMD_UNIT=%n",
		"EnvironmentFile=/etc/mco/proxy.env",
		"EnvironmentFile=-/var/lib/ocp-tuned/image.env",
		"ExecStop=/usr/bin/podman stop -t 20 --ignore openshift-tuned",
		"ExecStopPost=/usr/bin/podman rm -f --ignore openshift-tuned")
	u.add("Install", "RequiredBy=kubelet-dependencies.target")
	return u.String()
}
