package nodetuning

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// MaxCPUID is the highest CPU id a CPU list may name: the kernel's
// NR_CPUS on RHEL (8192 CPUs) less one. Lists are checked against it before
// anything is expanded, so "2-2000000000" is an error, not 2 billion CPUs.
const MaxCPUID = 8191

// maxCPUListLen bounds the text of a CPU list.
const maxCPUListLen = 64 << 10

// ParseCPUList parses a Linux CPU list such as "0-3,8,10-11" (the syntax of
// k8s.io/utils/cpuset.Parse: comma-separated ids and inclusive ranges of
// decimal numbers, no spaces; "" is the empty set). Ids above MaxCPUID,
// reversed ranges and anything else are errors saying which part is wrong.
func ParseCPUList(s string) (cpuset.CPUSet, error) {
	if s == "" {
		return cpuset.New(), nil
	}
	if len(s) > maxCPUListLen {
		return cpuset.CPUSet{}, fmt.Errorf("%d characters, more than %d", len(s), maxCPUListLen)
	}
	var seen [MaxCPUID + 1]bool
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		start, err := cpuID(lo)
		if err != nil {
			return cpuset.CPUSet{}, fmt.Errorf("%q: %w", part, err)
		}
		end := start
		if isRange {
			if end, err = cpuID(hi); err != nil {
				return cpuset.CPUSet{}, fmt.Errorf("%q: %w", part, err)
			}
			if start > end {
				return cpuset.CPUSet{}, fmt.Errorf("%q: range from %d down to %d", part, start, end)
			}
		}
		for id := start; id <= end; id++ {
			seen[id] = true
		}
	}
	var ids []int
	for id, ok := range seen {
		if ok {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...), nil
}

// cpuID parses one CPU id.
func cpuID(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("a CPU id is missing")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a CPU id (a decimal number)", s)
		}
	}
	if len(s) > 6 {
		return 0, fmt.Errorf("CPU %s is above the highest CPU id %d", s, MaxCPUID)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a CPU id: %w", s, err)
	}
	if n > MaxCPUID {
		return 0, fmt.Errorf("CPU %d is above the highest CPU id %d", n, MaxCPUID)
	}
	return n, nil
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

// cpuMask prints a CPU set as one hexadecimal number without leading zeros
// ("3" for CPUs 0 and 1; "0" for none), as irqbalance reads its banned CPUs.
func cpuMask(s cpuset.CPUSet) string {
	m := new(big.Int)
	for _, c := range s.List() {
		m.SetBit(m, c, 1)
	}
	return m.Text(16)
}

// cpuMaskList prints a CPU set as the kernel's comma-separated mask of
// 32-bit words, most significant first, each eight hexadecimal digits,
// without leading all-zero words ("00000003"; "00000001,00000000" for CPU
// 32), as /proc/sys/net/core/rps_default_mask reads it.
func cpuMaskList(s cpuset.CPUSet) string {
	words := 1
	if list := s.List(); len(list) > 0 {
		words = list[len(list)-1]/32 + 1
	}
	parts := make([]uint32, words)
	for _, c := range s.List() {
		parts[words-1-c/32] |= 1 << (c % 32)
	}
	out := make([]string, words)
	for i, w := range parts {
		out[i] = fmt.Sprintf("%08x", w)
	}
	return strings.Join(out, ",")
}
