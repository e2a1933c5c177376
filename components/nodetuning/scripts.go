package nodetuning

import "fmt"

// The scripts the MachineConfig installs under /usr/local/bin. They are
// ours: each does what the node tuning operator's script of the same name
// does (TestScripts runs them against a fake /sys and cgroup tree), fails
// loudly, and reads the trees it changes from an environment variable that
// defaults to the real one (SYSFS, CGROUP_ROOT), so that tests can point it
// elsewhere.
const (
	hugepagesScriptText = `#!/usr/bin/env bash
# Sets the huge pages of HUGEPAGES_SIZE kB on NUMA node NUMA_NODE to
# HUGEPAGES_COUNT, trying again each second for a minute while the kernel
# frees memory. Written by payload-apply from a PerformanceProfile.
set -euo pipefail

sysfs="${SYSFS:-/sys}"
tries="${HUGEPAGES_RETRIES:-60}"
target="${sysfs}/devices/system/node/node${NUMA_NODE}/hugepages/hugepages-${HUGEPAGES_SIZE}kB/nr_hugepages"
if [[ ! -f "${target}" ]]; then
  echo "hugepages: ${target}: no such file" >&2
  exit 1
fi
until [[ "$(<"${target}")" == "${HUGEPAGES_COUNT}" ]]; do
  if ((tries-- <= 0)); then
    echo "hugepages: ${target} holds $(<"${target}") pages, want ${HUGEPAGES_COUNT}" >&2
    exit 1
  fi
  echo "${HUGEPAGES_COUNT}" >"${target}"
  [[ "$(<"${target}")" == "${HUGEPAGES_COUNT}" ]] || sleep 1
done
`

	offlineScriptText = `#!/usr/bin/env bash
# Takes the CPUs of OFFLINE_CPUS (a comma-separated list) offline. Every CPU
# is checked before any is touched. Written by payload-apply from a
# PerformanceProfile.
set -euo pipefail

sysfs="${SYSFS:-/sys}"
IFS=, read -ra cpus <<<"${OFFLINE_CPUS}"
for cpu in "${cpus[@]}"; do
  if [[ ! -f "${sysfs}/devices/system/cpu/cpu${cpu}/online" ]]; then
    echo "offline cpus: cpu${cpu} cannot be taken offline (no online file)" >&2
    exit 1
  fi
done
for cpu in "${cpus[@]}"; do
  echo 0 >"${sysfs}/devices/system/cpu/cpu${cpu}/online"
  echo "cpu${cpu} is offline"
done
`

	clearIRQBalanceScriptText = `#!/usr/bin/env bash
# Usage: clear-irqbalance-banned-cpus.sh [IRQBALANCE_CONF [CRIO_SAVED_MASK]]
# Makes irqbalance ban no CPU (or only the OVS-DPDK CPUs of OVS_DPDK_CPUS, a
# hexadecimal mask): pods that want their CPUs free of interrupts say so
# through CRI-O. CRI-O restores the mask it saved when it started; that copy
# is set to the same mask so the restore changes nothing. Written by
# payload-apply from a PerformanceProfile.
set -euo pipefail

conf="${1:-/etc/sysconfig/irqbalance}"
saved="${2:-/etc/sysconfig/orig_irq_banned_cpus}"
mask="${OVS_DPDK_CPUS:-0}"

[[ -f "${conf}" ]] || exit 0
sed -i '/^[[:space:]]*IRQBALANCE_BANNED_CPUS\>/d' "${conf}" || exit 0
echo "IRQBALANCE_BANNED_CPUS=${mask}" >>"${conf}"
if [[ -n "${saved}" && -f "${saved}" ]]; then
  echo "${mask}" >"${saved}"
fi
`

	rpsScriptText = `#!/usr/bin/env bash
# Usage: set-rps-mask.sh DEVPATH MASK
# Sets the receive packet steering mask of a network device's receive
# queues (DEVPATH a device, under /sys) or of one queue (DEVPATH a queue).
# Devices may be renamed or gone by then (SR-IOV): failed writes are not
# errors. Written by payload-apply from a PerformanceProfile.
set -uo pipefail

path="${1:-}"
mask="${2:-}"
[[ -n "${path}" ]] || { echo "set-rps-mask: the device path argument is missing" >&2; exit 1; }
[[ -n "${mask}" ]] || { echo "set-rps-mask: the mask argument is missing" >&2; exit 1; }
# systemd-escape writes "-" as x2d in the unit instance name.
path="${path/x2d/-}"
sysfs="${SYSFS:-/sys}"
if [[ "${path}" == *queues* ]]; then
  echo "${mask}" 2>/dev/null >"${sysfs}/${path}/rps_cpus"
else
  for queue in "${sysfs}/${path}"/queues/rx-*; do
    echo "${mask}" 2>/dev/null >"${queue}/rps_cpus"
  done
fi
exit 0
`

	cpusetScriptText = `#!/usr/bin/env bash
# On cgroup v1, lets containers turn CPU load balancing off: a cpuset that
# does not balance must not share its CPUs with one that does. The root
# cpuset stops balancing; system services move into system.slice, limited
# to systemd's (the reserved) CPUs; machine.slice is limited to them before
# any container starts; OVS, whose CPUs ovnkube-node manages, moves into an
# ovs.slice cpuset of every CPU that does not balance either (its threads on
# the reserved CPUs still balance through system.slice's set). On cgroup v2
# there is nothing to do. Written by payload-apply from a PerformanceProfile.
set -euo pipefail

cgroup="${CGROUP_ROOT:-/sys/fs/cgroup}"
if [[ "$(stat -f -c %T "${cgroup}")" == cgroup2fs ]]; then
  echo "cgroup v2: nothing to configure"
  exit 0
fi
root="${cgroup}/cpuset"

# move_tasks FILE DEST: moves the tasks listed in FILE into cgroup DEST;
# kernel threads refuse to move, which is expected.
move_tasks() {
  sort -r "$1" | while read -r pid; do
    echo "${pid}" 2>/dev/null >"$2/cgroup.procs" || true
  done
}

echo 0 >"${root}/cpuset.sched_load_balance"

system="${root}/system.slice"
mkdir -p "${system}"
cat "${root}/cpuset.mems" >"${system}/cpuset.mems"
reserved="$(taskset -cp 1 | awk 'NF { print $NF }')"
echo "${reserved}" >"${system}/cpuset.cpus"
move_tasks "${root}/cgroup.procs" "${system}"

machine="${root}/machine.slice"
mkdir -p "${machine}"
find "${machine}" -name cpuset.cpus | sort -r | while read -r file; do
  echo "${reserved}" >"${file}"
done

ovs="${root}/ovs.slice"
mkdir -p "${ovs}"
echo 0 >"${ovs}/cpuset.sched_load_balance"
cat "${root}/cpuset.cpus" >"${ovs}/cpuset.cpus"
cat "${root}/cpuset.mems" >"${ovs}/cpuset.mems"
for procs in "${cgroup}"/pids/ovs.slice/*/cgroup.procs; do
  [[ -f "${procs}" ]] && move_tasks "${procs}" "${ovs}"
done
exit 0
`
)

// ovsDpdkScript gives the OVS-DPDK poll mode threads their CPUs: a cpuset
// partition ("member" keeps them in the scheduler's load balancing,
// "isolated" takes them out) inside ovs-vswitchd.service's cgroup, which
// the service's drop-in delegates.
func ovsDpdkScript(cpus, partition string) string {
	return fmt.Sprintf(`#!/usr/bin/env bash
# Makes CPUs %[1]s a %[2]s cpuset partition for the OVS-DPDK poll mode
# threads, inside ovs-vswitchd.service's delegated cgroup (cgroup v2).
# Written by payload-apply from a PerformanceProfile.
set -euo pipefail

cpus=%[1]q
partition=%[2]q
cgroup="${CGROUP_ROOT:-/sys/fs/cgroup}"
slice="${cgroup}/ovs.slice"
service="${slice}/ovs-vswitchd.service"
dpdk="${service}/ovsdpdk.slice"

if [[ -z "${cpus}" ]]; then
  echo "ovs-dpdk: no CPUs: nothing to do"
  exit 0
fi
[[ -d "${slice}" ]] || { echo "ovs-dpdk: ${slice}: no such cgroup" >&2; exit 1; }
[[ -d "${service}" ]] || { echo "ovs-dpdk: ${service}: no such cgroup" >&2; exit 2; }

echo "+cpuset +cpu +pids" >"${service}/cgroup.subtree_control"
mkdir -p "${dpdk}"
echo threaded >"${dpdk}/cgroup.type"
for cg in "${slice}" "${service}" "${dpdk}"; do
  echo "${cpus}" >"${cg}/cpuset.cpus.exclusive"
done
echo "${partition}" >"${dpdk}/cpuset.cpus.partition"
echo "ovs-dpdk: CPUs ${cpus} are a ${partition} partition"
`, cpus, partition)
}
