// Command diffbench measures the live diff of a payload against a cluster
// that has it applied and then drifted: `payload-apply diff --kubeconfig`
// against `kubectl diff --server-side` of the same objects, on one machine,
// in one session, on one server.
//
// Setup, once: a fresh etcd and kube-apiserver (test/apiserver); the kinds
// and namespaces the payload uses but does not create (the CRDs of the
// monitoring and cloud-credential operators, the namespaces of operators
// outside the payload), so that every object can be applied, as on an
// OpenShift cluster; `payload-apply apply` of the payload, which must
// succeed; then drift: a Deployment's replicas and a ConfigMap's data
// edited by another field manager, a ClusterRole and a Service deleted
// (the first of each kind in the plan that apply updates; for the
// Deployment, the first whose manifest sets replicas); and the selection
// written for kubectl as apply sends it.
//
// Then the contenders run alternately, round after round, after one warm-up
// run each:
//
//   - cli: `payload-apply diff --kubeconfig K --payload DIR -o json` (the
//     binary, end to end: the payload's parse from the plan cache the
//     setup's apply filled, select, read every object, dry-run what
//     differs);
//   - cli-cold (when named in -only): the same with an empty plan cache
//     (the payload parsed);
//   - kubectl: `kubectl diff --server-side --force-conflicts
//     --field-manager=payload-apply -R -f DIR` of the same objects as apply
//     sends them (writeKubectlInput), with kubectl from _output/bin and a
//     warm discovery cache;
//   - engine: the library the command calls (clustersync.Diff) in this
//     process, with the plan built once: the live part of cli alone;
//   - plan: `payload-apply render --list --payload DIR`: the offline part of
//     cli (parse, select, graph), for scale.
//
// Every run of cli, engine and kubectl must show exactly the four objects
// drifted (cli and kubectl exiting 1): two to change, two to create again. The medians and the
// ratio kubectl/cli are printed as a Markdown table. Absolute times on a
// shared machine mean little; the ratios do.
//
// Usage (from the repository root):
//
//	go run ./hack/diffbench [-payload ../shared/testdata/ocp-payload] [-rounds 7] [-parallelism N] [-only cli,cli-cold,engine,kubectl,plan] [-hold]
//
// May import: clustersync, internal/benchstat, internal/gobuild, lib/diff,
// lib/manifest,
// lib/resourceapply, plan, test/apiserver.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/internal/benchstat"
	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/lib/diff"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func main() {
	payloadDir := flag.String("payload", "../shared/testdata/ocp-payload", "payload directory")
	rounds := flag.Int("rounds", 7, "alternating rounds")
	parallelism := flag.Int("parallelism", 0, "--parallelism for cli (0: the command's default)")
	only := flag.String("only", "cli,engine,kubectl,plan", "contenders to run, comma separated (cli-cold: cli with an empty plan cache)")
	hold := flag.Bool("hold", false, "after the setup, print the kubeconfig and the kubectl input directory and wait for SIGINT or SIGTERM, instead of measuring")
	flag.Parse()
	if _, err := os.Stat(filepath.Join(*payloadDir, "release-manifests")); err != nil {
		fmt.Fprintf(os.Stderr, "diffbench: skipping: no payload at %s (%v)\n", *payloadDir, err)
		os.Exit(0)
	}
	if err := run(*payloadDir, *rounds, *parallelism, *hold, strings.Split(*only, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "diffbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	payloadDir  string
	parallelism int
	cliBin      string
	kubectl     string
	rendered    string
	cache       string
	work        string
	xdgCache    string // XDG_CACHE_HOME of cli and plan: the plan cache
	server      *apiserver.Server
	// want are the objects drifted, as "<group>/<Kind>/<namespace>/<name>",
	// sorted; kubectlNames maps kubectl diff's file names to the same.
	want         []string
	kubectlNames map[string]string
	// engine and plan are the in-process contender's cluster and plan.
	engine *clustersync.Cluster
	plan   *plan.Plan
}

func run(payloadDir string, rounds, parallelism int, hold bool, contenders []string) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "diffbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := &bench{payloadDir: payloadDir, parallelism: parallelism,
		rendered: filepath.Join(work, "rendered"), cache: filepath.Join(work, "kubectl-cache"), work: work,
		xdgCache: filepath.Join(work, "xdg-cache")}
	binDir, err := apiserver.Build(ctx)
	if err != nil {
		return err
	}
	b.kubectl = filepath.Join(binDir, "kubectl")
	b.cliBin = filepath.Join(work, "payload-apply")
	build := gobuild.Command(b.cliBin, "./cmd/payload-apply")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	p, err := plan.Build(ctx, plan.Options{Payload: os.DirFS(payloadDir)})
	if err != nil {
		return err
	}
	if b.server, err = apiserver.Start(ctx, apiserver.Options{BinDir: binDir}); err != nil {
		return err
	}
	defer b.server.Stop()
	stubs, namespaces, err := b.prepare(ctx, p)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	setup := exec.CommandContext(ctx, b.cliBin, "apply", "--kubeconfig", b.server.Kubeconfig, "--payload", payloadDir)
	setup.Env = append(os.Environ(), "XDG_CACHE_HOME="+b.xdgCache)
	if out, err := setup.CombinedOutput(); err != nil {
		return fmt.Errorf("apply: %w:\n%s", err, tail(string(out)))
	}
	mgr, err := resourceapply.NewManager(b.server.RESTConfig(), resourceapply.Options{})
	if err != nil {
		return err
	}
	written, err := b.writeKubectlInput(mgr, p)
	if err != nil {
		return err
	}
	// Before the drift, both must see nothing to do.
	for _, c := range []string{"cli", "kubectl"} {
		if _, err := b.once(ctx, c, nil); err != nil {
			return fmt.Errorf("right after apply, %s: %w", c, err)
		}
	}
	if b.want, err = b.drift(ctx, p); err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	fmt.Fprintf(os.Stderr, "diffbench: %d objects applied (%d stub CRDs, %d extra namespaces first), %d given to kubectl, drifted %s, %d cores, %d rounds\n",
		len(p.Objects), stubs, namespaces, written, strings.Join(b.want, " "), runtime.NumCPU(), rounds)

	if hold {
		fmt.Printf("KUBECONFIG=%s\nINPUT=%s\n", b.server.Kubeconfig, b.rendered)
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		<-ctx.Done()
		return nil
	}
	if b.engine, err = clustersync.Connect(ctx, b.server.RESTConfig(), clustersync.ConnectOptions{}); err != nil {
		return err
	}
	b.plan = p
	for _, c := range contenders {
		d, err := b.once(ctx, c, b.want)
		if err != nil {
			return fmt.Errorf("warm-up, %s: %w", c, err)
		}
		fmt.Fprintf(os.Stderr, "diffbench: warm-up  %-8s %s\n", c, d.Round(time.Millisecond))
	}
	times, err := benchstat.Rounds("diffbench", rounds, contenders, func(_ int, c string) (time.Duration, error) {
		return b.once(ctx, c, b.want)
	}, func(format string, args ...any) { fmt.Fprintf(os.Stderr, format, args...) })
	if err != nil {
		return err
	}
	fmt.Print(benchstat.Header)
	for _, c := range contenders {
		fmt.Print(benchstat.Row(c, times[c]))
	}
	ratio := func(a, b string) {
		if len(times[a]) > 0 && len(times[b]) > 0 {
			fmt.Printf("| **%s / %s** | **%.2f** | |\n", a, b, benchstat.Median(times[a]).Seconds()/benchstat.Median(times[b]).Seconds())
		}
	}
	ratio("kubectl", "cli")
	ratio("kubectl", "cli-cold")
	ratio("cli-cold", "cli")
	return nil
}

// once runs contender c and checks that it ended as expected: for cli and
// kubectl, exit 0 when want is empty, else exit 1 showing exactly the
// objects of want.
func (b *bench) once(ctx context.Context, c string, want []string) (time.Duration, error) {
	if c == "engine" {
		return b.onceEngine(ctx, want)
	}
	var cmd *exec.Cmd
	switch c {
	case "cli", "cli-cold":
		args := []string{"diff", "--kubeconfig", b.server.Kubeconfig, "--payload", b.payloadDir, "-o", "json"}
		if b.parallelism > 0 {
			args = append(args, fmt.Sprintf("--parallelism=%d", b.parallelism))
		}
		cmd = exec.CommandContext(ctx, b.cliBin, args...)
		cache := b.xdgCache
		if c == "cli-cold" {
			dir, err := os.MkdirTemp(b.work, "cold")
			if err != nil {
				return 0, err
			}
			defer os.RemoveAll(dir)
			cache = dir
		}
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	case "kubectl":
		cmd = exec.CommandContext(ctx, b.kubectl, "--kubeconfig", b.server.Kubeconfig, "--cache-dir", b.cache,
			"diff", "--server-side", "--force-conflicts", "--field-manager="+resourceapply.DefaultFieldManager, "-R", "-f", b.rendered)
	case "plan":
		cmd = exec.CommandContext(ctx, b.cliBin, "render", "--list", "--payload", b.payloadDir)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+b.xdgCache)
	default:
		return 0, fmt.Errorf("unknown contender %q", c)
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return 0, err
	}
	wantCode := 0
	if c != "plan" && len(want) > 0 {
		wantCode = 1
	}
	if code != wantCode {
		return 0, fmt.Errorf("exit %d, want %d:\n%s\n%s", code, wantCode, tail(out.String()), tail(errOut.String()))
	}
	var got []string
	switch c {
	case "cli", "cli-cold":
		if got, err = cliObjects(out.String()); err != nil {
			return 0, err
		}
	case "kubectl":
		if got, err = b.kubectlObjects(out.String()); err != nil {
			return 0, err
		}
	default:
		return d, nil
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return 0, fmt.Errorf("objects shown %q, want %q:\n%s", got, want, tail(out.String()))
	}
	return d, nil
}

// onceEngine runs the engine's live diff in this process and checks that
// it shows exactly want.
func (b *bench) onceEngine(ctx context.Context, want []string) (time.Duration, error) {
	start := time.Now()
	r, err := clustersync.Diff(ctx, &clustersync.Session{Cluster: b.engine, Plan: b.plan}, clustersync.DiffOptions{Parallelism: b.parallelism})
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if len(r.Failures) > 0 {
		return 0, errors.Join(r.Failures...)
	}
	got := []string{}
	for _, e := range r.Result.Entries {
		if e.Action == diff.Unchanged {
			continue
		}
		group := e.ID.Group
		if group == "" {
			group = "core"
		}
		got = append(got, header(group, e.ID.Kind, e.ID.Namespace, e.ID.Name))
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return 0, fmt.Errorf("engine shows %q, want %q", got, want)
	}
	return d, nil
}

// header is an object's name in the results: "<group>/<Kind>/<namespace>/<name>".
func header(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

// cliObjects returns the objects `payload-apply diff -o json` shows, sorted.
func cliObjects(out string) ([]string, error) {
	var r struct {
		Objects []struct {
			Group, Kind, Namespace, Name string
		} `json:"objects"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return nil, fmt.Errorf("payload-apply diff -o json: %w", err)
	}
	got := []string{}
	for _, o := range r.Objects {
		if o.Group == "" {
			o.Group = "core"
		}
		got = append(got, header(o.Group, o.Kind, o.Namespace, o.Name))
	}
	sort.Strings(got)
	return got, nil
}

// kubectlDiffLine is the line kubectl diff prints before each object's
// diff: diff -u -N LIVE-DIR/<name> MERGED-DIR/<name>.
var kubectlDiffLine = regexp.MustCompile(`(?m)^diff -u -N \S+/(\S+) \S+$`)

// kubectlObjects returns the objects kubectl diff shows, sorted.
func (b *bench) kubectlObjects(out string) ([]string, error) {
	got := []string{}
	for _, m := range kubectlDiffLine.FindAllStringSubmatch(out, -1) {
		h, ok := b.kubectlNames[m[1]]
		if !ok {
			return nil, fmt.Errorf("kubectl diff shows %s, which is not in its input", m[1])
		}
		got = append(got, h)
	}
	sort.Strings(got)
	return got, nil
}

// kubectlName is the file name kubectl diff gives an object:
// [<group>.]<version>.<Kind>.<namespace>.<name>.
func kubectlName(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	name := fmt.Sprintf("%s.%s.%s.%s", gvk.Version, gvk.Kind, obj.GetNamespace(), obj.GetName())
	if gvk.Group != "" {
		name = gvk.Group + "." + name
	}
	return name
}

// headerOf is obj's name in the results.
func headerOf(obj *unstructured.Unstructured) string {
	group := obj.GroupVersionKind().Group
	if group == "" {
		group = "core"
	}
	return header(group, obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

// updatable reports whether apply updates m when it exists: not an object
// to delete, not create-only, not a ClusterOperator (created once).
func updatable(m *manifest.Manifest) bool {
	return !m.IsDelete() && !m.IsCreateOnly() && m.Obj.GroupVersionKind().GroupKind() != clusterOperatorGK
}

var clusterOperatorGK = schema.GroupKind{Group: "config.openshift.io", Kind: "ClusterOperator"}

// writeKubectlInput writes the objects apply updates, as Manager.Required
// says apply sends them (pruned to their Go types, as the CVO decodes
// them, and server-set metadata dropped), one file per source file as
// `payload-apply render -o` writes them. Left out are the objects apply
// never updates when they exist, for which kubectl has no equivalent:
// those annotated release.openshift.io/delete (kubectl would try to
// create them, and such stubs are invalid, which stops kubectl diff),
// create-only ones and ClusterOperators. It returns how many objects it
// wrote and fills b.kubectlNames.
func (b *bench) writeKubectlInput(mgr *resourceapply.Manager, p *plan.Plan) (int, error) {
	byFile := map[string][]*unstructured.Unstructured{}
	var files []string
	b.kubectlNames = map[string]string{}
	for _, m := range p.Objects {
		if !updatable(m) {
			continue
		}
		obj, err := mgr.Required(m.Obj)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", m.Position(), err)
		}
		if _, ok := byFile[m.File]; !ok {
			files = append(files, m.File)
		}
		byFile[m.File] = append(byFile[m.File], obj)
		b.kubectlNames[kubectlName(obj)] = headerOf(obj)
	}
	n := 0
	for _, f := range files {
		var sb strings.Builder
		for _, obj := range byFile[f] {
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				return 0, err
			}
			sb.WriteString("---\n")
			sb.Write(data)
			n++
		}
		path := filepath.Join(b.rendered, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// drift changes the cluster as people and other controllers do: the first
// Deployment of the plan apply updates, and whose manifest sets replicas
// (apply owns only the fields the payload sets), gets 2 more replicas and the first
// such ConfigMap with data an edited value, both by another field manager;
// the first such ClusterRole and Service are deleted. It returns the
// objects drifted, sorted.
func (b *bench) drift(ctx context.Context, p *plan.Plan) ([]string, error) {
	client, err := dynamic.NewForConfig(b.server.RESTConfig())
	if err != nil {
		return nil, err
	}
	first := func(gk schema.GroupKind, ok func(*unstructured.Unstructured) bool) (*unstructured.Unstructured, error) {
		for _, m := range p.Objects {
			if updatable(m) && m.Obj.GroupVersionKind().GroupKind() == gk && ok(m.Obj) {
				return m.Obj, nil
			}
		}
		return nil, fmt.Errorf("no %s in the plan to drift", gk)
	}
	anyOne := func(*unstructured.Unstructured) bool { return true }
	resource := func(obj *unstructured.Unstructured, plural string) dynamic.ResourceInterface {
		gvr := obj.GroupVersionKind().GroupVersion().WithResource(plural)
		if obj.GetNamespace() == "" {
			return client.Resource(gvr)
		}
		return client.Resource(gvr).Namespace(obj.GetNamespace())
	}
	edit := func(obj *unstructured.Unstructured, plural string, change func(live *unstructured.Unstructured)) error {
		ri := resource(obj, plural)
		live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(live)
		_, err = ri.Update(ctx, live, metav1.UpdateOptions{FieldManager: "diffbench-edit"})
		return err
	}
	var drifted []string
	dep, err := first(schema.GroupKind{Group: "apps", Kind: "Deployment"}, func(o *unstructured.Unstructured) bool {
		// Apply owns only the fields the payload sets.
		_, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
		return found
	})
	if err != nil {
		return nil, err
	}
	if err := edit(dep, "deployments", func(live *unstructured.Unstructured) {
		n, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
		_ = unstructured.SetNestedField(live.Object, n+2, "spec", "replicas")
	}); err != nil {
		return nil, err
	}
	drifted = append(drifted, headerOf(dep))
	cm, err := first(schema.GroupKind{Kind: "ConfigMap"}, func(o *unstructured.Unstructured) bool {
		data, _, _ := unstructured.NestedStringMap(o.Object, "data")
		return len(data) > 0
	})
	if err != nil {
		return nil, err
	}
	if err := edit(cm, "configmaps", func(live *unstructured.Unstructured) {
		data, _, _ := unstructured.NestedStringMap(live.Object, "data")
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		data[keys[0]] += "\n# edited by diffbench"
		_ = unstructured.SetNestedStringMap(live.Object, data, "data")
	}); err != nil {
		return nil, err
	}
	drifted = append(drifted, headerOf(cm))
	for _, d := range []struct {
		gk     schema.GroupKind
		plural string
	}{
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, "clusterroles"},
		{schema.GroupKind{Kind: "Service"}, "services"},
	} {
		obj, err := first(d.gk, anyOne)
		if err != nil {
			return nil, err
		}
		if err := resource(obj, d.plural).Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil {
			return nil, err
		}
		drifted = append(drifted, headerOf(obj))
	}
	sort.Strings(drifted)
	return drifted, nil
}

// prepare makes the server hold what the payload needs but does not
// create: a CustomResourceDefinition (any content accepted) for every kind
// the server lacks and no CRD of the payload defines, and every namespace
// objects name that no Namespace of the payload creates. It returns how
// many of each it created.
func (b *bench) prepare(ctx context.Context, p *plan.Plan) (stubs, namespaces int, err error) {
	cfg := b.server.RESTConfig()
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, 0, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return 0, 0, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	objs := p.Unstructured()
	defined := map[schema.GroupKind]bool{}
	for _, gk := range resourceapply.CRDKinds(objs) {
		defined[gk] = true
	}
	created := map[string]bool{}
	for _, ns := range resourceapply.Namespaces(objs) {
		created[ns] = true
	}
	type stub struct {
		gvk        schema.GroupVersionKind
		namespaced bool
	}
	stubsByGK := map[schema.GroupKind]stub{}
	needNS := map[string]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if ns := o.GetNamespace(); ns != "" && !created[ns] {
			needNS[ns] = true
		}
		if defined[gvk.GroupKind()] {
			continue
		}
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
			stubsByGK[gvk.GroupKind()] = stub{gvk: gvk, namespaced: o.GetNamespace() != ""}
		} else if err != nil {
			return 0, 0, err
		}
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, s := range stubsByGK {
		plural := strings.ToLower(s.gvk.Kind) + "s"
		scope := "Cluster"
		if s.namespaced {
			scope = "Namespaced"
		}
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata": map[string]any{"name": plural + "." + s.gvk.Group,
				// Groups under k8s.io need it (migration.k8s.io).
				"annotations": map[string]any{"api-approved.kubernetes.io": "unapproved, stub for a benchmark"}},
			"spec": map[string]any{
				"group": s.gvk.Group,
				"names": map[string]any{"kind": s.gvk.Kind, "listKind": s.gvk.Kind + "List", "plural": plural, "singular": strings.ToLower(s.gvk.Kind)},
				"scope": scope,
				"versions": []any{map[string]any{
					"name": s.gvk.Version, "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				}},
			},
		}}
		if _, err := client.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, 0, fmt.Errorf("stub CRD for %s: %w", s.gvk, err)
		}
		stubs++
	}
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for ns := range needNS {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := client.Resource(nsGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, 0, fmt.Errorf("namespace %s: %w", ns, err)
		}
		namespaces++
	}
	// Wait until the stub kinds are served.
	deadline := time.Now().Add(time.Minute)
	for gk, s := range stubsByGK {
		for {
			mapper.Reset()
			if _, err := mapper.RESTMapping(gk, s.gvk.Version); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return 0, 0, fmt.Errorf("stub CRD for %s not served after a minute", s.gvk)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return stubs, namespaces, nil
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
