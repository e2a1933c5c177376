// Command upgradebench measures what an upgrade costs against a first
// install, with the payload-apply command on fresh API servers: each round
// starts an etcd and kube-apiserver (test/apiserver), plays the operators
// and the Deployment controller on it (internal/clusterplay), installs
// release A (`apply --payload A`, the install order), asks for the plan to
// B (`upgrade --to B --dry-run`), then upgrades to B (`upgrade --to B`, the
// update order with the update's waits) and applies B once more (`apply
// --payload B`: the reconcile order, nothing to change). B is the z-stream
// internal/genupgrade makes of A (4.22.1: a changed Deployment image, a
// deleted RoleBinding, a ClusterRoleBinding moved to another run level, a
// new CRD with a custom resource, a manifest whose capability becomes
// implicitly enabled).
//
// It prints, as Markdown, the median time of each step and the ratio of the
// upgrade to the install, and the upgrade's requests by verb and writes
// against the objects the plan says change (created, changed, deleted; the
// record's own writes apart).
//
// Usage (from the repository root):
//
//	go run ./hack/upgradebench [-payload ../shared/testdata/ocp-payload] [-rounds 3]
//
// May import: internal/benchstat, internal/clusterplay, internal/genupgrade,
// internal/gobuild,
// test/apiserver.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/internal/benchstat"
	"github.com/payload-apply/payload-apply/internal/clusterplay"
	"github.com/payload-apply/payload-apply/internal/genupgrade"
	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func main() {
	payloadDir := flag.String("payload", "../shared/testdata/ocp-payload", "release A: a payload directory")
	rounds := flag.Int("rounds", 3, "rounds, each on a new API server")
	flag.Parse()
	if err := run(*payloadDir, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "upgradebench:", err)
		os.Exit(1)
	}
}

// counts is what one run of the command reports in its -o json summary,
// and the objects its task events say it wrote.
type counts struct {
	requests, writes, recordWrites int64
	byVerb                         map[string]int64
	written                        int
}

// round is one round's figures.
type round struct {
	install, plan, upgrade, reapply time.Duration
	planned                         int // creates + changes + deletes
	up, re                          counts
}

func run(a string, rounds int) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "upgradebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := filepath.Join(work, "4.22.1")
	if _, err := genupgrade.Write(a, b, "4.22.1"); err != nil {
		return err
	}
	bin := filepath.Join(work, "payload-apply")
	if out, err := gobuild.Command(bin, "./cmd/payload-apply").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	binDir, err := apiserver.Build(ctx)
	if err != nil {
		return err
	}
	var all []round
	for i := 0; i < rounds; i++ {
		r, err := once(ctx, bin, binDir, a, b)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		fmt.Fprintf(os.Stderr, "round %d: install %s, upgrade %s (%d requests, %d writes, %d planned), apply again %s\n",
			i+1, r.install.Round(time.Millisecond), r.upgrade.Round(time.Millisecond), r.up.requests, r.up.writes, r.planned, r.reapply.Round(time.Millisecond))
		all = append(all, r)
	}
	report(all)
	return nil
}

func once(ctx context.Context, bin, binDir, a, b string) (round, error) {
	var r round
	s, err := apiserver.Start(ctx, apiserver.Options{BinDir: binDir})
	if err != nil {
		return r, err
	}
	defer s.Stop()
	dc, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		return r, err
	}
	if err := clusterplay.Environment(ctx, dc); err != nil {
		return r, err
	}
	p := clusterplay.NewPlayer(dc)
	defer p.Stop()
	if err := p.Release(ctx, a); err != nil {
		return r, err
	}
	kc := "--kubeconfig=" + s.Kubeconfig
	var out string
	if r.install, out, err = cli(ctx, bin, "apply", kc, "--payload", a, "-o", "json"); err != nil {
		return r, err
	}
	if r.plan, out, err = cli(ctx, bin, "upgrade", kc, "--to", b, "--dry-run", "-o", "json"); err != nil {
		return r, err
	}
	var plan struct{ Creates, Changes, Deletes []json.RawMessage }
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		return r, fmt.Errorf("the plan: %w", err)
	}
	r.planned = len(plan.Creates) + len(plan.Changes) + len(plan.Deletes)
	if err := p.Release(ctx, b); err != nil {
		return r, err
	}
	if r.upgrade, out, err = cli(ctx, bin, "upgrade", kc, "--to", b, "-o", "json"); err != nil {
		return r, err
	}
	if r.up, err = summary(out); err != nil {
		return r, err
	}
	if r.reapply, out, err = cli(ctx, bin, "apply", kc, "--payload", b, "-o", "json"); err != nil {
		return r, err
	}
	r.re, err = summary(out)
	return r, err
}

// cli runs the command; exit codes other than 0 are errors.
func cli(ctx context.Context, bin string, args ...string) (time.Duration, string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, "", fmt.Errorf("payload-apply %s: %w\n%s", strings.Join(args, " "), err, tail(errOut.String(), 20))
	}
	return d, out.String(), nil
}

// summary reads the -o json events of a run.
func summary(out string) (counts, error) {
	var c counts
	seen := false
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Event, Kind, Action string
			RecordWrites        int64 `json:"recordWrites"`
			Requests            *struct {
				Reads  int64            `json:"reads"`
				Writes int64            `json:"writes"`
				ByVerb map[string]int64 `json:"byVerb"`
			} `json:"requests"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return c, fmt.Errorf("not a JSON event: %q", sc.Text())
		}
		switch {
		case e.Event == "task" && e.Kind != "" && (e.Action == "Created" || e.Action == "Configured" || e.Action == "Deleted"):
			c.written++
		case e.Event == "summary" && e.Requests != nil:
			seen = true
			c.byVerb, c.recordWrites = e.Requests.ByVerb, e.RecordWrites
			c.requests, c.writes = e.Requests.Reads+e.Requests.Writes, e.Requests.Writes
		}
	}
	if !seen {
		return c, errors.New("no summary with requests")
	}
	return c, nil
}

func report(all []round) {
	durs := func(f func(round) time.Duration) []time.Duration {
		var v []time.Duration
		for _, r := range all {
			v = append(v, f(r))
		}
		return v
	}
	ints := func(f func(round) int64) int64 {
		var v []int64
		for _, r := range all {
			v = append(v, f(r))
		}
		return benchstat.Median(v)
	}
	install, upgrade := durs(func(r round) time.Duration { return r.install }), durs(func(r round) time.Duration { return r.upgrade })
	fmt.Print(strings.Replace(benchstat.Header, "contender", "step", 1))
	fmt.Print(benchstat.Row("install A (`apply`)", install))
	fmt.Print(benchstat.Row("plan to B (`upgrade --dry-run`)", durs(func(r round) time.Duration { return r.plan })))
	fmt.Print(benchstat.Row("upgrade to B (`upgrade`)", upgrade))
	fmt.Print(benchstat.Row("apply B again (`apply`, reconcile)", durs(func(r round) time.Duration { return r.reapply })))
	fmt.Printf("\nupgrade / install: %.2f\n\n", float64(benchstat.Median(upgrade))/float64(benchstat.Median(install)))
	fmt.Println("| run | requests | GET | LIST | DISCOVERY | POST | PUT | PATCH | DELETE | object writes | record writes | objects written | objects the plan changes |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	row := func(name string, c func(round) counts, planned bool) {
		verb := func(v string) int64 { return ints(func(r round) int64 { return c(r).byVerb[v] }) }
		p := "-"
		if planned {
			p = fmt.Sprint(ints(func(r round) int64 { return int64(r.planned) }))
		}
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s |\n", name,
			ints(func(r round) int64 { return c(r).requests }), verb("GET"), verb("LIST"), verb("DISCOVERY"), verb("POST"), verb("PUT"), verb("PATCH"), verb("DELETE"),
			ints(func(r round) int64 { return c(r).writes - c(r).recordWrites }), ints(func(r round) int64 { return c(r).recordWrites }),
			ints(func(r round) int64 { return int64(c(r).written) }), p)
	}
	row("upgrade to B", func(r round) counts { return r.up }, true)
	row("apply B again", func(r round) counts { return r.re }, false)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
