// Package quantity parses Kubernetes resource quantities ("500Mi", "100m",
// "1e3") from input the project does not control, within bounds that keep
// parsing and arithmetic on them cheap.
//
// resource.ParseQuantity accepts any decimal exponent ("1e999999999",
// "E000666666660"); parsing a large negative one, or adding, comparing or
// printing a large positive one, makes inf.Dec compute a power of ten with
// that many digits, which runs for minutes and grows memory without limit.
// Parse refuses those before resource.ParseQuantity sees them.
//
// May import: nothing.
// Cluster I/O: none.
package quantity

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxLen is the longest quantity string Parse reads, in bytes; the longest
// int64 with a fraction and a suffix fits well within it.
const MaxLen = 64

// The decimal scale Parse accepts: no finer than nano (what Kubernetes
// itself keeps, 10^-9) and no larger than 10^18 units before the digits,
// which with the digits MaxLen allows stays far below a power of ten that
// costs anything to compute.
const (
	minExponent = -9
	maxExponent = 18
)

// Parse parses s as resource.ParseQuantity does, and refuses a string
// longer than MaxLen or a quantity whose decimal exponent lies outside
// 10^-9 to 10^18 (including what a binary suffix becomes) or whose value
// lies beyond an int64 either way. The error
// names what is wrong but not the value; callers name the field and quote
// the value.
func Parse(s string) (resource.Quantity, error) {
	if len(s) > MaxLen {
		return resource.Quantity{}, fmt.Errorf("longer than %d bytes (%d)", MaxLen, len(s))
	}
	if err := exponentBound(s); err != nil {
		return resource.Quantity{}, err
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, err
	}
	// AsDec works on a copy: it changes the quantity's internal form.
	c := q.DeepCopy()
	d := c.AsDec()
	// inf.Dec's scale is the negated exponent: value = unscaled * 10^-scale.
	if exp := -int64(d.Scale()); exp < minExponent || exp > maxExponent {
		return resource.Quantity{}, fmt.Errorf("exponent 10^%d is out of range (10^%d to 10^%d)", exp, minExponent, maxExponent)
	}
	// Beyond an int64 the quantity library prints values it cannot read
	// back the same ("1e22" prints as "10"), and nothing Kubernetes counts
	// is that large.
	if q.CmpInt64(math.MaxInt64) > 0 || q.CmpInt64(math.MinInt64) < 0 {
		return resource.Quantity{}, fmt.Errorf("out of range (beyond %d either way)", int64(math.MaxInt64))
	}
	return q, nil
}

// maxWrittenExponent bounds the exponent as written ("1e-12" with 12
// digits after the point is 10^-9 after all); what the quantity ends up
// with is checked after parsing.
const maxWrittenExponent = 64

// exponentBound refuses a decimal exponent suffix ("e12", "E-3") whose
// magnitude is above maxWrittenExponent, reading the string as the
// quantity grammar does: a sign, digits, an optional point and digits,
// then the suffix.
func exponentBound(s string) error {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	suffix := s[i:]
	if len(suffix) < 2 || (suffix[0] != 'e' && suffix[0] != 'E') {
		return nil
	}
	exp := strings.TrimLeft(suffix[1:], "+-")
	if len(suffix[1:])-len(exp) > 1 || strings.Trim(exp, "0123456789") != "" {
		return nil // not an exponent ("Ei"); resource.ParseQuantity judges it
	}
	digits := strings.TrimLeft(exp, "0")
	if digits == "" {
		return nil
	}
	if n, err := strconv.Atoi(digits); err != nil || n > maxWrittenExponent {
		return fmt.Errorf("exponent %s is out of range (at most %d either way)", clipDigits(suffix[1:]), maxWrittenExponent)
	}
	return nil
}

// clipDigits shortens a long exponent for an error.
func clipDigits(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}
