package nodetuning

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// hugePageSizes are the huge page sizes a profile may name (x86_64, and
// aarch64 with 4k or 64k kernel pages), as NTO's webhook knows them when it
// cannot see the nodes.
var hugePageSizes = []string{"64k", "2M", "32M", "512M", "1G", "16G"}

// hugePageSizes64k are the sizes aarch64 offers with 64k kernel pages.
var hugePageSizes64k = []string{"2M", "512M", "16G"}

// maxSizeDigits bounds the digits of a size, so that it fits an int64 in
// kB whatever its unit.
const maxSizeDigits = 9

// ParseHugePageSize returns the size in kB of a huge page size written as a
// whole number and a binary unit: k, M, G or T (either case, optionally
// followed by "i" and "B": "2M", "1Gi", "64kB"). Sizes below 1 kB and more
// than nine digits are errors.
func ParseHugePageSize(s string) (int64, error) {
	digits := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(s)
	}
	num, unit := s[:digits], s[digits:]
	if num == "" {
		return 0, fmt.Errorf("%q: want a number and a unit such as 2M", s)
	}
	if len(num) > maxSizeDigits {
		return 0, fmt.Errorf("%q: more than %d digits", s, maxSizeDigits)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	u := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "b"), "i")
	var shift uint
	switch strings.ToLower(u) {
	case "k":
		shift = 0
	case "m":
		shift = 10
	case "g":
		shift = 20
	case "t":
		shift = 30
	default:
		return 0, fmt.Errorf("%q: unit %q: want k, M, G or T", s, unit)
	}
	if n == 0 {
		return 0, fmt.Errorf("%q: a huge page has a size", s)
	}
	return n << shift, nil
}

// knownHugePageSizes lists sizes for messages.
func knownHugePageSizes(sizes []string) string {
	sorted := append([]string(nil), sizes...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, _ := ParseHugePageSize(sorted[i])
		b, _ := ParseHugePageSize(sorted[j])
		return a < b
	})
	return strings.Join(sorted, ", ")
}
