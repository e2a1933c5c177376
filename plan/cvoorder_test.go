package plan

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/golden"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// The CVO's graph, modelled for TestCVOOrder as the CVO builds it
// (pkg/payload/task_graph.go and sync_worker.go of
// openshift/cluster-version-operator): one node holding the payload's
// manifests in the order the CVO reads them, split at every Job, then
// each node parallelized by a break function into buckets, chained with
// the empty anchor and spacer nodes the CVO adds. The model shares no
// code with payload's graph, which builds the same nodes directly.

type cvoNode struct {
	tasks   []*manifest.Manifest
	in, out []int
}

type cvoGraph struct{ nodes []*cvoNode }

// cvoRead orders manifests as the CVO reads a payload: manifests/, then
// release-manifests/, each by file name (os.ReadDir), documents in order.
func cvoRead(ms []*manifest.Manifest) []*manifest.Manifest {
	out := append([]*manifest.Manifest(nil), ms...)
	dir := func(m *manifest.Manifest) int {
		if strings.HasPrefix(m.File, "manifests/") {
			return 0
		}
		return 1
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case dir(a) != dir(b):
			return dir(a) < dir(b)
		case a.OriginalFilename != b.OriginalFilename:
			return a.OriginalFilename < b.OriginalFilename
		}
		return a.Doc < b.Doc
	})
	return out
}

func swap(list []int, from, to int) {
	for i, v := range list {
		if v == from {
			list[i] = to
		}
	}
}

// splitJobs gives every Job a node of its own between what comes before
// and after it.
func (g *cvoGraph) splitJobs() {
	for i := 0; i < len(g.nodes); i++ {
		n := g.nodes[i]
		if len(n.tasks) < 2 {
			continue
		}
		j := -1
		for k, m := range n.tasks {
			if payload.IsJob(m) {
				j = k
				break
			}
		}
		if j < 0 {
			continue
		}
		if j > 0 {
			before := len(g.nodes)
			g.nodes = append(g.nodes, &cvoNode{tasks: n.tasks[:j], in: n.in, out: []int{i}})
			for _, p := range n.in {
				swap(g.nodes[p].out, i, before)
			}
			n.in = []int{before}
		}
		if j < len(n.tasks)-1 {
			after := len(g.nodes)
			g.nodes = append(g.nodes, &cvoNode{tasks: n.tasks[j+1:], in: []int{i}, out: n.out})
			for _, s := range n.out {
				swap(g.nodes[s].in, i, after)
			}
			n.out = []int{after}
		}
		n.tasks = n.tasks[j : j+1]
	}
}

// breakFunc cuts a node's tasks into buckets of nodes' tasks.
type breakFunc func([]*manifest.Manifest) [][][]*manifest.Manifest

// parallelize empties every node the break function cuts, chains its
// buckets after it (an empty spacer between two buckets of several
// nodes) and an empty anchor before what followed it.
func (g *cvoGraph) parallelize(fn breakFunc) {
	for i := 0; i < len(g.nodes); i++ {
		n := g.nodes[i]
		buckets := fn(n.tasks)
		if len(buckets) == 0 || (len(buckets) == 1 && len(buckets[0]) == 1) {
			continue
		}
		following := n.out
		n.tasks, n.out = nil, nil
		prev := []int{i}
		add := func(tasks []*manifest.Manifest) int {
			k := len(g.nodes)
			g.nodes = append(g.nodes, &cvoNode{tasks: tasks, in: append([]int(nil), prev...)})
			for _, p := range prev {
				g.nodes[p].out = append(g.nodes[p].out, k)
			}
			return k
		}
		for _, b := range buckets {
			if len(b) == 0 {
				continue
			}
			if len(prev) > 1 && len(b) > 1 {
				prev = []int{add(nil)}
			}
			var next []int
			for _, tasks := range b {
				next = append(next, add(tasks))
			}
			prev = next
		}
		if len(following) > 0 {
			anchor := len(g.nodes)
			g.nodes = append(g.nodes, &cvoNode{in: prev, out: following})
			for _, s := range following {
				swap(g.nodes[s].in, i, anchor)
			}
			for _, p := range prev {
				g.nodes[p].out = []int{anchor}
			}
		}
	}
}

var runLevelName = regexp.MustCompile(`^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_`)

// runs cuts tasks where the run level changes (or a name does not parse)
// and each run where the component changes.
func runs(tasks []*manifest.Manifest) [][][]*manifest.Manifest {
	var out [][][]*manifest.Manifest
	var prev []string
	for _, m := range tasks {
		match := runLevelName.FindStringSubmatch(m.OriginalFilename)
		switch {
		case match == nil || prev == nil || match[1] != prev[1]:
			out = append(out, [][]*manifest.Manifest{{m}})
		case match[2] != prev[2]:
			last := len(out) - 1
			out[last] = append(out[last], []*manifest.Manifest{m})
		default:
			last := len(out) - 1
			chunk := len(out[last]) - 1
			out[last][chunk] = append(out[last][chunk], m)
		}
		prev = match
	}
	return out
}

// cvoByNumberAndComponent: run levels in series, their components in
// parallel; a run of one component joins the node of a run of one
// component just before it.
func cvoByNumberAndComponent(tasks []*manifest.Manifest) [][][]*manifest.Manifest {
	if len(tasks) < 2 {
		return nil
	}
	var out [][][]*manifest.Manifest
	single := false
	for _, r := range runs(tasks) {
		switch {
		case len(r) > 1:
			out, single = append(out, r), false
		case single:
			last := out[len(out)-1]
			last[0] = append(last[0], r[0]...)
		default:
			out, single = append(out, [][]*manifest.Manifest{append([]*manifest.Manifest(nil), r[0]...)}), true
		}
	}
	return out
}

// cvoFlatten: every component of every run level a node of one bucket.
func cvoFlatten(tasks []*manifest.Manifest) [][][]*manifest.Manifest {
	if len(tasks) < 2 {
		return nil
	}
	var bucket [][]*manifest.Manifest
	for _, r := range runs(tasks) {
		bucket = append(bucket, r...)
	}
	return [][][]*manifest.Manifest{bucket}
}

// permuted: the reconcile's order for attempt, shuffled with one source
// per eight attempts and rotated by the attempt within them.
func permuted(attempt int) breakFunc {
	r := rand.New(rand.NewSource(int64(attempt / 8)))
	step := attempt % 8
	return func(tasks []*manifest.Manifest) [][][]*manifest.Manifest {
		buckets := cvoFlatten(tasks)
		for _, b := range buckets {
			r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		}
		for i, b := range buckets {
			shift := step % len(b)
			if len(b) >= 8 {
				shift = int(float64(step)*float64(len(b))/8) % len(b)
			}
			buckets[i] = append(append([][]*manifest.Manifest(nil), b[shift:]...), b[:shift]...)
		}
		return buckets
	}
}

func taskName(m *manifest.Manifest) string {
	return fmt.Sprintf("%s/%s#%d %s", path.Base(path.Dir(m.File)), m.OriginalFilename, m.Doc, m.ID())
}

// canonical prints a graph whatever its empty nodes and numbering: its
// nodes with tasks, ordered by their first task's place in reading order,
// each with the nodes it waits for (through empty ones) and, among the
// nodes that wait for the same ones, its rank by index (the order they
// start in).
func canonical(tasks [][]*manifest.Manifest, in [][]int, readOrder []*manifest.Manifest) string {
	pos := map[*manifest.Manifest]int{}
	for i, m := range readOrder {
		pos[m] = i
	}
	var real []int
	for i, ts := range tasks {
		if len(ts) > 0 {
			real = append(real, i)
		}
	}
	var preds func(i int, seen map[int]bool) []int
	preds = func(i int, seen map[int]bool) []int {
		var out []int
		for _, p := range in[i] {
			if seen[p] {
				continue
			}
			seen[p] = true
			if len(tasks[p]) > 0 {
				out = append(out, p)
			} else {
				out = append(out, preds(p, seen)...)
			}
		}
		return out
	}
	ordered := append([]int(nil), real...)
	sort.Slice(ordered, func(a, b int) bool { return pos[tasks[ordered[a]][0]] < pos[tasks[ordered[b]][0]] })
	number := map[int]int{}
	for k, i := range ordered {
		number[i] = k
	}
	after := map[int]string{}
	siblings := map[string][]int{}
	for _, i := range real {
		var ps []int
		for _, p := range preds(i, map[int]bool{}) {
			ps = append(ps, number[p])
		}
		sort.Ints(ps)
		after[i] = fmt.Sprint(ps)
		siblings[after[i]] = append(siblings[after[i]], i)
	}
	rank := map[int]int{}
	for _, group := range siblings {
		sort.Ints(group)
		for r, i := range group {
			rank[i] = r
		}
	}
	var b strings.Builder
	for k, i := range ordered {
		fmt.Fprintf(&b, "node %d after %s start %d\n", k, after[i], rank[i])
		for _, m := range tasks[i] {
			fmt.Fprintf(&b, "  %s\n", taskName(m))
		}
	}
	return b.String()
}

// cvoCanonical builds the model's graph of ms for order.
func cvoCanonical(ms []*manifest.Manifest, order payload.Order, attempt int) string {
	read := cvoRead(ms)
	g := &cvoGraph{nodes: []*cvoNode{{tasks: read}}}
	g.splitJobs()
	switch order {
	case payload.OrderInstall:
		g.parallelize(cvoFlatten)
	case payload.OrderReconcile:
		g.parallelize(permuted(attempt))
	default:
		g.parallelize(cvoByNumberAndComponent)
	}
	tasks := make([][]*manifest.Manifest, len(g.nodes))
	in := make([][]int, len(g.nodes))
	for i, n := range g.nodes {
		tasks[i], in[i] = n.tasks, n.in
	}
	return canonical(tasks, in, read)
}

// oursCanonical is the same of payload.NewTaskGraph's graph.
func oursCanonical(t *testing.T, ms []*manifest.Manifest, order payload.Order, attempt int) string {
	g, err := payload.NewTaskGraph(ms, payload.GraphOptions{Order: order, Attempt: attempt})
	if err != nil {
		t.Fatal(err)
	}
	tasks := make([][]*manifest.Manifest, len(g.Nodes))
	in := make([][]int, len(g.Nodes))
	for i, n := range g.Nodes {
		for _, task := range n.Tasks {
			tasks[i] = append(tasks[i], task.Manifest)
		}
		in[i] = n.In
	}
	return canonical(tasks, in, cvoRead(ms))
}

// TestCVOOrder states the CVO's graph, node by node, for the four
// reference profiles' Default selections of the real payload, in the
// update order (the golden files of testdata/TestCVOOrder, written from
// the model above with -update) and checks that payload.NewTaskGraph
// makes exactly that, and the CVO's install and reconcile orders too. (The
// model was also checked against the CVO's own code: docs/upgrade.md.)
func TestCVOOrder(t *testing.T) {
	dir := realpayload.Dir(t)
	for _, profile := range []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"} {
		t.Run(profile, func(t *testing.T) {
			p, err := Build(context.Background(), Options{Payload: os.DirFS(dir), Profile: profile})
			if err != nil {
				t.Fatal(err)
			}
			ms := p.Selection.Included
			want := cvoCanonical(ms, payload.OrderUpdate, 0)
			golden.AssertTestdata(t, "update.txt", want)
			if diff := cmp.Diff(want, oursCanonical(t, ms, payload.OrderUpdate, 0)); diff != "" {
				t.Errorf("update order (-the CVO's +ours):\n%s", diff)
			}
			for _, o := range []struct {
				order   payload.Order
				attempt int
			}{{payload.OrderInstall, 0}, {payload.OrderReconcile, 0}, {payload.OrderReconcile, 5}, {payload.OrderReconcile, 13}} {
				if diff := cmp.Diff(cvoCanonical(ms, o.order, o.attempt), oursCanonical(t, ms, o.order, o.attempt)); diff != "" {
					t.Errorf("%s order, attempt %d (-the CVO's +ours):\n%s", o.order, o.attempt, diff)
				}
			}
		})
	}
}

// TestCVOOrderJobs checks the orders where the real payload has nothing
// to show: Jobs, adjacent Jobs, names that do not parse, run levels spelt
// "100" and "5".
func TestCVOOrderJobs(t *testing.T) {
	var ms []*manifest.Manifest
	add := func(file, kind, name string) {
		apiVersion := "v1"
		if kind == "Job" {
			apiVersion = "batch/v1"
		}
		m, err := manifest.FromObject(file, 0, map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for i, c := range []string{"a", "b", "c", "d", "e", "f"} {
		add(fmt.Sprintf("release-manifests/0000_50_%s_01.yaml", c), "ConfigMap", c+"1")
		add(fmt.Sprintf("release-manifests/0000_%02d_%s_02.yaml", 10*i, c), "ConfigMap", c+"2")
	}
	add("release-manifests/0000_50_c_05-job.yaml", "Job", "j1")
	add("release-manifests/0000_50_c_06-job.yaml", "Job", "j2")
	add("release-manifests/0000_100_z_01.yaml", "ConfigMap", "z")
	add("release-manifests/0000_5_y_01.yaml", "ConfigMap", "y")
	add("release-manifests/0000_50_nocomponent.yaml", "ConfigMap", "n1")
	add("release-manifests/zz.yaml", "ConfigMap", "zz")
	add("manifests/0000_90_cvo_01.yaml", "ConfigMap", "cvo")
	add("release-manifests/0000_70_g_01-job.yaml", "Job", "j3")
	for _, o := range []payload.Order{payload.OrderUpdate, payload.OrderInstall, payload.OrderReconcile} {
		for _, attempt := range []int{0, 3, 17} {
			if diff := cmp.Diff(cvoCanonical(ms, o, attempt), oursCanonical(t, ms, o, attempt)); diff != "" {
				t.Errorf("%s order, attempt %d (-the CVO's +ours):\n%s", o, attempt, diff)
			}
		}
	}
}
