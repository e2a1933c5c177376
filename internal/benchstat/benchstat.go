// Package benchstat holds the small statistics the benchmark commands
// under hack/ share: the median of a set of runs and the list of runs as
// their Markdown tables print it.
//
// It is for those commands (and their tests) only; the command and the
// libraries never import it. It imports only the standard library.
package benchstat

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Number is what Median takes: durations, counts and float64 nanoseconds.
type Number interface {
	~int64 | ~float64
}

// Median returns the median of v, the mean of the two middle values when
// v has an even length, and 0 when v is empty. It does not change v.
func Median[T Number](v []T) T {
	s := append([]T(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Seconds lists v in seconds with two decimals, separated by spaces, in
// the order given: "1.23 1.20 1.31".
func Seconds(v []time.Duration) string {
	parts := make([]string, len(v))
	for i, d := range v {
		parts[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return strings.Join(parts, " ")
}
