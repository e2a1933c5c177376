// Command applybench measures how long applying a payload to a fresh API
// server takes, four ways, on one machine in one session:
//
//   - cli (only when named in -only): `payload-apply apply --payload DIR
//     --order graph` (the binary, end to end: parse, select, graph with run
//     levels in series). Since issue 16 "graph" is the CVO's update order,
//     which expects the namespaces an install's first stage creates: on an
//     empty server it waits for them (2 minutes each) and fails, so it is
//     no first apply any more;
//   - cli-install: the same with --order install (the CVO's install order,
//     staged; what apply does by default on a cluster without a record);
//   - engine: the same engine in-process with the plan already built
//     (clustersync.Apply, which the command calls);
//   - kubectl: what a person would script: `kubectl apply --server-side
//     --force-conflicts` of every CustomResourceDefinition and Namespace,
//     `kubectl wait --for condition=established crd --all`, then one
//     `kubectl apply --server-side --force-conflicts -f <dir>` per run level
//     in order, with kubectl from _output/bin;
//   - raw: the limit: every object server-side applied at once (64
//     requests in flight, no client-side rate limit, no reads, no order),
//     objects that fail because their type or namespace does not exist yet
//     retried in rounds until nothing more succeeds;
//   - reapply (only when named in -only): the cli's first apply (with an
//     empty plan cache, XDG_CACHE_HOME of its own), then
//     -noops applies of the same payload again, which change nothing (the
//     parse from the plan cache the first filled); with
//     -base-bin, another build of the command (an older one, say) applies
//     again too, alternately with this one on the same server. Times,
//     request counts (from the summary of -o json) and the command's CPU
//     time (user and system) are reported per kind of run, with the ratio
//     of first apply to no-op apply.
//
// Each run gets a new etcd and kube-apiserver (test/apiserver), so every
// run starts from an empty cluster. The contenders run alternately, round
// after round, and the medians and their ratios are printed as a Markdown
// table. Absolute times on a shared machine mean little; the ratios do.
//
// Usage (from the repository root):
//
//	go run ./hack/applybench [-payload ../shared/testdata/ocp-payload] [-rounds 5] [-only cli,kubectl]
//	go run ./hack/applybench -only reapply [-noops 5] [-base-bin /path/to/old/payload-apply]
//	go run ./hack/applybench -only reapply -payload /tmp/payload-100x -rounds 1 -noops 1 -etcd-quota 8589934592
//
// May import: clustersync, internal/benchstat, internal/gobuild, lib/manifest,
// lib/requests,
// lib/resourceapply, payload, plan, test/apiserver.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/internal/benchstat"
	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func main() {
	payloadDir := flag.String("payload", "../shared/testdata/ocp-payload", "payload directory")
	rounds := flag.Int("rounds", 5, "alternating rounds")
	only := flag.String("only", "cli-install,engine,kubectl,raw", "contenders to run, comma separated (cli: --order graph, not a first install since issue 16)")
	parallelism := flag.Int("parallelism", 0, "--parallelism for cli and engine (0: the command's default)")
	noops := flag.Int("noops", 5, "reapply: applies again after each first apply")
	baseBin := flag.String("base-bin", "", "reapply: another payload-apply binary to apply again with, alternately")
	etcdQuota := flag.Int64("etcd-quota", 0, "etcd's --quota-backend-bytes (0: etcd's default, 2 GiB), for payloads many times a release")
	flag.Parse()
	if _, err := os.Stat(filepath.Join(*payloadDir, "release-manifests")); err != nil {
		fmt.Fprintf(os.Stderr, "applybench: skipping: no payload at %s (%v)\n", *payloadDir, err)
		os.Exit(0)
	}
	if err := run(*payloadDir, *rounds, strings.Split(*only, ","), *parallelism, *noops, *baseBin, *etcdQuota); err != nil {
		fmt.Fprintln(os.Stderr, "applybench:", err)
		os.Exit(1)
	}
}

type bench struct {
	payloadDir  string
	parallelism int
	work        string
	cliBin      string
	kubectl     string
	plan        *plan.Plan
	stageFiles  []string // CRDs and Namespaces, for kubectl
	levelDirs   []string // one directory per run level, in order
	binDir      string
	noops       int
	baseBin     string
	etcdQuota   int64 // bytes, 0: etcd's default
	// reapply holds the runs of the reapply contender by kind: "first",
	// "noop" and "noop-base".
	reapply map[string][]run1
}

// run1 is one run of the command: how long, its requests by verb, its
// peak resident memory (VmHWM, benchstat.WatchMemory) and the
// CPU time it used (user and system).
type run1 struct {
	d        time.Duration
	requests map[string]int64
	rssKiB   int64
	cpu      time.Duration
}

func run(payloadDir string, rounds int, contenders []string, parallelism, noops int, baseBin string, etcdQuota int64) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "applybench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := &bench{payloadDir: payloadDir, parallelism: parallelism, work: work, noops: noops, baseBin: baseBin, etcdQuota: etcdQuota, reapply: map[string][]run1{}}
	if b.binDir, err = apiserver.Build(ctx); err != nil {
		return err
	}
	b.kubectl = filepath.Join(b.binDir, "kubectl")
	b.cliBin = filepath.Join(work, "payload-apply")
	build := gobuild.Command(b.cliBin, "./cmd/payload-apply")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	if b.plan, err = plan.Build(ctx, plan.Options{Payload: os.DirFS(payloadDir)}); err != nil {
		return err
	}
	if err := b.writeKubectlInput(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "applybench: %d objects, %d run levels, %d cores, %d rounds\n",
		len(b.plan.Objects), len(b.levelDirs), runtime.NumCPU(), rounds)

	times, err := benchstat.Rounds("applybench", rounds, contenders, func(r int, c string) (time.Duration, error) {
		if c == "reapply" {
			// It keeps its own records (reportReapply).
			return 0, b.reapplyOnce(ctx, r)
		}
		return b.once(ctx, c)
	}, func(format string, args ...any) { fmt.Fprintf(os.Stderr, format, args...) })
	if err != nil {
		return err
	}
	fmt.Print(benchstat.Header)
	for _, c := range contenders {
		if c == "reapply" {
			b.reportReapply()
			continue
		}
		fmt.Print(benchstat.Row(c, times[c]))
	}
	ratio := func(a, b string) {
		if len(times[a]) > 0 && len(times[b]) > 0 {
			fmt.Printf("| **%s / %s** | **%.2f** | |\n", a, b, benchstat.Median(times[a]).Seconds()/benchstat.Median(times[b]).Seconds())
		}
	}
	ratio("kubectl", "cli")
	ratio("kubectl", "cli-install")
	ratio("cli", "raw")
	ratio("cli-install", "raw")
	ratio("engine", "raw")
	return nil
}

// reapplyOnce starts a fresh server, applies the payload with the cli,
// then applies it again b.noops times (alternately with b.baseBin).
func (b *bench) reapplyOnce(ctx context.Context, round int) error {
	s, err := apiserver.Start(ctx, b.serverOptions())
	if err != nil {
		return err
	}
	defer s.Stop()
	// The first apply plans a payload the plan cache has not seen; the
	// applies again find its parse there, as they would for a user.
	cache, err := os.MkdirTemp(b.work, "cache")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)
	first, err := b.timedCLI(ctx, s, b.cliBin, cache)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "applybench: round %d first    %s %v\n", round+1, first.d.Round(time.Millisecond), first.requests)
	b.reapply["first"] = append(b.reapply["first"], first)
	bins := []string{"noop"}
	if b.baseBin != "" {
		bins = append(bins, "noop-base")
		// The plan cache keys entries by binary: without this untimed
		// run, the base binary's first no-op of each round would parse
		// the payload (cold) where this binary's finds the first apply's.
		if _, err := b.timedCLI(ctx, s, b.baseBin, cache); err != nil {
			return err
		}
	}
	for i := 0; i < b.noops; i++ {
		for _, kind := range benchstat.Order(bins, round+i) {
			bin := b.cliBin
			if kind == "noop-base" {
				bin = b.baseBin
			}
			r, err := b.timedCLI(ctx, s, bin, cache)
			if err != nil {
				return err
			}
			if w := writes(r.requests); w != 0 {
				return fmt.Errorf("%s: %d writes applying an unchanged payload again: %v", kind, w, r.requests)
			}
			fmt.Fprintf(os.Stderr, "applybench: round %d %-9s %s %v\n", round+1, kind, r.d.Round(time.Millisecond), r.requests)
			b.reapply[kind] = append(b.reapply[kind], r)
		}
	}
	return nil
}

// timedCLI runs `apply -o json` with bin and the cache directory
// XDG_CACHE_HOME=cache, and reads the request counts of its summary (an
// older build reports only reads and writes).
func (b *bench) timedCLI(ctx context.Context, s *apiserver.Server, bin, cache string) (run1, error) {
	args := []string{"apply", "--kubeconfig", s.Kubeconfig, "--payload", b.payloadDir, "-o", "json"}
	if b.parallelism > 0 {
		args = append(args, fmt.Sprintf("--parallelism=%d", b.parallelism))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return run1{}, fmt.Errorf("%s: %w", bin, err)
	}
	// Not the rusage's peak, which counts this process's own (the
	// payload it parsed): see benchstat.WatchMemory.
	mem := benchstat.WatchMemory(cmd.Process.Pid)
	err := cmd.Wait()
	d := time.Since(start)
	rss := mem().Peak
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return run1{}, fmt.Errorf("%s: %w: %s", bin, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var sum struct {
		Event    string `json:"event"`
		Requests struct {
			Reads  int64            `json:"reads"`
			Writes int64            `json:"writes"`
			ByVerb map[string]int64 `json:"byVerb"`
		} `json:"requests"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Event != "summary" {
		return run1{}, fmt.Errorf("%s: no summary at the end of its output (%v)", bin, err)
	}
	req := sum.Requests.ByVerb
	if req == nil {
		req = map[string]int64{"reads": sum.Requests.Reads, "writes": sum.Requests.Writes}
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return run1{d: d, requests: req, rssKiB: rss, cpu: cpu}, nil
}

// writes counts the writes among requests by verb.
func writes(byVerb map[string]int64) int64 {
	var n int64
	for verb, v := range byVerb {
		if requests.IsWrite(verb) || verb == "writes" {
			n += v
		}
	}
	return n
}

// reportReapply prints the reapply rows: medians, the requests of the
// last run of each kind, and first / no-op.
func (b *bench) reportReapply() {
	for _, kind := range []string{"first", "noop", "noop-base"} {
		runs := b.reapply[kind]
		if len(runs) == 0 {
			continue
		}
		ds := make([]time.Duration, len(runs))
		rss := make([]time.Duration, len(runs)) // KiB, as durations for benchstat.Median
		cpu := make([]time.Duration, len(runs))
		var total int64
		for i, r := range runs {
			ds[i], rss[i], cpu[i] = r.d, time.Duration(r.rssKiB), r.cpu
			for _, n := range r.requests {
				total += n
			}
		}
		last := runs[len(runs)-1].requests
		objects := len(b.plan.Objects)
		fmt.Printf("| reapply: %s | %.2f s | %s (requests: %d per run on average; last run %v) |\n",
			kind, benchstat.Median(ds).Seconds(), benchstat.Seconds(ds), total/int64(len(runs)), last)
		fmt.Printf("| reapply: %s per object (%d objects) | %.2f ms | peak RSS %.1f MiB median, %.1f KiB per object; %.3f requests per object |\n",
			kind, objects, benchstat.Median(ds).Seconds()*1000/float64(objects), float64(benchstat.Median(rss))/1024,
			float64(benchstat.Median(rss))/float64(objects), float64(total)/float64(len(runs))/float64(objects))
		fmt.Printf("| reapply: %s, client CPU (user+system) | %.3f s | %s |\n", kind, benchstat.Median(cpu).Seconds(), benchstat.Seconds(cpu))
	}
	medCPU := func(kind string) float64 {
		var ds []time.Duration
		for _, r := range b.reapply[kind] {
			ds = append(ds, r.cpu)
		}
		return benchstat.Median(ds).Seconds()
	}
	med := func(kind string) float64 {
		var ds []time.Duration
		for _, r := range b.reapply[kind] {
			ds = append(ds, r.d)
		}
		return benchstat.Median(ds).Seconds()
	}
	if len(b.reapply["noop"]) > 0 {
		fmt.Printf("| **first / noop** (target >= 15) | **%.2f** | |\n", med("first")/med("noop"))
	}
	if len(b.reapply["noop-base"]) > 0 {
		fmt.Printf("| first / noop-base | %.2f | |\n", med("first")/med("noop-base"))
		fmt.Printf("| noop-base / noop | %.2f | |\n", med("noop-base")/med("noop"))
		fmt.Printf("| noop-base / noop, client CPU | %.2f | |\n", medCPU("noop-base")/medCPU("noop"))
	}
}

// serverOptions are those of every fresh server.
func (b *bench) serverOptions() apiserver.Options {
	opts := apiserver.Options{BinDir: b.binDir}
	if b.etcdQuota > 0 {
		opts.EtcdFlags = []string{fmt.Sprintf("--quota-backend-bytes=%d", b.etcdQuota)}
	}
	return opts
}

// once starts a fresh server, runs contender c against it and stops it.
func (b *bench) once(ctx context.Context, c string) (time.Duration, error) {
	s, err := apiserver.Start(ctx, b.serverOptions())
	if err != nil {
		return 0, err
	}
	defer s.Stop()
	start := time.Now()
	switch c {
	case "cli":
		err = b.runCLI(ctx, s, "graph")
	case "cli-install":
		err = b.runCLI(ctx, s, "install")
	case "engine":
		err = b.runEngine(ctx, s)
	case "kubectl":
		err = b.runKubectl(ctx, s)
	case "raw":
		err = b.runRaw(ctx, s)
	default:
		err = fmt.Errorf("unknown contender %q", c)
	}
	return time.Since(start), err
}

func (b *bench) runCLI(ctx context.Context, s *apiserver.Server, order string) error {
	args := []string{"apply", "--kubeconfig", s.Kubeconfig, "--payload", b.payloadDir, "-o", "json", "--order", order}
	if b.parallelism > 0 {
		args = append(args, fmt.Sprintf("--parallelism=%d", b.parallelism))
	}
	cmd := exec.CommandContext(ctx, b.cliBin, args...)
	// A first apply: a payload the plan cache has not seen.
	cache, err := os.MkdirTemp(b.work, "cache")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	cmd.Stdout = nil
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		// Objects of kinds the payload has no CRD for fail; that is expected.
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s", err, errOut.String())
	}
	return nil
}

// runEngine is what `apply` does after planning: the engine
// (clustersync.Apply) on the plan built once, without progress output.
// The client's rate limits are the command's (clustersync.Connect keeps
// them from the configuration).
func (b *bench) runEngine(ctx context.Context, s *apiserver.Server) error {
	cfg := s.RESTConfig()
	cfg.QPS, cfg.Burst = cliQPS, cliBurst
	c, err := clustersync.Connect(ctx, cfg, clustersync.ConnectOptions{})
	if err != nil {
		return err
	}
	opts := clustersync.DefaultApplyOptions()
	if b.parallelism > 0 {
		opts.Parallelism = b.parallelism
	}
	// Objects of kinds the payload has no CRD for fail, as for the cli;
	// that is expected.
	clustersync.Apply(ctx, &clustersync.Session{Cluster: c, Plan: b.plan}, opts)
	return nil
}

// The command's client rate limits (cmd/payload-apply/kube.go).
const (
	cliQPS   = 500
	cliBurst = 1000
)

func (b *bench) runKubectl(ctx context.Context, s *apiserver.Server) error {
	cache := filepath.Join(b.work, fmt.Sprintf("kubectl-cache-%d", time.Now().UnixNano()))
	defer os.RemoveAll(cache)
	kubectl := func(args ...string) error {
		cmd := s.Kubectl(ctx, append(args, "--cache-dir", cache)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			// Objects of kinds the payload has no CRD for, or in
			// namespaces nothing creates, fail; kubectl goes on.
			return nil
		}
		if err != nil {
			return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	stage := []string{"apply", "--server-side", "--force-conflicts"}
	for _, f := range b.stageFiles {
		stage = append(stage, "-f", f)
	}
	if err := kubectl(stage...); err != nil {
		return err
	}
	if err := kubectl("wait", "--for", "condition=established", "--timeout", "120s", "crd", "--all"); err != nil {
		return err
	}
	for _, dir := range b.levelDirs {
		if err := kubectl("apply", "--server-side", "--force-conflicts", "-f", dir); err != nil {
			return err
		}
	}
	return nil
}

// writeKubectlInput writes the plan's objects for kubectl: the
// CustomResourceDefinitions and Namespaces in one file, everything else in
// one directory per run level holding one file per source file.
func (b *bench) writeKubectlInput() error {
	var staged []*manifest.Manifest
	byLevel := map[int][]*manifest.Manifest{}
	var levels []int
	for _, t := range b.plan.Graph.Tasks {
		if t.Manifest == nil {
			// A component step: kubectl has no equivalent.
			continue
		}
		if payload.StageCRDsAndNamespaces(t) {
			staged = append(staged, t.Manifest)
			continue
		}
		level, _, ok := payload.ParseFileName(t.Manifest.OriginalFilename)
		if !ok {
			level = 1 << 20
		}
		if _, seen := byLevel[level]; !seen {
			levels = append(levels, level)
		}
		byLevel[level] = append(byLevel[level], t.Manifest)
	}
	sort.Ints(levels)
	write := func(path string, ms []*manifest.Manifest) error {
		var sb strings.Builder
		for _, m := range ms {
			data, err := yaml.Marshal(m.Obj.Object)
			if err != nil {
				return err
			}
			sb.WriteString("---\n")
			sb.Write(data)
		}
		return os.WriteFile(path, []byte(sb.String()), 0o644)
	}
	stageFile := filepath.Join(b.work, "stage.yaml")
	if err := write(stageFile, staged); err != nil {
		return err
	}
	b.stageFiles = []string{stageFile}
	for _, l := range levels {
		dir := filepath.Join(b.work, fmt.Sprintf("level-%07d", l))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		byFile := map[string][]*manifest.Manifest{}
		var files []string
		for _, m := range byLevel[l] {
			if _, ok := byFile[m.File]; !ok {
				files = append(files, m.File)
			}
			byFile[m.File] = append(byFile[m.File], m)
		}
		for i, f := range files {
			if err := write(filepath.Join(dir, fmt.Sprintf("%04d-%s", i, filepath.Base(f))), byFile[f]); err != nil {
				return err
			}
		}
		b.levelDirs = append(b.levelDirs, dir)
	}
	return nil
}

// runRaw applies every object at once with server-side apply.
func (b *bench) runRaw(ctx context.Context, s *apiserver.Server) error {
	cfg := s.RESTConfig()
	cfg.QPS, cfg.Burst = -1, 0
	// As the command does with a server on this machine: gzip over
	// loopback only costs both ends CPU.
	cfg.DisableCompression = true
	// The server's deprecation warnings, once per object, are noise here.
	cfg.WarningHandler = rest.NoWarnings{}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	pending := b.plan.Objects
	for len(pending) > 0 {
		var mu sync.Mutex
		var retry []*manifest.Manifest
		sem := make(chan struct{}, 64)
		var wg sync.WaitGroup
		for _, m := range pending {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				err := rawApply(ctx, client, mapper, m.Obj)
				if err != nil && (meta.IsNoMatchError(err) || apierrors.IsNotFound(err)) {
					mu.Lock()
					retry = append(retry, m)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(retry) == len(pending) {
			return nil // what is left cannot be applied
		}
		pending = retry
		mapper.Reset()
	}
	return nil
}

func rawApply(ctx context.Context, client dynamic.Interface, mapper meta.RESTMapper, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = client.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	_, err = ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "raw", Force: true})
	return err
}
