// Package benchstat holds what the benchmark commands under hack/ share
// of the house method: the order of the contenders in alternating rounds,
// the median of a set of runs, and the Markdown table of medians and runs
// they print.
//
// It is for those commands (and their tests) only; the command and the
// libraries never import it. It imports only the standard library.
//
// May import: nothing.
// Cluster I/O: none.
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

// Order returns the order to run names in, in round r (counted from 0)
// of an alternating comparison: as given in even rounds, in reverse
// lexical order in odd ones, so that no contender always runs first. It
// does not change names.
func Order(names []string, r int) []string {
	order := append([]string(nil), names...)
	if r%2 == 1 {
		sort.Sort(sort.Reverse(sort.StringSlice(order)))
	}
	return order
}

// Header is the head of the Markdown table of runs that Row fills.
const Header = "| contender | median | runs (s) |\n| --- | --- | --- |\n"

// Row is the line of the table under Header for contender name: its
// median in seconds and its runs, as Seconds lists them.
func Row(name string, runs []time.Duration) string {
	return fmt.Sprintf("| %s | %.2f s | %s |\n", name, Median(runs).Seconds(), Seconds(runs))
}

// Rounds runs the contenders alternately (Order) for rounds rounds, timing
// each run with run, and returns every contender's times in round order.
// A run that returns 0 and no error is not timed (a contender that keeps
// its own records). Each timed run is logged on logf as "tool: round N
// contender duration"; the first error stops the rounds and names its
// round and contender.
func Rounds(tool string, rounds int, contenders []string, run func(round int, c string) (time.Duration, error), logf func(format string, args ...any)) (map[string][]time.Duration, error) {
	times := map[string][]time.Duration{}
	for r := 0; r < rounds; r++ {
		for _, c := range Order(contenders, r) {
			d, err := run(r, c)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, c, err)
			}
			if d == 0 {
				continue
			}
			logf("%s: round %d %-8s %s\n", tool, r+1, c, d.Round(time.Millisecond))
			times[c] = append(times[c], d)
		}
	}
	return times, nil
}
