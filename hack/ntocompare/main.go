// Command ntocompare measures the node tuning component against the node
// tuning operator's (NTO's) own render: it runs NTO's render command and
// payload-apply's render over NTO's eight render test scenarios and
// compares every object NTO writes with ours (internal/ntoequiv: identical,
// equivalent or different).
//
// NTO's sources are not part of this repository: check out
// openshift/cluster-node-tuning-operator at the commit DESIGN.md names into
// a scratch directory, generate its bindata and build its binary there
// (see docs/node-tuning.md), then:
//
//	go run ./hack/ntocompare -nto /work/scratch/nto [-payload-apply BIN] [-v] [-keep DIR]
//	go run ./hack/ntocompare -nto /work/scratch/nto -scenarios components/nodetuning/testdata/scenarios
//
// With -scenarios it renders each subdirectory of that directory instead,
// laid out as the node tuning tests lay theirs out: extra/ (manifests) and
// an optional cluster-config.yaml, which NTO reads together.
// Without -payload-apply it builds ./cmd/payload-apply of this checkout.
// NTO's inputs are split as payload-apply takes them: Infrastructure objects
// into a --cluster-config file, the rest (kustomization files left out) into
// an --extra-manifests directory.
//
// May import: internal/gobuild, internal/ntoequiv, lib/manifest.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/internal/gobuild"
	"github.com/payload-apply/payload-apply/internal/ntoequiv"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// scenario is one of NTO's render tests (test/e2e/performanceprofile/
// functests-render-command): its input directories under cluster-setup/
// and NTO's extra flags.
type scenario struct {
	name   string
	inputs []string
	flags  []string
}

var scenarios = []scenario{
	{"default", []string{"base/performance", "manual-cluster/performance"}, nil},
	{"no-rps", []string{"base/performance", "manual-cluster/performance-norps"}, nil},
	{"cpu-frequency", []string{"base/performance", "manual-cluster/cpuFrequency"}, []string{"--owner-ref", "none"}},
	{"arm", []string{"base/performance", "manual-cluster/arm"}, []string{"--owner-ref", "none"}},
	{"pinned", []string{"pinned-cluster/default"}, nil},
	{"pinned-single-node-legacy", []string{"pinned-cluster/single-node-legacy"}, nil},
	{"bootstrap-no-pools", []string{"bootstrap-cluster/performance", "pinned-cluster/default"}, nil},
	{"bootstrap-extra-pool", []string{"bootstrap-cluster/performance", "pinned-cluster/default", "bootstrap-cluster/extra-mcp"}, nil},
}

const weakOwnerLabel = "performance.openshift.io/weak-owner-reference-name"

func main() {
	ntoDir := flag.String("nto", "", "checkout of openshift/cluster-node-tuning-operator with its binary built")
	ntoBin := flag.String("nto-bin", "", "NTO binary (default: NTO/_output/cluster-node-tuning-operator)")
	paBin := flag.String("payload-apply", "", "payload-apply binary (default: build ./cmd/payload-apply)")
	keep := flag.String("keep", "", "write both renders under this directory and keep them")
	verbose := flag.Bool("v", false, "print the rules and differences of every object")
	own := flag.String("scenarios", "", "render the scenarios of this directory (extra/, cluster-config.yaml) instead of NTO's")
	flag.Parse()
	if *own != "" {
		list, err := ownScenarios(*own)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ntocompare:", err)
			os.Exit(1)
		}
		scenarios = list
	}
	if err := run(*ntoDir, *ntoBin, *paBin, *keep, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "ntocompare:", err)
		os.Exit(1)
	}
}

func run(ntoDir, ntoBin, paBin, keep string, verbose bool) error {
	if ntoDir == "" {
		return fmt.Errorf("-nto is required")
	}
	if ntoBin == "" {
		ntoBin = filepath.Join(ntoDir, "_output", "cluster-node-tuning-operator")
	}
	if _, err := os.Stat(ntoBin); err != nil {
		return fmt.Errorf("%w (build NTO first: see docs/node-tuning.md)", err)
	}
	work := keep
	if work == "" {
		tmp, err := os.MkdirTemp("", "ntocompare-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	}
	if paBin == "" {
		paBin = filepath.Join(work, "payload-apply")
		if out, err := gobuild.Command(paBin, "./cmd/payload-apply").CombinedOutput(); err != nil {
			return fmt.Errorf("build payload-apply: %v\n%s", err, out)
		}
	}
	setup := filepath.Join(ntoDir, "test", "e2e", "performanceprofile", "cluster-setup")
	totals := map[ntoequiv.Verdict]int{}
	all := 0
	for _, sc := range scenarios {
		results, err := runScenario(sc, setup, ntoBin, paBin, filepath.Join(work, sc.name))
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		for _, r := range results {
			totals[r.Verdict]++
			all++
			fmt.Printf("%-26s %-14s %-55s %s\n", sc.name, r.Kind, r.Name, r.Verdict)
			if verbose || r.Verdict == ntoequiv.Different || r.Verdict == ntoequiv.Missing {
				for _, n := range r.Notes {
					fmt.Printf("%28s- %s\n", "", n)
				}
			}
		}
	}
	fmt.Printf("\n%d NTO objects: %d identical, %d equivalent, %d different, %d missing\n", all,
		totals[ntoequiv.Identical], totals[ntoequiv.Equivalent], totals[ntoequiv.Different], totals[ntoequiv.Missing])
	return nil
}

// ownScenarios lists the scenarios of a directory in the node tuning
// tests' layout, with absolute input paths.
func ownScenarios(dir string) ([]scenario, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []scenario
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		base, err := filepath.Abs(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		inputs := []string{}
		if _, err := os.Stat(filepath.Join(base, "extra")); err == nil {
			inputs = append(inputs, filepath.Join(base, "extra"))
		}
		if _, err := os.Stat(filepath.Join(base, "cluster-config.yaml")); err == nil {
			inputs = append(inputs, filepath.Join(base, "cluster-config.yaml"))
		}
		out = append(out, scenario{name: e.Name(), inputs: inputs})
	}
	return out, nil
}

func runScenario(sc scenario, setup, ntoBin, paBin, dir string) ([]ntoequiv.Result, error) {
	ntoOut, ours, extra := filepath.Join(dir, "nto"), filepath.Join(dir, "ours"), filepath.Join(dir, "extra")
	for _, d := range []string{ntoOut, extra} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var inputs []string
	for _, in := range sc.inputs {
		if !filepath.IsAbs(in) {
			in = filepath.Join(setup, in)
		}
		inputs = append(inputs, in)
	}
	args := append([]string{"render", "--asset-input-dir", strings.Join(inputs, ","), "--asset-output-dir", ntoOut}, sc.flags...)
	if out, err := exec.Command(ntoBin, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("NTO render: %v\n%s", err, out)
	}

	clusterConfig, err := splitInputs(inputs, extra, filepath.Join(dir, "cluster-config.yaml"))
	if err != nil {
		return nil, err
	}
	paArgs := []string{"render", "--extra-manifests", extra, "-o", ours}
	if clusterConfig != "" {
		paArgs = append(paArgs, "--cluster-config", clusterConfig)
	}
	var renderErr string
	if out, err := exec.Command(paBin, paArgs...).CombinedOutput(); err != nil {
		renderErr = fmt.Sprintf("payload-apply render: %v: %s", err, strings.TrimSpace(string(out)))
	}
	ourObjs := map[string]map[string]any{}
	if renderErr == "" {
		if ourObjs, err = readTree(ours); err != nil {
			return nil, err
		}
	}
	ntoFiles, err := filepath.Glob(filepath.Join(ntoOut, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(ntoFiles)
	ignoreOwner := strings.Contains(strings.Join(sc.flags, " "), "none")
	var results []ntoequiv.Result
	for _, f := range ntoFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		mine := ourObjs[key(obj)]
		if mine != nil && ignoreOwner {
			mine = withoutLabel(mine, weakOwnerLabel)
		}
		r := ntoequiv.Compare(obj, mine)
		if renderErr != "" {
			r.Notes = append(r.Notes, renderErr)
		}
		results = append(results, r)
	}
	return results, nil
}

// splitInputs copies NTO's input manifests for payload-apply: Infrastructure
// documents into the cluster config file (returned, or "" when there is
// none), every other document into the extra manifests directory.
func splitInputs(dirs []string, extra, clusterConfig string) (string, error) {
	var cc bytes.Buffer
	n := 0
	for i, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || e.Name() == "kustomization.yaml" || filepath.Ext(p) != ".yaml" {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			ms, err := manifest.Parse(p, data, manifest.ParseOptions{})
			if err != nil {
				return err
			}
			for _, m := range ms {
				out, err := yaml.Marshal(m.Obj.Object)
				if err != nil {
					return err
				}
				if m.GVK.Kind == "Infrastructure" {
					cc.WriteString("---\n")
					cc.Write(out)
					continue
				}
				n++
				name := fmt.Sprintf("%02d_%02d_%s", i, n, e.Name())
				if err := os.WriteFile(filepath.Join(extra, name), out, 0o644); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	if cc.Len() == 0 {
		return "", nil
	}
	return clusterConfig, os.WriteFile(clusterConfig, cc.Bytes(), 0o644)
}

// readTree reads every object of a render output directory by key.
func readTree(dir string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ms, err := manifest.Parse(p, data, manifest.ParseOptions{})
		if err != nil {
			return err
		}
		for _, m := range ms {
			out[key(m.Obj.Object)] = m.Obj.Object
		}
		return nil
	})
	return out, err
}

func key(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v/%v/%v", obj["apiVersion"], obj["kind"], md["namespace"], md["name"])
}

func withoutLabel(obj map[string]any, label string) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	md, _ := obj["metadata"].(map[string]any)
	nmd := map[string]any{}
	for k, v := range md {
		nmd[k] = v
	}
	if labels, ok := md["labels"].(map[string]any); ok {
		nl := map[string]any{}
		for k, v := range labels {
			if k != label {
				nl[k] = v
			}
		}
		nmd["labels"] = nl
	}
	out["metadata"] = nmd
	return out
}
