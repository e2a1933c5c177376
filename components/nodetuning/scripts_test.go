package nodetuning

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runScript runs a script of the MachineConfig with bash, with env added
// to a minimal environment, and returns its output.
func runScript(t *testing.T, text string, env []string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(script, []byte(text), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tree writes files (path -> content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestScripts runs each script the MachineConfig installs against a fake
// /sys (SYSFS) or cgroup tree (CGROUP_ROOT) and checks what it writes, the
// behaviour NTO's scripts of the same names have.
func TestScripts(t *testing.T) {
	t.Run("hugepages", func(t *testing.T) {
		nr := "devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"
		sys := tree(t, map[string]string{nr: "0\n"})
		env := []string{"SYSFS=" + sys, "HUGEPAGES_COUNT=128", "HUGEPAGES_SIZE=2048", "NUMA_NODE=1"}
		if out, err := runScript(t, hugepagesScriptText, env); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got := strings.TrimSpace(read(t, filepath.Join(sys, nr))); got != "128" {
			t.Errorf("nr_hugepages = %q, want 128", got)
		}
		out, err := runScript(t, hugepagesScriptText, []string{"SYSFS=" + sys, "HUGEPAGES_COUNT=1", "HUGEPAGES_SIZE=1048576", "NUMA_NODE=1"})
		if err == nil || !strings.Contains(out, "hugepages-1048576kB/nr_hugepages: no such file") {
			t.Errorf("a missing size: err %v, output %q", err, out)
		}
	})

	t.Run("hugepages target not a file", func(t *testing.T) {
		// nr_hugepages a directory (a kernel without that size on that
		// node has none): an error, not a file written elsewhere.
		sys := tree(t, map[string]string{"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages/x": ""})
		out, err := runScript(t, hugepagesScriptText, []string{"SYSFS=" + sys, "HUGEPAGES_COUNT=4", "HUGEPAGES_SIZE=2048", "NUMA_NODE=0", "HUGEPAGES_RETRIES=1"})
		if err == nil || !strings.Contains(out, "no such file") {
			t.Errorf("err %v, output %q", err, out)
		}
	})

	t.Run("offline cpus", func(t *testing.T) {
		sys := tree(t, map[string]string{"devices/system/cpu/cpu2/online": "1\n", "devices/system/cpu/cpu3/online": "1\n"})
		if out, err := runScript(t, offlineScriptText, []string{"SYSFS=" + sys, "OFFLINE_CPUS=2,3"}); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for _, c := range []string{"2", "3"} {
			if got := strings.TrimSpace(read(t, filepath.Join(sys, "devices/system/cpu/cpu"+c+"/online"))); got != "0" {
				t.Errorf("cpu%s online = %q, want 0", c, got)
			}
		}
		// A CPU without an online file stops the script before any CPU is
		// touched.
		sys = tree(t, map[string]string{"devices/system/cpu/cpu2/online": "1\n"})
		out, err := runScript(t, offlineScriptText, []string{"SYSFS=" + sys, "OFFLINE_CPUS=2,9"})
		if err == nil || !strings.Contains(out, "cpu9 cannot be taken offline") {
			t.Errorf("err %v, output %q", err, out)
		}
		if got := strings.TrimSpace(read(t, filepath.Join(sys, "devices/system/cpu/cpu2/online"))); got != "1" {
			t.Errorf("cpu2 was taken offline before every CPU was checked")
		}
	})

	t.Run("irqbalance banned cpus", func(t *testing.T) {
		dir := tree(t, map[string]string{
			"irqbalance": "IRQBALANCE_ARGS=\nIRQBALANCE_BANNED_CPUS=ffff\n  IRQBALANCE_BANNED_CPUS=1\n",
			"orig":       "ffff\n",
		})
		conf, orig := filepath.Join(dir, "irqbalance"), filepath.Join(dir, "orig")
		if out, err := runScript(t, clearIRQBalanceScriptText, nil, conf, orig); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got := read(t, conf); got != "IRQBALANCE_ARGS=\nIRQBALANCE_BANNED_CPUS=0\n" {
			t.Errorf("irqbalance = %q", got)
		}
		if got := read(t, orig); got != "0\n" {
			t.Errorf("CRI-O's saved mask = %q, want 0", got)
		}
		if out, err := runScript(t, clearIRQBalanceScriptText, []string{"OVS_DPDK_CPUS=800000008"}, conf, orig); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got := read(t, conf); got != "IRQBALANCE_ARGS=\nIRQBALANCE_BANNED_CPUS=800000008\n" {
			t.Errorf("with OVS-DPDK CPUs, irqbalance = %q", got)
		}
		// No irqbalance configuration: nothing to do.
		if out, err := runScript(t, clearIRQBalanceScriptText, nil, filepath.Join(dir, "none"), orig); err != nil {
			t.Errorf("%v: %s", err, out)
		}
	})

	t.Run("rps mask", func(t *testing.T) {
		sys := tree(t, map[string]string{
			"devices/pci0/net/eth0/queues/rx-0/rps_cpus": "0\n",
			"devices/pci0/net/eth0/queues/rx-1/rps_cpus": "0\n",
			"devices/pci0/net/eth1/queues/rx-0/rps_cpus": "ff\n",
		})
		if out, err := runScript(t, rpsScriptText, []string{"SYSFS=" + sys}, "devices/pci0/net/eth0", "3"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if out, err := runScript(t, rpsScriptText, []string{"SYSFS=" + sys}, "devices/pci0/net/eth1/queues/rx-0", "0"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for p, want := range map[string]string{"eth0/queues/rx-0": "3", "eth0/queues/rx-1": "3", "eth1/queues/rx-0": "0"} {
			if got := strings.TrimSpace(read(t, filepath.Join(sys, "devices/pci0/net", p, "rps_cpus"))); got != want {
				t.Errorf("%s rps_cpus = %q, want %q", p, got, want)
			}
		}
		// A device gone by the time the unit runs is not an error.
		if out, err := runScript(t, rpsScriptText, []string{"SYSFS=" + sys}, "devices/pci0/net/gone/queues/rx-0", "3"); err != nil {
			t.Errorf("%v: %s", err, out)
		}
		if out, err := runScript(t, rpsScriptText, []string{"SYSFS=" + sys}, "devices/pci0/net/eth0"); err == nil || !strings.Contains(out, "mask argument is missing") {
			t.Errorf("no mask: err %v, output %q", err, out)
		}
	})

	t.Run("cpuset on cgroup v1", func(t *testing.T) {
		if _, err := exec.LookPath("taskset"); err != nil {
			t.Skip("taskset is not installed")
		}
		cg := tree(t, map[string]string{
			"cpuset/cpuset.sched_load_balance":         "1\n",
			"cpuset/cpuset.mems":                       "0\n",
			"cpuset/cpuset.cpus":                       "0-3\n",
			"cpuset/cgroup.procs":                      "1\n2\n",
			"cpuset/machine.slice/a/cpuset.cpus":       "0-3\n",
			"pids/ovs.slice/ovs-vswitchd/cgroup.procs": "42\n",
		})
		if out, err := runScript(t, cpusetScriptText, []string{"CGROUP_ROOT=" + cg}); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		out, _ := exec.Command("taskset", "-cp", "1").Output()
		fields := strings.Fields(string(out))
		reserved := fields[len(fields)-1]
		for p, want := range map[string]string{
			"cpuset/cpuset.sched_load_balance":           "0",
			"cpuset/system.slice/cpuset.mems":            "0",
			"cpuset/system.slice/cpuset.cpus":            reserved,
			"cpuset/machine.slice/a/cpuset.cpus":         reserved,
			"cpuset/ovs.slice/cpuset.sched_load_balance": "0",
			"cpuset/ovs.slice/cpuset.cpus":               "0-3",
			"cpuset/ovs.slice/cgroup.procs":              "42",
		} {
			if got := strings.TrimSpace(read(t, filepath.Join(cg, p))); got != want {
				t.Errorf("%s = %q, want %q", p, got, want)
			}
		}
		// The tasks moved last to first: 2 then 1 (a plain file keeps the
		// last write).
		if got := strings.TrimSpace(read(t, filepath.Join(cg, "cpuset/system.slice/cgroup.procs"))); got != "1" {
			t.Errorf("system.slice tasks: last moved %q, want 1", got)
		}
	})

	t.Run("ovs-dpdk partition", func(t *testing.T) {
		cg := tree(t, map[string]string{"ovs.slice/ovs-vswitchd.service/cgroup.subtree_control": ""})
		if out, err := runScript(t, ovsDpdkScript("3,35", "isolated"), []string{"CGROUP_ROOT=" + cg}); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for p, want := range map[string]string{
			"ovs.slice/ovs-vswitchd.service/cgroup.subtree_control":              "+cpuset +cpu +pids",
			"ovs.slice/cpuset.cpus.exclusive":                                    "3,35",
			"ovs.slice/ovs-vswitchd.service/cpuset.cpus.exclusive":               "3,35",
			"ovs.slice/ovs-vswitchd.service/ovsdpdk.slice/cpuset.cpus.exclusive": "3,35",
			"ovs.slice/ovs-vswitchd.service/ovsdpdk.slice/cgroup.type":           "threaded",
			"ovs.slice/ovs-vswitchd.service/ovsdpdk.slice/cpuset.cpus.partition": "isolated",
		} {
			if got := strings.TrimSpace(read(t, filepath.Join(cg, p))); got != want {
				t.Errorf("%s = %q, want %q", p, got, want)
			}
		}
		out, err := runScript(t, ovsDpdkScript("3", "member"), []string{"CGROUP_ROOT=" + t.TempDir()})
		if err == nil || !strings.Contains(out, "ovs.slice: no such cgroup") {
			t.Errorf("without ovs.slice: err %v, output %q", err, out)
		}
	})
}
