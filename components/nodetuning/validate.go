package nodetuning

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/cpuset"
)

// FieldError is one problem with one field of a PerformanceProfile.
type FieldError struct {
	// Field is the path of the field, e.g. "spec.cpu.isolated".
	Field string
	// Value is the offending value, or "" when the problem is not about a
	// value (a missing field, for one).
	Value string
	// Detail says what is wrong.
	Detail string
}

// Error prints `FIELD "VALUE" DETAIL`, or `FIELD: DETAIL` without a value.
func (e FieldError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Detail
	}
	return fmt.Sprintf("%s %q %s", e.Field, e.Value, e.Detail)
}

// hugePageSizes are the huge page sizes a profile may name (x86_64 and
// aarch64 with either kernel page size), with their size in kB.
var hugePageSizes = map[string]int64{
	"64k":  64,
	"2M":   2 << 10,
	"32M":  32 << 10,
	"512M": 512 << 10,
	"1G":   1 << 20,
	"16G":  16 << 20,
}

// knownHugePageSizes lists hugePageSizes from small to big, for messages.
func knownHugePageSizes() string {
	names := make([]string, 0, len(hugePageSizes))
	for n := range hugePageSizes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return hugePageSizes[names[i]] < hugePageSizes[names[j]] })
	return strings.Join(names, ", ")
}

// topologyPolicies are the kubelet topology manager policies.
var topologyPolicies = []string{"none", "best-effort", "restricted", "single-numa-node"}

// hexID is a PCI vendor or device ID.
var hexID = regexp.MustCompile(`^0x[0-9a-fA-F]{4}$`)

// cpuSets are a profile's CPU sets, parsed.
type cpuSets struct {
	reserved, isolated, offlined cpuset.CPUSet
}

// Validate checks a profile and returns every problem, in field order. A
// profile without problems renders.
func Validate(pp *PerformanceProfile) []FieldError {
	var errs []FieldError
	add := func(field, value, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Value: value, Detail: fmt.Sprintf(format, args...)})
	}

	// The longest name derived from the profile's must be a valid name.
	if msgs := validation.IsDNS1123Subdomain(tunedName(pp.Name)); len(msgs) > 0 {
		add("metadata.name", pp.Name, "cannot name the rendered objects (%s): %s", tunedName(pp.Name), strings.Join(msgs, "; "))
	}

	errs = append(errs, validateCPU(pp.Spec.CPU)...)
	errs = append(errs, validateSelectors(&pp.Spec)...)

	if hp := pp.Spec.HugePages; hp != nil {
		if hp.DefaultHugePagesSize == "" && len(hp.Pages) > 0 {
			add("spec.hugepages.defaultHugepagesSize", "", "required when pages are given")
		} else if _, ok := hugePageSizes[hp.DefaultHugePagesSize]; !ok && hp.DefaultHugePagesSize != "" {
			add("spec.hugepages.defaultHugepagesSize", hp.DefaultHugePagesSize, "is not a known huge page size (%s)", knownHugePageSizes())
		}
		seen := map[string]int{}
		for i, p := range hp.Pages {
			field := fmt.Sprintf("spec.hugepages.pages[%d]", i)
			if p.Size == "" {
				add(field+".size", "", "required")
			} else if _, ok := hugePageSizes[p.Size]; !ok {
				add(field+".size", p.Size, "is not a known huge page size (%s)", knownHugePageSizes())
			}
			if p.Count < 1 {
				add(field+".count", strconv.Itoa(int(p.Count)), "must be at least 1")
			}
			key, where := p.Size, "without a NUMA node"
			if p.Node != nil {
				if *p.Node < 0 {
					add(field+".node", strconv.Itoa(int(*p.Node)), "must not be negative")
				}
				key, where = fmt.Sprintf("%s/%d", p.Size, *p.Node), fmt.Sprintf("on NUMA node %d", *p.Node)
			}
			if j, ok := seen[key]; ok {
				add(field, "", "repeats spec.hugepages.pages[%d]: pages of size %s %s", j, p.Size, where)
			} else {
				seen[key] = i
			}
		}
	}

	if n := pp.Spec.NUMA; n != nil && n.TopologyPolicy != nil && !slices.Contains(topologyPolicies, *n.TopologyPolicy) {
		add("spec.numa.topologyPolicy", *n.TopologyPolicy, "is not one of %s", strings.Join(topologyPolicies, ", "))
	}

	for i, arg := range pp.Spec.AdditionalKernelArgs {
		field := fmt.Sprintf("spec.additionalKernelArgs[%d]", i)
		switch {
		case strings.TrimSpace(arg) == "":
			add(field, "", "must not be empty")
		case strings.ContainsAny(arg, " \t\n\r"):
			add(field, arg, "must be one argument, without spaces")
		}
	}

	if h := pp.Spec.WorkloadHints; h != nil {
		if isTrue(h.HighPowerConsumption) && isTrue(h.PerPodPowerManagement) {
			add("spec.workloadHints.perPodPowerManagement", "", "cannot be true together with spec.workloadHints.highPowerConsumption")
		}
		if h.RealTime != nil && !*h.RealTime && pp.Spec.realTimeKernel() {
			add("spec.workloadHints.realTime", "", "cannot be false when spec.realTimeKernel.enabled is true")
		}
		if isTrue(h.MixedCpus) {
			add("spec.workloadHints.mixedCpus", "", "needs shared CPUs, which this version of the API cannot describe")
		}
	}

	if n := pp.Spec.Net; n != nil {
		for i, d := range n.Devices {
			field := fmt.Sprintf("spec.net.devices[%d]", i)
			if d.InterfaceName != nil && strings.TrimPrefix(*d.InterfaceName, "!") == "" {
				add(field+".interfaceName", *d.InterfaceName, "names no interface")
			}
			if d.VendorID != nil && !hexID.MatchString(*d.VendorID) {
				add(field+".vendorID", *d.VendorID, "is not 0x and four hexadecimal digits")
			}
			if d.DeviceID != nil && !hexID.MatchString(*d.DeviceID) {
				add(field+".deviceID", *d.DeviceID, "is not 0x and four hexadecimal digits")
			}
			if d.DeviceID != nil && d.VendorID == nil {
				add(field+".deviceID", "", "needs a vendorID")
			}
		}
	}
	return errs
}

// validateCPU checks the CPU sets: they must parse, reserved and isolated
// must not be empty, and no two may overlap.
func validateCPU(c *CPU) []FieldError {
	if c == nil {
		return []FieldError{{Field: "spec.cpu", Detail: "required"}}
	}
	_, errs := parseCPUs(c)
	return errs
}

// parseCPUs parses the CPU sets of a profile, with the problems found.
func parseCPUs(c *CPU) (cpuSets, []FieldError) {
	var sets cpuSets
	var errs []FieldError
	type named struct {
		field, value string
		set          *cpuset.CPUSet
		required     bool
		ok           bool
	}
	list := []*named{
		{field: "spec.cpu.reserved", value: c.Reserved, set: &sets.reserved, required: true},
		{field: "spec.cpu.isolated", value: c.Isolated, set: &sets.isolated, required: true},
		{field: "spec.cpu.offlined", value: c.Offlined, set: &sets.offlined},
	}
	for _, n := range list {
		if strings.TrimSpace(n.value) == "" {
			if n.required {
				errs = append(errs, FieldError{Field: n.field, Detail: "required (a CPU set such as \"0-1\")"})
			}
			continue
		}
		s, err := cpuset.Parse(n.value)
		if err != nil {
			errs = append(errs, FieldError{Field: n.field, Value: n.value, Detail: "is not a CPU set such as \"0-3,8\""})
			continue
		}
		*n.set, n.ok = s, true
	}
	for i, a := range list {
		for _, b := range list[:i] {
			if !a.ok || !b.ok {
				continue
			}
			if !a.set.Intersection(*b.set).IsEmpty() {
				errs = append(errs, FieldError{Field: a.field, Value: a.value,
					Detail: fmt.Sprintf("overlaps %s %q", b.field, b.value)})
			}
		}
	}
	return sets, errs
}

// roleLabel is the machine config role label, the default of
// machineConfigLabel and machineConfigPoolSelector.
const roleLabel = "machineconfiguration.openshift.io/role"

// validateSelectors checks the node selector and the machine config label
// and pool selector, which default to the node selector's role.
func validateSelectors(s *PerformanceProfileSpec) []FieldError {
	var errs []FieldError
	add := func(field, value, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Value: value, Detail: fmt.Sprintf(format, args...)})
	}
	checkLabels := func(field string, m map[string]string) {
		for _, k := range sortedKeys(m) {
			if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
				add(field, k, "is not a label key: %s", strings.Join(msgs, "; "))
			}
			if msgs := validation.IsValidLabelValue(m[k]); len(msgs) > 0 {
				add(fmt.Sprintf("%s[%q]", field, k), m[k], "is not a label value: %s", strings.Join(msgs, "; "))
			}
		}
	}
	if len(s.NodeSelector) == 0 {
		add("spec.nodeSelector", "", "required (for example node-role.kubernetes.io/worker-cnf: \"\")")
	}
	checkLabels("spec.nodeSelector", s.NodeSelector)
	for _, f := range []struct {
		field string
		m     map[string]string
	}{{"spec.machineConfigLabel", s.MachineConfigLabel}, {"spec.machineConfigPoolSelector", s.MachineConfigPoolSelector}} {
		if f.m != nil && len(f.m) != 1 {
			add(f.field, "", "must have exactly one label, has %d", len(f.m))
		}
		checkLabels(f.field, f.m)
	}
	if (s.MachineConfigLabel == nil || s.MachineConfigPoolSelector == nil) && len(s.NodeSelector) > 0 {
		if _, err := nodeRole(s.NodeSelector); err != nil {
			add("spec.nodeSelector", "", "%v, to default spec.machineConfigLabel and spec.machineConfigPoolSelector", err)
		}
	}
	return errs
}

// nodeRole returns the role of a node selector of one label <domain>/<role>.
func nodeRole(sel map[string]string) (string, error) {
	if len(sel) != 1 {
		return "", fmt.Errorf("must have exactly one label <domain>/<role>, has %d", len(sel))
	}
	for k := range sel {
		if _, role, ok := strings.Cut(k, "/"); ok && role != "" {
			return role, nil
		}
		return "", fmt.Errorf("label %q is not <domain>/<role>", k)
	}
	return "", nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
