// Command operatorbench measures what `payload-apply operator` costs, per
// pass, once the cluster it keeps is steady: the requests a reconcile pass
// sends (by verb; writes must be 0), its CPU time (user+sys of the whole
// process over the passes, divided by the passes: the Lease's renewals and
// the watches are in it), its wall time, and the process's memory (RSS
// after the passes, and its peak). Contenders are GOGC values (the
// command's default is 50; the operator is a long-running process where
// CPU may matter more than a few MiB) and reconcile parallelism.
//
// Memory is RssAnon, what the process holds of its own (heap, stacks):
// its binary's pages (about 60 MiB of the resident set) are file-backed,
// shared by the replicas of a node and reclaimable.
//
// One test API server (test/apiserver) gets what the rest of the platform
// contributes (internal/platform), then each contender runs as a process
// on it in turn (the first installs the payload), round after round in
// alternating order: it is started, reaches a reconcile pass, passes
// -passes more times (counted from its log, so that nothing but one scrape
// before and one after asks anything of it), and is stopped with SIGTERM.
// Medians per contender are printed as a Markdown table.
//
// Usage (from the repository root):
//
//	go run ./hack/operatorbench [-payload ../shared/testdata/ocp-payload] [-passes 10] [-resync 5s] [-rounds 3] [-contenders gogc=50,gogc=200,par=32]
//
// May import: internal/benchstat, internal/gobuild, internal/platform, test/apiserver.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/payload-apply/payload-apply/internal/benchstat"
	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/internal/platform"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func main() {
	payload := flag.String("payload", "../shared/testdata/ocp-payload", "payload directory")
	passes := flag.Int("passes", 10, "reconcile passes measured per run")
	resync := flag.Duration("resync", 5*time.Second, "the operator's --resync")
	rounds := flag.Int("rounds", 3, "rounds of alternating runs")
	contenders := flag.String("contenders", "gogc=50,gogc=200", "comma list: gogc=N (GOGC), par=N (--reconcile-parallelism)")
	flag.Parse()
	if err := run(*payload, *passes, *resync, *rounds, strings.Split(*contenders, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "operatorbench:", err)
		os.Exit(1)
	}
}

// sample is what one run measured.
type sample struct {
	passes    float64
	requests  map[string]float64 // per pass, by verb
	cpu       time.Duration      // per pass
	wall      time.Duration      // per pass (mean pass duration)
	rss, peak float64            // MiB
	// followerRSS and followerCPU are the follower's RSS (MiB) and its CPU
	// time since it started.
	followerRSS float64
	followerCPU time.Duration
}

func run(payload string, passes int, resync time.Duration, rounds int, contenders []string) error {
	dir, err := os.MkdirTemp("", "operatorbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "payload-apply")
	if out, err := gobuild.Command(bin, "./cmd/payload-apply").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	s, err := apiserver.Start(ctx, apiserver.Options{})
	if err != nil {
		return err
	}
	defer s.Stop()
	plat := filepath.Join(dir, "platform.yaml")
	if err := os.WriteFile(plat, []byte(platform.YAML()), 0o600); err != nil {
		return err
	}
	for _, args := range [][]string{{"apply", "--server-side", "-f", plat}, {"wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"}} {
		if out, err := s.Kubectl(ctx, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	samples := map[string][]sample{}
	_, err = benchstat.Rounds("operatorbench", rounds, contenders, func(r int, c string) (time.Duration, error) {
		smp, err := runOne(bin, s.Kubeconfig, payload, c, passes, resync)
		if err != nil {
			return 0, err
		}
		samples[c] = append(samples[c], smp)
		fmt.Fprintf(os.Stderr, "operatorbench: round %d %-9s %.0f passes: %.1f requests, %s CPU, %s wall per pass; anon RSS %.0f MiB (peak RSS %.0f); follower anon RSS %.0f MiB, CPU %s in all\n",
			r+1, c, smp.passes, sum(smp.requests), smp.cpu.Round(time.Millisecond), smp.wall.Round(time.Millisecond), smp.rss, smp.peak, smp.followerRSS, smp.followerCPU)
		return 0, nil
	}, func(string, ...any) {})
	if err != nil {
		return err
	}
	fmt.Printf("| contender | requests per pass (by verb) | writes | CPU per pass | wall per pass | anon RSS | peak RSS | follower anon RSS | runs (CPU ms per pass) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range contenders {
		ss := samples[c]
		var cpus, walls []time.Duration
		var rss, peak, frss []float64
		for _, smp := range ss {
			cpus, walls = append(cpus, smp.cpu), append(walls, smp.wall)
			rss, peak, frss = append(rss, smp.rss), append(peak, smp.peak), append(frss, smp.followerRSS)
		}
		var runs []string
		for _, d := range cpus {
			runs = append(runs, strconv.FormatInt(d.Milliseconds(), 10))
		}
		last := ss[len(ss)-1]
		fmt.Printf("| %s | %.0f (%s) | %.0f | %d ms | %d ms | %.0f MiB | %.0f MiB | %.0f MiB | %s |\n", c, sum(last.requests), verbs(last.requests), writes(last.requests),
			benchstat.Median(cpus).Milliseconds(), benchstat.Median(walls).Milliseconds(), benchstat.Median(rss), benchstat.Median(peak), benchstat.Median(frss), strings.Join(runs, " "))
	}
	return nil
}

// runOne runs one contender's operator and measures its steady passes.
func runOne(bin, kubeconfig, payload, contender string, passes int, resync time.Duration) (sample, error) {
	args := []string{"operator", "--kubeconfig=" + kubeconfig, "--payload=" + payload, "--resync=" + resync.String(),
		"--metrics-bind-address=127.0.0.1:0", "--lease-duration=6s", "--renew-deadline=4s", "--retry-period=1s", "--lease-identity=bench"}
	env := os.Environ()
	k, v, _ := strings.Cut(contender, "=")
	switch k {
	case "gogc":
		env = append(env, "GOGC="+v)
	case "par":
		args = append(args, "--reconcile-parallelism="+v)
	default:
		return sample{}, fmt.Errorf("contender %q: want gogc=N or par=N", contender)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return sample{}, err
	}
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lg := &logWatch{}
	go lg.read(stderr)
	if _, err := lg.waitFor(`"Leading: `, 1, 2*time.Minute); err != nil {
		return sample{}, err
	}
	// A follower beside it, once it leads: what the second replica costs.
	fargs := append(append([]string{}, args...), "--lease-identity=bench-follower")
	follower := exec.Command(bin, fargs...)
	follower.Env = env
	if err := follower.Start(); err != nil {
		return sample{}, err
	}
	defer func() { _ = follower.Process.Kill(); _ = follower.Wait() }()

	addr, err := lg.waitFor(`"Serving /healthz, /readyz and /metrics" address="([^"]+)"`, 0, 60*time.Second)
	if err != nil {
		return sample{}, err
	}
	if _, err := lg.waitFor(`"Pass done".* mode="reconcile"`, 1, 10*time.Minute); err != nil {
		return sample{}, err
	}
	m0, err := scrape(addr)
	if err != nil {
		return sample{}, err
	}
	cpu0, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	start := lg.count(`"Pass done".* mode="reconcile"`)
	if _, err := lg.waitFor(`"Pass done".* mode="reconcile"`, start+passes, time.Duration(passes+2)*resync*2); err != nil {
		return sample{}, err
	}
	cpu1, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	m1, err := scrape(addr)
	if err != nil {
		return sample{}, err
	}
	rss, peak, err := memory(cmd.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	frss, _, err := memory(follower.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	fcpu, err := cpuTime(follower.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	d := func(name string, labels ...string) float64 { return m1.get(name, labels...) - m0.get(name, labels...) }
	n := d("payload_apply_operator_passes_total", "mode", "reconcile")
	if n <= 0 {
		return sample{}, fmt.Errorf("no reconcile pass between the scrapes; the log ends:\n%s", lg.tail(10))
	}
	smp := sample{passes: n, requests: map[string]float64{}, rss: rss, peak: peak, followerRSS: frss, followerCPU: fcpu,
		cpu:  time.Duration(float64(cpu1-cpu0) / n),
		wall: time.Duration(d("payload_apply_operator_pass_duration_seconds_sum", "mode", "reconcile") / n * float64(time.Second))}
	for _, verb := range []string{"GET", "LIST", "WATCH", "DISCOVERY", "POST", "PUT", "PATCH", "DELETE"} {
		if v := d("payload_apply_operator_api_requests_total", "client", "apply", "verb", verb); v > 0 {
			smp.requests[verb] = v / n
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		return smp, errors.New("the operator did not stop within 30 s of SIGTERM")
	}
	return smp, nil
}

// logWatch keeps the lines of a log as they come.
type logWatch struct {
	mu    sync.Mutex
	lines []string
}

func (l *logWatch) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		l.mu.Unlock()
	}
}

func (l *logWatch) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}

func (l *logWatch) count(pattern string) int {
	re := regexp.MustCompile(pattern)
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if re.MatchString(line) {
			n++
		}
	}
	return n
}

// waitFor waits until at least n lines (and at least one) match pattern
// and returns the first group of the last match.
func (l *logWatch) waitFor(pattern string, n int, d time.Duration) (string, error) {
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		var got []string
		matched := 0
		for _, line := range l.lines {
			if m := re.FindStringSubmatch(line); m != nil {
				got = m
				matched++
			}
		}
		l.mu.Unlock()
		if matched > 0 && matched >= n {
			if len(got) > 1 {
				return got[1], nil
			}
			return "", nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "", fmt.Errorf("no line %q within %s", pattern, d)
}

// promMetrics are scraped samples by series.
type promMetrics map[string]float64

func scrape(addr string) (promMetrics, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := promMetrics{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, nil
}

// get sums the series of name with the given labels ("k", "v", ...).
func (m promMetrics) get(name string, labels ...string) float64 {
	var sum float64
	for series, v := range m {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			ok = ok && strings.Contains(series, labels[i]+`="`+labels[i+1]+`"`)
		}
		if ok {
			sum += v
		}
	}
	return sum
}

// cpuTime is a process's user+sys CPU time (/proc/PID/stat).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0, errors.New("/proc stat: short")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ
	return time.Duration(utime+stime) * time.Second / ticks, nil
}

// memory returns a process's resident set, in MiB: the part that is the
// process's own (RssAnon: heap, stacks; the binary's pages are shared
// and can be dropped) and the peak of the whole (VmHWM).
func memory(pid int) (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "RssAnon:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak, nil
}

func sum(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

func writes(m map[string]float64) float64 {
	return m["POST"] + m["PUT"] + m["PATCH"] + m["DELETE"]
}

func verbs(m map[string]float64) string {
	var parts []string
	for _, verb := range []string{"GET", "LIST", "WATCH", "DISCOVERY", "POST", "PUT", "PATCH", "DELETE"} {
		if v, ok := m[verb]; ok {
			parts = append(parts, fmt.Sprintf("%.0f %s", v, verb))
		}
	}
	return strings.Join(parts, ", ")
}
