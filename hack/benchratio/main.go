// Command benchratio compares two sub-benchmarks of one Go benchmark in one
// run: it builds the package's test binary once, then runs the two
// sub-benchmarks alternately (A B, B A, A B, ...) for a number of rounds and
// prints each side's median and the ratio of the medians. Shared, noisy
// machines make absolute times meaningless; alternating runs in one session
// make the ratio meaningful.
//
// Usage:
//
//	go run ./hack/benchratio -pkg ./plan -bench BenchmarkLoadSelectGraph -a ours -b reference [-rounds 7] [-benchtime 3x]
//
// May import: internal/benchstat.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/payload-apply/payload-apply/internal/benchstat"
)

var nsPerOp = regexp.MustCompile(`\s([0-9.]+) ns/op`)

func main() {
	pkg := flag.String("pkg", "", "package holding the benchmark, e.g. ./plan")
	bench := flag.String("bench", "", "benchmark function, e.g. BenchmarkLoadSelectGraph")
	a := flag.String("a", "ours", "first sub-benchmark")
	b := flag.String("b", "reference", "second sub-benchmark (the ratio is a/b)")
	rounds := flag.Int("rounds", 7, "alternating rounds")
	benchtime := flag.String("benchtime", "1x", "-test.benchtime for each run")
	flag.Parse()
	if *pkg == "" || *bench == "" {
		fmt.Fprintln(os.Stderr, "usage: benchratio -pkg PKG -bench BenchmarkX [-a ours -b reference] [-rounds N] [-benchtime D]")
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "benchratio")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bench.test")
	build := exec.Command("go", "test", "-c", "-o", bin, *pkg)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fail(fmt.Errorf("build %s: %w", *pkg, err))
	}
	times := map[string][]float64{}
	for r := 0; r < *rounds; r++ {
		order := []string{*a, *b}
		if r%2 == 1 {
			order = []string{*b, *a}
		}
		for _, sub := range order {
			ns, err := runOnce(bin, *pkg, *bench, sub, *benchtime)
			if err != nil {
				fail(err)
			}
			times[sub] = append(times[sub], ns)
		}
	}
	ma, mb := benchstat.Median(times[*a]), benchstat.Median(times[*b])
	fmt.Printf("%s (%d alternating rounds, benchtime %s)\n", *bench, *rounds, *benchtime)
	fmt.Printf("  %-12s median %10.1f ms  runs %s\n", *a, ma/1e6, list(times[*a]))
	fmt.Printf("  %-12s median %10.1f ms  runs %s\n", *b, mb/1e6, list(times[*b]))
	fmt.Printf("  ratio %s/%s = %.2f\n", *a, *b, ma/mb)
}

func runOnce(bin, pkg, bench, sub, benchtime string) (float64, error) {
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", "^"+bench+"$/^"+regexp.QuoteMeta(sub)+"$", "-test.benchtime", benchtime)
	// Test binaries run in their package directory.
	cmd.Dir = pkg
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s/%s: %w\n%s", bench, sub, err, out.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, bench+"/"+sub) {
			continue
		}
		if m := nsPerOp.FindStringSubmatch(line); m != nil {
			return strconv.ParseFloat(m[1], 64)
		}
	}
	return 0, fmt.Errorf("%s/%s: no result (skipped?):\n%s", bench, sub, out.String())
}

func list(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.0f", x/1e6)
	}
	return strings.Join(parts, " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchratio:", err)
	os.Exit(1)
}
