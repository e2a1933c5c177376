// Command renderbench measures `payload-apply render --list` of a payload
// directory as users run it, one process per run, against the reference
// path (hack/refrender: library-go alone, serially, as the CVO decides
// what a release installs), in alternating rounds:
//
//   - cold: render --list with an empty plan cache (XDG_CACHE_HOME of its
//     own): the payload parsed, the cache written;
//   - warm: render --list with the plan cache cold filled before the first
//     round: the payload fingerprinted, its parse decoded;
//   - reference: hack/refrender PAYLOAD_DIR.
//
// Every run's output is checked (cold and warm print the same list). It
// prints the medians of wall time, CPU time, peak RSS (VmHWM, benchstat.WatchMemory) and peak
// anonymous RSS (RssAnon of /proc/PID/status, sampled every millisecond:
// the memory the process allocated, without the pages of its binary that
// it touched, which differ with the binary's size) of each, and the ratios
// to the reference, as Markdown.
//
// Usage (from the repository root):
//
//	go run ./hack/renderbench [-payload ../shared/testdata/ocp-payload] [-rounds 9]
//
// May import: internal/benchstat, internal/gobuild.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/payload-apply/payload-apply/internal/benchstat"
	"github.com/payload-apply/payload-apply/internal/gobuild"
)

func main() {
	payloadDir := flag.String("payload", "../shared/testdata/ocp-payload", "payload directory")
	rounds := flag.Int("rounds", 9, "alternating rounds")
	flag.Parse()
	if err := run(*payloadDir, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "renderbench:", err)
		os.Exit(1)
	}
}

// sample is one run: wall, CPU (user + system), peak RSS and peak
// anonymous RSS (what the process allocated, without the pages of its
// binary; sampled).
type sample struct {
	wall, cpu time.Duration
	rss, anon int64 // KiB
}

func run(payloadDir string, rounds int) error {
	work, err := os.MkdirTemp("", "renderbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	pa, ref := filepath.Join(work, "payload-apply"), filepath.Join(work, "refrender")
	for bin, pkg := range map[string]string{pa: "./cmd/payload-apply", ref: "./hack/refrender"} {
		build := gobuild.Command(bin, pkg)
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build %s: %w", pkg, err)
		}
	}
	warmCache := filepath.Join(work, "warm")
	var want string
	once := func(c string) (sample, string, error) {
		var cmd *exec.Cmd
		switch c {
		case "reference":
			cmd = exec.Command(ref, payloadDir)
		case "cold", "warm":
			cache := warmCache
			if c == "cold" {
				if cache, err = os.MkdirTemp(work, "cold"); err != nil {
					return sample{}, "", err
				}
				defer os.RemoveAll(cache)
			}
			cmd = exec.Command(pa, "render", "--list", "--payload", payloadDir)
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		default:
			return sample{}, "", fmt.Errorf("unknown contender %q", c)
		}
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return sample{}, "", fmt.Errorf("%s: %w", c, err)
		}
		mem := benchstat.WatchMemory(cmd.Process.Pid)
		err := cmd.Wait()
		wall := time.Since(start)
		m := mem()
		if err != nil {
			return sample{}, "", fmt.Errorf("%s: %w: %s", c, err, errOut.String())
		}
		return sample{wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), m.Peak, m.PeakAnon}, out.String(), nil
	}
	// Fill the warm cache; the cold output is what every run must print.
	if _, want, err = once("cold"); err != nil {
		return err
	}
	if _, _, err = once("warm"); err != nil {
		return err
	}
	contenders := []string{"cold", "warm", "reference"}
	samples := map[string][]sample{}
	times, err := benchstat.Rounds("renderbench", rounds, contenders, func(_ int, c string) (time.Duration, error) {
		s, out, err := once(c)
		if err != nil {
			return 0, err
		}
		if c != "reference" && out != want {
			return 0, fmt.Errorf("%s: another list than the first cold run's", c)
		}
		if c == "reference" && strings.Count(out, "\n") == 0 {
			return 0, fmt.Errorf("reference: printed nothing")
		}
		samples[c] = append(samples[c], s)
		return s.wall, nil
	}, func(format string, args ...any) { fmt.Fprintf(os.Stderr, format, args...) })
	if err != nil {
		return err
	}
	med := func(c string, f func(sample) float64) float64 {
		v := make([]float64, len(samples[c]))
		for i, s := range samples[c] {
			v[i] = f(s)
		}
		return benchstat.Median(v)
	}
	wall := func(s sample) float64 { return s.wall.Seconds() }
	cpu := func(s sample) float64 { return s.cpu.Seconds() }
	rss := func(s sample) float64 { return float64(s.rss) / 1024 }
	anon := func(s sample) float64 { return float64(s.anon) / 1024 }
	fmt.Println("| run | wall (median) | CPU (median) | peak RSS (median) | peak anonymous RSS (median, sampled) | wall runs (s) |")
	fmt.Println("| --- | --- | --- | --- | --- | --- |")
	for _, c := range contenders {
		fmt.Printf("| %s | %.3f s | %.3f s | %.1f MiB | %.1f MiB | %s |\n", c, med(c, wall), med(c, cpu), med(c, rss), med(c, anon), benchstat.Seconds(times[c]))
	}
	for _, c := range []string{"cold", "warm"} {
		fmt.Printf("| **%s / reference** | wall **%.2f** | CPU %.2f | peak RSS **%.2f** | anonymous %.2f | |\n", c,
			med(c, wall)/med("reference", wall), med(c, cpu)/med("reference", cpu), med(c, rss)/med("reference", rss), med(c, anon)/med("reference", anon))
	}
	return nil
}
