// Command benchscale measures how payload-apply scales with the payload: it
// generates synthetic payloads (internal/genpayload) at several scales,
// builds the command once, then runs a command line over each payload in
// alternating rounds (1x, 10x, 1x, 10x, ...) as separate processes, and
// prints per scale the median wall time, CPU time (user+sys) and peak
// resident memory (the kernel's maximum RSS of the child, from wait4), the
// peak RSS over the payload's bytes on disk, and the slopes between
// consecutive scales.
//
// Usage:
//
//	go run ./hack/benchscale [-scales 1,10] [-rounds 5] [-seed 1] [-dir DIR] [-bin PATH] [-- render --list]
//
// -scales 1,10,100 adds the hundredfold payload (about 1 GB; minutes to
// generate and run). -dir keeps the generated payloads there (reused when
// present) instead of a temporary directory. Arguments after -- replace the
// command measured (default: render --list); --payload DIR is appended.
//
// May import: internal/genpayload, internal/gobuild.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/payload-apply/payload-apply/internal/genpayload"
	"github.com/payload-apply/payload-apply/internal/gobuild"
)

// sample is one run of the command.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

// scaleRun is what benchscale knows about one scale.
type scaleRun struct {
	scale   int
	dir     string
	files   int
	bytes   int64
	samples []sample
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == childFlag {
		child(os.Args[2:])
		return
	}
	scalesFlag := flag.String("scales", "1,10", "comma-separated scales to generate and measure")
	rounds := flag.Int("rounds", 5, "alternating rounds")
	seed := flag.Uint64("seed", 1, "generator seed")
	dir := flag.String("dir", "", "keep the generated payloads in DIR/seed-S-xN (reused when present)")
	binFlag := flag.String("bin", "", "measure this payload-apply binary instead of building ./cmd/payload-apply (to compare builds)")
	flag.Parse()
	command := flag.Args()
	if len(command) == 0 {
		command = []string{"render", "--list"}
	}
	var scales []int
	for _, s := range strings.Split(*scalesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-scales: %q is not a positive number", s))
		}
		scales = append(scales, n)
	}

	tmp, err := os.MkdirTemp("", "benchscale")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	root := *dir
	if root == "" {
		root = tmp
	}
	bin := *binFlag
	if bin == "" {
		bin = filepath.Join(tmp, "payload-apply")
		build := gobuild.Command(bin, "./cmd/payload-apply")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fail(fmt.Errorf("build: %w", err))
		}
	}

	runs := make([]*scaleRun, len(scales))
	for i, scale := range scales {
		r := &scaleRun{scale: scale, dir: filepath.Join(root, fmt.Sprintf("seed-%d-x%d", *seed, scale))}
		if _, err := os.Stat(filepath.Join(r.dir, "release-manifests", "release-metadata")); err != nil {
			start := time.Now()
			if _, _, _, err := genpayload.Write(r.dir, genpayload.Options{Seed: *seed, Scale: scale}); err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "generated %s in %.1f s\n", r.dir, time.Since(start).Seconds())
		}
		if r.files, r.bytes, err = size(r.dir); err != nil {
			fail(err)
		}
		runs[i] = r
	}

	for round := 0; round < *rounds; round++ {
		order := append([]*scaleRun(nil), runs...)
		if round%2 == 1 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, r := range order {
			s, err := runOnce(bin, append(append([]string(nil), command...), "--payload", r.dir))
			if err != nil {
				fail(err)
			}
			r.samples = append(r.samples, s)
		}
	}

	fmt.Printf("payload-apply %s --payload DIR (%d alternating rounds, seed %d)\n", strings.Join(command, " "), *rounds, *seed)
	fmt.Printf("%6s %7s %9s %9s %9s %10s %9s\n", "scale", "files", "disk MB", "wall s", "cpu s", "peak RSS MB", "RSS/disk")
	for _, r := range runs {
		wall, cpu, rss := r.medians()
		fmt.Printf("%5dx %7d %9.1f %9.2f %9.2f %10.1f %9.2f\n", r.scale, r.files, mb(r.bytes), wall.Seconds(), cpu.Seconds(), float64(rss)/1024, float64(rss)*1024/float64(r.bytes))
	}
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1], runs[i]
		wa, ca, ra := a.medians()
		wb, cb, rb := b.medians()
		dmb := mb(b.bytes - a.bytes)
		fmt.Printf("slope %dx -> %dx: wall %.1f ms/MB, cpu %.1f ms/MB, peak RSS %.2f MB/MB (time x%.1f, RSS x%.1f for x%.1f bytes)\n",
			a.scale, b.scale, float64((wb-wa).Milliseconds())/dmb, float64((cb-ca).Milliseconds())/dmb, float64(rb-ra)/1024/dmb,
			wb.Seconds()/wa.Seconds(), float64(rb)/float64(ra), float64(b.bytes)/float64(a.bytes))
	}
}

// medians returns the median wall time, CPU time and peak RSS (KiB).
func (r *scaleRun) medians() (wall, cpu time.Duration, rssKiB int64) {
	var ws, cs []time.Duration
	var rs []int64
	for _, s := range r.samples {
		ws, cs, rs = append(ws, s.wall), append(cs, s.cpu), append(rs, s.rssKiB)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i] < ws[j] })
	sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	return ws[len(ws)/2], cs[len(cs)/2], rs[len(rs)/2]
}

// childFlag makes benchscale run one command and print its measures. The
// kernel reports as a child's maximum RSS the larger of its own and that
// of the process it was forked from (Go forks with CLONE_VM, and exec
// keeps the high-water mark of the memory it replaces): measured from this
// process, which holds the generated payloads, every command would seem to
// take as much memory as benchscale. A fresh, small benchscale process in
// between keeps the figure the command's own.
const childFlag = "-measure-child"

// runOnce runs the command through a child benchscale, discarding its
// output, and returns its times and peak RSS.
func runOnce(bin string, args []string) (sample, error) {
	self, err := os.Executable()
	if err != nil {
		return sample{}, err
	}
	cmd := exec.Command(self, append([]string{childFlag, bin}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	var wall, cpu time.Duration
	var rss int64
	if _, err := fmt.Sscan(stdout.String(), &wall, &cpu, &rss); err != nil {
		return sample{}, fmt.Errorf("measure %s: %q: %w", bin, stdout.String(), err)
	}
	return sample{wall: wall, cpu: cpu, rssKiB: rss}, nil
}

// child runs args[0] with args[1:], its output discarded, and prints its
// wall time, CPU time (user+sys) and maximum RSS in KiB.
func child(args []string) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr // stdout: the null device
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fail(err)
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fail(fmt.Errorf("no resource usage for %s", args[0]))
	}
	// Linux reports ru_maxrss in KiB.
	fmt.Println(int64(wall), int64(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()), ru.Maxrss)
}

// size counts the manifest files and their bytes (what a payload holds on
// disk: manifests/ and release-manifests/).
func size(dir string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	return files, bytes, err
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchscale:", err)
	os.Exit(1)
}
