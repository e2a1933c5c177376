package payload

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// parseFileNameByHand is ParseFileName without the regular expression:
// "0000_", decimal digits, "_", then the component up to the next "_",
// which must be dash-separated runs of ASCII letters and digits.
func parseFileNameByHand(name string) (int, string, bool) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	rest, ok := strings.CutPrefix(name, "0000_")
	if !ok {
		return -1, "", false
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits == len(rest) || rest[digits] != '_' {
		return -1, "", false
	}
	level, err := strconv.Atoi(rest[:digits])
	if err != nil {
		return -1, "", false
	}
	rest = rest[digits+1:]
	end := strings.IndexByte(rest, '_')
	if end <= 0 {
		return -1, "", false
	}
	comp := rest[:end]
	for _, run := range strings.Split(comp, "-") {
		if run == "" {
			return -1, "", false
		}
		for i := 0; i < len(run); i++ {
			c := run[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return -1, "", false
			}
		}
	}
	return level, comp, true
}

// FuzzParseFileName holds the run-level file name parser to a parser
// written by hand, and checks what it returns.
func FuzzParseFileName(f *testing.F) {
	for _, s := range []string{"0000_50_cluster-ingress-operator_02-deployment.yaml", "0000_5_x_y.yaml", "0000__x_y.yaml",
		"0000_50_-x_y", "0000_50_x-_y", "0000_50_a--b_y", "0000_99999999999999999999_x_y", "a/0000_10_b_c", "0000_10_b", "0000_10_é_x"} {
		f.Add(s)
	}
	for _, file := range realpayload.Sample(f, 100, 1<<30) {
		f.Add(file.Path)
	}
	f.Fuzz(func(t *testing.T, name string) {
		level, comp, ok := ParseFileName(name)
		wl, wc, wok := parseFileNameByHand(name)
		if level != wl || comp != wc || ok != wok {
			t.Fatalf("ParseFileName(%q) = %d, %q, %v; by hand %d, %q, %v", name, level, comp, ok, wl, wc, wok)
		}
		if !ok {
			if level != -1 || comp != "" {
				t.Fatalf("ParseFileName(%q) failed but returned %d, %q", name, level, comp)
			}
			return
		}
		if level < 0 || comp == "" {
			t.Fatalf("ParseFileName(%q) = %d, %q", name, level, comp)
		}
		// The directory does not matter, and the parts print back.
		if l2, c2, ok2 := ParseFileName("dir/sub/" + name); l2 != level || c2 != comp || !ok2 {
			t.Fatalf("with a directory: %d, %q, %v; want %d, %q", l2, c2, ok2, level, comp)
		}
		if l2, c2, ok2 := ParseFileName(fmt.Sprintf("0000_%02d_%s_rest.yaml", level, comp)); l2 != level || c2 != comp || !ok2 {
			t.Fatalf("printed back: %d, %q, %v; want %d, %q", l2, c2, ok2, level, comp)
		}
	})
}

// graphSpec is the text form FuzzTaskGraph decodes into manifests: one
// object per line, "FILE\tAPIVERSION\tKIND[\tCRDGROUP\tCRDKIND]".
func graphSpec(ms []manifest.Manifest) []byte {
	var b bytes.Buffer
	for _, m := range ms {
		fmt.Fprintf(&b, "%s\t%s\t%s", m.OriginalFilename, m.Obj.GetAPIVersion(), m.GVK.Kind)
		if m.GVK.Kind == "CustomResourceDefinition" {
			group, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "names", "kind")
			if group != "" && kind != "" {
				fmt.Fprintf(&b, "\t%s\t%s", group, kind)
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// manifestsOf decodes a graphSpec into at most 200 manifests; lines that
// do not make an object are skipped.
func manifestsOf(data []byte) []*manifest.Manifest {
	var out []*manifest.Manifest
	for i, line := range strings.Split(string(data), "\n") {
		if len(out) == 200 {
			break
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			continue
		}
		obj := map[string]any{"apiVersion": f[1], "kind": f[2], "metadata": map[string]any{"name": fmt.Sprintf("o%d", i)}}
		if len(f) >= 5 {
			obj["spec"] = map[string]any{"group": f[3], "names": map[string]any{"kind": f[4]}}
		}
		m, err := manifest.FromObject("release-manifests/"+f[0], 0, obj)
		if err != nil {
			continue
		}
		m.OriginalFilename = f[0]
		out = append(out, m)
	}
	return out
}

// FuzzTaskGraph builds the task graph of fuzzed manifests (file names,
// kinds, CRDs, Jobs) in the update and the install order and checks it
// against the CVO's rules: every manifest in exactly one node, nodes in
// task order; in the update order, of two nodes the earlier is an ancestor
// of the later unless both hold one run level's components; in the install
// order, only a Job between two nodes orders them.
func FuzzTaskGraph(f *testing.F) {
	f.Add([]byte("0000_10_a_x.yaml\tv1\tConfigMap\n0000_10_b_x.yaml\tbatch/v1\tJob\n0000_05_a_y.yaml\tv1\tSecret\nzzz.yaml\tv1\tConfigMap\n"))
	f.Add([]byte("0000_20_a_crd.yaml\tapiextensions.k8s.io/v1\tCustomResourceDefinition\texample.com\tWidget\n0000_20_b_w.yaml\texample.com/v1\tWidget\n0000_10_b_w.yaml\texample.com/v1\tWidget\n"))
	f.Add([]byte("0000_100_a_x.yaml\tv1\tConfigMap\n0000_10_b_x.yaml\tv1\tConfigMap\n0000_5_c_x.yaml\tv1\tConfigMap\n0000_05_d_x.yaml\tv1\tConfigMap\n0000_05_e_x.yaml\tv1\tConfigMap\n"))
	// The real payload, in slices of its files.
	var all []manifest.Manifest
	for _, file := range realpayload.Sample(f, 0, 128<<10) {
		ms, _ := manifest.Parse(file.Path, file.Data, manifest.ParseOptions{})
		all = append(all, ms...)
	}
	for i := 0; i < len(all); i += 150 {
		f.Add(graphSpec(all[i:min(i+150, len(all))]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms := manifestsOf(data)
		for _, order := range []Order{OrderUpdate, OrderInstall} {
			g, err := NewTaskGraph(ms, GraphOptions{Order: order})
			if err != nil {
				t.Fatal(err)
			}
			checkGraphInvariants(t, g)
			checkCVOOrder(t, g, order)
			if len(g.Tasks) != len(ms) {
				t.Fatalf("%d tasks for %d manifests", len(g.Tasks), len(ms))
			}
			seen := map[*manifest.Manifest]int{}
			for _, n := range g.Nodes {
				if len(n.Tasks) == 0 {
					t.Fatalf("node %s has no tasks", n)
				}
				for _, task := range n.Tasks {
					seen[task.Manifest]++
				}
				if n.Barrier && (len(n.Tasks) != 1 || !IsJob(n.Tasks[0].Manifest)) {
					t.Fatalf("barrier node %s is not one Job", n)
				}
			}
			for _, m := range ms {
				if seen[m] != 1 {
					t.Fatalf("%s is in %d nodes", m.OriginalFilename, seen[m])
				}
			}
		}
	})
}

// checkCVOOrder checks a graph of objects (no steps) against the CVO's
// rules for order (see FuzzTaskGraph).
func checkCVOOrder(t *testing.T, g *TaskGraph, order Order) {
	t.Helper()
	// before[b][a]: node a is an ancestor of node b.
	before := make([][]bool, len(g.Nodes))
	for i, n := range g.Nodes {
		before[i] = make([]bool, len(g.Nodes))
		for _, in := range n.In {
			before[i][in] = true
			for a := range before[in] {
				before[i][a] = before[i][a] || before[in][a]
			}
		}
		if diff := cmp.Diff(n.In, n.Requires); diff != "" {
			t.Fatalf("node %s: Requires differs from In (-in +requires):\n%s", n, diff)
		}
	}
	chunkOf := func(n *TaskNode) (level, comp string, single bool) {
		level, comp, ok := splitName(n.Tasks[0].orderName())
		for _, task := range n.Tasks[1:] {
			l, c, ok2 := splitName(task.orderName())
			if !ok || !ok2 || l != level || c != comp {
				return "", "", false
			}
		}
		return level, comp, ok && !n.Barrier
	}
	// sameRun: every task from node a's first to node b's last has a's
	// run level (as spelled) and is no Job.
	sameRun := func(a, b *TaskNode) bool {
		level, _, ok := splitName(a.Tasks[0].orderName())
		last := b.Tasks[len(b.Tasks)-1].Index
		for _, task := range g.Tasks[a.Tasks[0].Index-1 : last] {
			l, _, ok2 := splitName(task.orderName())
			if !ok || !ok2 || l != level || IsJob(task.Manifest) {
				return false
			}
		}
		return true
	}
	jobBetween := func(a, b int) bool {
		for _, n := range g.Nodes[a+1 : b] {
			if n.Barrier {
				return true
			}
		}
		return g.Nodes[a].Barrier || g.Nodes[b].Barrier
	}
	for i, a := range g.Nodes {
		la, ca, sa := chunkOf(a)
		if order == OrderInstall && !sa && !a.Barrier && len(a.Tasks) > 1 {
			t.Fatalf("install order: node %s holds more than one run level and component", a)
		}
		for _, b := range g.Nodes[i+1:] {
			ordered := before[b.Index][a.Index]
			lb, cb, sb := chunkOf(b)
			switch order {
			case OrderInstall:
				if ordered != jobBetween(a.Index, b.Index) {
					t.Fatalf("install order: node %s before %s is %v, want it only across a Job", a, b, ordered)
				}
			default:
				siblings := sa && sb && la == lb && ca != cb && sameRun(a, b)
				if ordered == siblings {
					t.Fatalf("update order: node %s before %s is %v; siblings of one run level: %v", a, b, ordered, siblings)
				}
			}
		}
	}
}
