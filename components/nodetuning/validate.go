package nodetuning

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
// A value longer than maxQuotedValue bytes (a name of 253 is not) is cut
// there, followed by its length ("0-3,0-3,..." (70000 bytes)): an error
// is one readable line, however long the input.
func (e FieldError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Detail
	}
	v := e.Value
	if len(v) > maxQuotedValue {
		cut := maxQuotedValue
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return fmt.Sprintf("%s %q... (%d bytes) %s", e.Field, v[:cut], len(v), e.Detail)
	}
	return fmt.Sprintf("%s %q %s", e.Field, v, e.Detail)
}

// maxQuotedValue is how much of a value an error quotes.
const maxQuotedValue = 256

// topologyPolicies are the kubelet topology manager policies.
var topologyPolicies = []string{"none", "best-effort", "restricted", "single-numa-node"}

// kernelPageSizes are the kernel page sizes of x86_64 (4k) and aarch64 (4k,
// 64k).
var kernelPageSizes = []string{"4k", "64k"}

// hexID is a PCI vendor or device ID as NTO's webhook takes it: 0x and one
// to four hexadecimal digits.
var hexID = regexp.MustCompile(`^0x[0-9a-fA-F]{1,4}$`)

// cpuSets are a profile's CPU sets, parsed.
type cpuSets struct {
	reserved, isolated, offlined, shared, ovsDpdk cpuset.CPUSet
}

// Validate checks a profile as NTO's admission webhook does when it cannot
// see the nodes, plus what makes no sense on any node (a kernel page size
// other than 4k or 64k, 64k pages with the realtime kernel, negative huge
// page counts, NUMA nodes and CPU frequencies, CPU ids above MaxCPUID,
// control characters in text the render writes into TuneD profiles), and
// returns every problem in field order. A profile without problems renders.
func Validate(pp *PerformanceProfile) []FieldError {
	var errs []FieldError
	add := func(field, value, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Value: value, Detail: fmt.Sprintf(format, args...)})
	}
	s := &pp.Spec

	// The longest name derived from the profile's must be a valid name.
	if msgs := validation.IsDNS1123Subdomain(tunedVendorName(pp.Name, "intel-x86")); len(msgs) > 0 {
		add("metadata.name", pp.Name, "cannot name the rendered objects (%s): %s", tunedVendorName(pp.Name, "intel-x86"), strings.Join(msgs, "; "))
	}

	errs = append(errs, validateCPU(s.CPU)...)
	errs = append(errs, validateSelectors(s)...)

	if k := s.KernelPageSize; k != nil {
		if !slices.Contains(kernelPageSizes, *k) {
			add("spec.kernelPageSize", *k, "is not a kernel page size (%s)", strings.Join(kernelPageSizes, ", "))
		} else if *k == "64k" && s.realTimeKernel() {
			add("spec.kernelPageSize", *k, "cannot be used with the realtime kernel (spec.realTimeKernel.enabled)")
		}
	}

	errs = append(errs, validateHugePages(s.HugePages)...)

	if n := s.NUMA; n != nil && n.TopologyPolicy != nil && !slices.Contains(topologyPolicies, *n.TopologyPolicy) {
		add("spec.numa.topologyPolicy", *n.TopologyPolicy, "is not one of %s", strings.Join(topologyPolicies, ", "))
	}

	for i, arg := range s.AdditionalKernelArgs {
		if hasControl(arg) {
			add(fmt.Sprintf("spec.additionalKernelArgs[%d]", i), arg, "holds a control character (a line break would end the TuneD option)")
		}
	}

	if n := s.Net; n != nil {
		for i, d := range n.Devices {
			field := fmt.Sprintf("spec.net.devices[%d]", i)
			if d.InterfaceName != nil && *d.InterfaceName == "" {
				add(field+".interfaceName", "", "must not be empty")
			}
			if d.InterfaceName != nil && hasControl(*d.InterfaceName) {
				add(field+".interfaceName", *d.InterfaceName, "holds a control character")
			}
			if d.VendorID != nil && !hexID.MatchString(*d.VendorID) {
				add(field+".vendorID", *d.VendorID, "is not 0x and up to four hexadecimal digits (a 16-bit PCI id)")
			}
			if d.DeviceID != nil && !hexID.MatchString(*d.DeviceID) {
				add(field+".deviceID", *d.DeviceID, "is not 0x and up to four hexadecimal digits (a 16-bit PCI id)")
			}
			if d.DeviceID != nil && d.VendorID == nil {
				add(field+".deviceID", "", "needs a vendorID")
			}
		}
	}

	if h := s.WorkloadHints; h != nil {
		if h.RealTime != nil && !*h.RealTime && s.realTimeKernel() {
			add("spec.workloadHints.realTime", "", "cannot be false when spec.realTimeKernel.enabled is true")
		}
		if isTrue(h.HighPowerConsumption) && isTrue(h.PerPodPowerManagement) {
			add("spec.workloadHints.perPodPowerManagement", "", "cannot be true together with spec.workloadHints.highPowerConsumption")
		}
		if isTrue(h.MixedCpus) && (s.CPU == nil || s.CPU.Shared == "") {
			add("spec.workloadHints.mixedCpus", "", "needs shared CPUs (spec.cpu.shared)")
		}
	}

	if h := s.HardwareTuning; h != nil {
		if h.IsolatedCpuFreq == nil || h.ReservedCpuFreq == nil {
			add("spec.hardwareTuning", "", "needs both isolatedCpuFreq and reservedCpuFreq")
		} else {
			for _, f := range []struct {
				field string
				v     int64
			}{{"isolatedCpuFreq", *h.IsolatedCpuFreq}, {"reservedCpuFreq", *h.ReservedCpuFreq}} {
				if f.v <= 0 {
					add("spec.hardwareTuning."+f.field, strconv.FormatInt(f.v, 10), "must be a frequency above 0 (kHz)")
				}
			}
		}
	}
	return errs
}

// validateHugePages checks the huge pages: a default size with pages, known
// sizes, counts and nodes not negative, no size repeated on one node (or
// without one).
func validateHugePages(hp *HugePages) []FieldError {
	if hp == nil {
		return nil
	}
	var errs []FieldError
	add := func(field, value, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Value: value, Detail: fmt.Sprintf(format, args...)})
	}
	if hp.DefaultHugePagesSize == "" && len(hp.Pages) > 0 {
		add("spec.hugepages.defaultHugepagesSize", "", "required when pages are given")
	} else if hp.DefaultHugePagesSize != "" && !slices.Contains(hugePageSizes, hp.DefaultHugePagesSize) {
		add("spec.hugepages.defaultHugepagesSize", hp.DefaultHugePagesSize, "is not a known huge page size (%s)", knownHugePageSizes(hugePageSizes))
	}
	seen := map[string]int{}
	for i, p := range hp.Pages {
		field := fmt.Sprintf("spec.hugepages.pages[%d]", i)
		if p.Size == "" {
			add(field+".size", "", "required (a size such as 2M)")
		} else if !slices.Contains(hugePageSizes, p.Size) {
			add(field+".size", p.Size, "is not a known huge page size (%s)", knownHugePageSizes(hugePageSizes))
		}
		if p.Count < 0 {
			add(field+".count", strconv.Itoa(int(p.Count)), "must not be negative")
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
	return errs
}

// Warnings are what NTO's webhook rejects once it sees the nodes, but the
// render cannot know (so NTO's render renders them too): huge page sizes
// that aarch64 does not offer with 64k kernel pages.
func Warnings(pp *PerformanceProfile) []FieldError {
	var out []FieldError
	s := &pp.Spec
	if !s.kernelPageSize64k() || s.HugePages == nil {
		return nil
	}
	check := func(field, size string) {
		if size != "" && !slices.Contains(hugePageSizes64k, size) {
			out = append(out, FieldError{Field: field, Value: size, Detail: fmt.Sprintf(
				"is not a huge page size of aarch64 with 64k kernel pages (%s): NTO's webhook rejects it once it sees the nodes", knownHugePageSizes(hugePageSizes64k))})
		}
	}
	check("spec.hugepages.defaultHugepagesSize", s.HugePages.DefaultHugePagesSize)
	for i, p := range s.HugePages.Pages {
		check(fmt.Sprintf("spec.hugepages.pages[%d].size", i), p.Size)
	}
	return out
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
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
		{field: "spec.cpu.shared", value: c.Shared, set: &sets.shared},
		{field: "spec.cpu.ovsDpdk", value: c.OvsDpdk, set: &sets.ovsDpdk},
	}
	for _, n := range list {
		s, err := ParseCPUList(n.value)
		if err != nil {
			errs = append(errs, FieldError{Field: n.field, Value: n.value, Detail: "is not a CPU list such as \"0-3,8\": " + err.Error()})
			continue
		}
		if n.required && s.IsEmpty() {
			errs = append(errs, FieldError{Field: n.field, Detail: "required (a CPU list such as \"0-1\")"})
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
// machineConfigLabel.
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
	switch {
	case len(s.NodeSelector) == 0:
		add("spec.nodeSelector", "", "required (for example node-role.kubernetes.io/worker-cnf: \"\")")
	case len(s.NodeSelector) > 1:
		add("spec.nodeSelector", "", "must have exactly one label, has %d", len(s.NodeSelector))
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
	if (s.MachineConfigLabel == nil || s.MachineConfigPoolSelector == nil) && len(s.NodeSelector) == 1 {
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
		if _, role, ok := strings.Cut(k, "/"); ok && role != "" && !strings.Contains(role, "/") {
			return role, nil
		}
		return "", fmt.Errorf("label %q is not <domain>/<role>", k)
	}
	return "", nil
}
