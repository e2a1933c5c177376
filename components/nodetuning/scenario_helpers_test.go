package nodetuning_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/internal/ntoequiv"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// scenarioInput reads testdata/scenarios/NAME: the manifests of extra/ (as
// --extra-manifests gives them) and cluster-config.yaml (as
// --cluster-config gives it; absent: an empty Infrastructure).
func scenarioInput(t *testing.T, name string, gates ...string) *component.Input {
	t.Helper()
	dir := filepath.Join("testdata", "scenarios", name)
	in := &component.Input{
		Cluster:      &component.ClusterConfig{Infrastructure: &configv1.Infrastructure{}},
		FeatureGates: sets.New(gates...),
	}
	if data, err := os.ReadFile(filepath.Join(dir, "cluster-config.yaml")); err == nil {
		c, err := component.ParseClusterConfig("cluster-config.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		in.Cluster = c
	}
	files, _ := filepath.Glob(filepath.Join(dir, "extra", "*.yaml"))
	sort.Strings(files)
	for _, f := range files {
		in.Extra = append(in.Extra, readManifests(t, f)...)
	}
	return in
}

// renderScenario runs the hook over a scenario.
func renderScenario(t *testing.T, name string, gates ...string) *component.Output {
	t.Helper()
	out, err := nodetuning.Hook{}.Render(context.Background(), scenarioInput(t, name, gates...))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// byName indexes rendered objects as Kind/name.
func byName(ms []*manifest.Manifest) (map[string]*unstructured.Unstructured, []string) {
	out := map[string]*unstructured.Unstructured{}
	var order []string
	for _, m := range ms {
		k := m.GVK.Kind + "/" + m.Obj.GetName()
		out[k] = m.Obj
		order = append(order, k)
	}
	return out, order
}

// mcFile is a file of a MachineConfig, decoded.
type mcFile struct {
	mode int64
	text string
}

// mcUnit is a systemd unit of a MachineConfig.
type mcUnit struct {
	enabled bool
	text    string
}

// machineConfigContent decodes a MachineConfig's files and units.
func machineConfigContent(t *testing.T, mc *unstructured.Unstructured) (map[string]mcFile, []string, map[string]mcUnit, []string) {
	t.Helper()
	files := map[string]mcFile{}
	var paths, names []string
	list, _, _ := unstructured.NestedSlice(mc.Object, "spec", "config", "storage", "files")
	for _, f := range list {
		m := f.(map[string]any)
		c := m["contents"].(map[string]any)
		text, err := ntoequiv.DecodeDataURL(c["source"].(string))
		if err != nil {
			t.Fatalf("%s: %s: %v", mc.GetName(), m["path"], err)
		}
		p := m["path"].(string)
		files[p] = mcFile{mode: m["mode"].(int64), text: text}
		paths = append(paths, p)
	}
	units := map[string]mcUnit{}
	ulist, _, _ := unstructured.NestedSlice(mc.Object, "spec", "config", "systemd", "units")
	for _, u := range ulist {
		m := u.(map[string]any)
		enabled, _ := m["enabled"].(bool)
		n := m["name"].(string)
		units[n] = mcUnit{enabled: enabled, text: m["contents"].(string)}
		names = append(names, n)
	}
	return files, paths, units, names
}

// ignitionText prints every MachineConfig's files and units, decoded, for
// review in the golden files.
func ignitionText(t *testing.T, ms []*manifest.Manifest) string {
	t.Helper()
	var b strings.Builder
	for _, m := range ms {
		if m.GVK.Kind != "MachineConfig" {
			continue
		}
		files, paths, units, names := machineConfigContent(t, m.Obj)
		for _, p := range paths {
			fmt.Fprintf(&b, "=== %s file %s (mode %o)\n%s", m.Obj.GetName(), p, files[p].mode, withNewline(files[p].text))
		}
		for _, n := range names {
			fmt.Fprintf(&b, "=== %s unit %s (enabled %t)\n%s", m.Obj.GetName(), n, units[n].enabled, withNewline(units[n].text))
		}
	}
	return b.String()
}

// withNewline ends text with a newline, for listing files one after the
// other (a file need not end with one).
func withNewline(text string) string {
	if text == "" || strings.HasSuffix(text, "\n") {
		return text
	}
	return text + "\n(no newline at the end)\n"
}

// resolveTuned returns the effective TuneD profile of a Tuned on a host.
func resolveTuned(t *testing.T, tuned *unstructured.Unstructured, host ntoequiv.Host) *ntoequiv.Resolved {
	t.Helper()
	profiles, err := ntoequiv.TunedProfiles(tuned.Object)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ntoequiv.Resolve(profiles, ntoequiv.RecommendedProfile(tuned.Object), host)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tunedText prints every Tuned's profiles and, for each host, the
// included TuneD profiles and the kernel command line; for the Intel host
// with the realtime kernel also every section's effective options.
func tunedText(t *testing.T, ms []*manifest.Manifest) string {
	t.Helper()
	var b strings.Builder
	for _, m := range ms {
		if m.GVK.Kind != "Tuned" {
			continue
		}
		list, _, _ := unstructured.NestedSlice(m.Obj.Object, "spec", "profile")
		for _, p := range list {
			pm := p.(map[string]any)
			fmt.Fprintf(&b, "=== profile %s\n%s", pm["name"], pm["data"])
		}
		for _, h := range ntoequiv.Hosts {
			r := resolveTuned(t, m.Obj, h)
			fmt.Fprintf(&b, "=== effective on %s: includes %v\ncmdline: %s\n", h.Name, r.External, ntoequiv.Cmdline(r))
			if h.Name != "intel-rt" {
				continue
			}
			for _, s := range r.Merged.Sections {
				fmt.Fprintf(&b, "[%s]\n", s.Name)
				for _, o := range ntoequiv.EffectiveOptions(s) {
					b.WriteString("  " + o + "\n")
				}
			}
		}
	}
	return b.String()
}

// hostNamed returns the comparison host of that name.
func hostNamed(t *testing.T, name string) ntoequiv.Host {
	t.Helper()
	for _, h := range ntoequiv.Hosts {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no host %s", name)
	return ntoequiv.Host{}
}
