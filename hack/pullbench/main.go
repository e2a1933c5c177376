// Command pullbench measures rendering a release pulled from a registry,
// cold (empty cache: pull, flatten, cache, parse, render) against warm (the
// same release again: read from the cache, parsed form included), as
// separate payload-apply processes in alternating rounds, and checks that a
// warm render by digest sends no request at all.
//
// It starts the test registry (test/registry: Debian's docker-registry on
// 127.0.0.1 with TLS and htpasswd), builds payload-apply, pushes the real
// payload with 'payload-apply build --to', then runs each round:
//
//	cold:  XDG_CACHE_HOME=<empty> payload-apply render --list --payload REG/ocp/release@DIGEST -v=1
//	warm:  XDG_CACHE_HOME=<filled> payload-apply render --list --payload REG/ocp/release@DIGEST -v=1
//	tag:   the warm run by tag (one HEAD request to resolve it)
//
// and prints the medians of wall and CPU time, the ratio warm/cold, and the
// requests each sent (from the -v=1 log).
//
// Usage:
//
//	go run ./hack/pullbench [-rounds 9] [-payload ../shared/testdata/ocp-payload] [-- render --list]
//
// May import: internal/benchstat, internal/gobuild, test/registry.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/payload-apply/payload-apply/internal/benchstat"
	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/test/registry"
)

type sample struct {
	wall, cpu time.Duration
	requests  string
	out       string
}

func main() {
	rounds := flag.Int("rounds", 9, "alternating rounds")
	payload := flag.String("payload", "../shared/testdata/ocp-payload", "payload directory to push")
	flag.Parse()
	command := flag.Args()
	if len(command) == 0 {
		command = []string{"render", "--list"}
	}
	if err := run(*rounds, *payload, command); err != nil {
		fmt.Fprintln(os.Stderr, "pullbench:", err)
		os.Exit(1)
	}
}

func run(rounds int, payload string, command []string) error {
	tmp, err := os.MkdirTemp("", "pullbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "payload-apply")
	if out, err := gobuild.Command(bin, "./cmd/payload-apply").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	r, err := registry.Start(context.Background())
	if err != nil {
		return err
	}
	defer r.Stop()
	env := append(os.Environ(), "REGISTRY_AUTH_FILE="+r.AuthFile, "SSL_CERT_FILE="+r.CABundle)
	tag := r.Host + "/ocp/release:bench"
	push := exec.Command(bin, "build", "--from", payload, "--version", version(payload), "--to", tag)
	push.Env = env
	out, err := push.Output()
	if err != nil {
		return fmt.Errorf("build --to: %v", err)
	}
	digest := strings.TrimSpace(string(out))
	byDigest := r.Host + "/ocp/release@" + digest

	warmCache := filepath.Join(tmp, "warm")
	once := func(cache, ref string) (sample, error) {
		return measure(bin, append(append([]string{}, command...), "--payload", ref, "-v=1"), append(env, "XDG_CACHE_HOME="+cache))
	}
	if _, err := once(warmCache, byDigest); err != nil { // fill the warm cache
		return err
	}
	samples := map[string][]sample{}
	for i := 0; i < rounds; i++ {
		for _, which := range benchstat.Order([]string{"cold", "warm", "tag"}, i) {
			var s sample
			switch which {
			case "cold":
				cold := filepath.Join(tmp, fmt.Sprintf("cold-%d", i))
				s, err = once(cold, byDigest)
				os.RemoveAll(cold)
			case "warm":
				s, err = once(warmCache, byDigest)
			case "tag":
				s, err = once(warmCache, tag)
			}
			if err != nil {
				return err
			}
			samples[which] = append(samples[which], s)
		}
	}
	for _, s := range samples["warm"] {
		if s.requests != "0" || s.out != samples["cold"][0].out {
			return fmt.Errorf("a warm run sent %s requests or printed something else", s.requests)
		}
	}
	fmt.Printf("payload %s (digest %s), %d rounds, %s\n\n", payload, digest, rounds, strings.Join(command, " "))
	fmt.Println("| run | wall (median) | CPU (median) | requests | wall runs (s) |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	med := map[string][2]time.Duration{}
	for _, which := range []string{"cold", "warm", "tag"} {
		var walls, cpus []time.Duration
		for _, s := range samples[which] {
			walls, cpus = append(walls, s.wall), append(cpus, s.cpu)
		}
		med[which] = [2]time.Duration{benchstat.Median(walls), benchstat.Median(cpus)}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", which, med[which][0].Round(time.Millisecond), med[which][1].Round(time.Millisecond),
			samples[which][0].requests, benchstat.Seconds(walls))
	}
	fmt.Printf("\nwarm/cold: wall %.3f, CPU %.3f (target: at most 0.1)\n",
		float64(med["warm"][0])/float64(med["cold"][0]), float64(med["warm"][1])/float64(med["cold"][1]))
	return nil
}

var requestsRE = regexp.MustCompile(`requests=(\d+)`)

// measure runs the command and returns its wall and CPU time, the requests
// its -v=1 log reports, and its stdout.
func measure(bin string, args, env []string) (sample, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	req := "?"
	if m := requestsRE.FindStringSubmatch(stderr.String()); m != nil {
		req = m[1]
	}
	return sample{wall: wall, cpu: cpu, requests: req, out: stdout.String()}, nil
}

// version reads the payload's release-metadata version.
func version(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "release-manifests", "release-metadata"))
	if err != nil {
		return "4.22.0"
	}
	if m := regexp.MustCompile(`"version":\s*"([^"]+)"`).FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return "4.22.0"
}
