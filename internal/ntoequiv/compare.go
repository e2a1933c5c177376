package ntoequiv

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Verdict says how one of our objects relates to NTO's.
type Verdict string

// The verdicts, from best to worst.
const (
	Identical  Verdict = "identical"
	Equivalent Verdict = "equivalent"
	Different  Verdict = "different"
	Missing    Verdict = "missing"
)

// Result is the comparison of one NTO object with ours.
type Result struct {
	// Kind and Name identify the object.
	Kind, Name string
	// Verdict is how they relate.
	Verdict Verdict
	// Notes say, for Equivalent, which rules decided (one per rule, with
	// the count of files it decided) and, for Different, what differs.
	Notes []string
}

// Compare compares NTO's object with ours (nil: we render none).
func Compare(nto, ours map[string]any) Result {
	kind, _ := nto["kind"].(string)
	r := Result{Kind: kind, Name: name(nto)}
	if ours == nil {
		r.Verdict = Missing
		return r
	}
	a, b := Prune(jsonValue(typed(nto))), Prune(jsonValue(typed(ours)))
	if reflect.DeepEqual(a, b) {
		r.Verdict = Identical
		return r
	}
	var notes []string
	switch kind {
	case "MachineConfig":
		notes = machineConfigDiff(a, b, &r)
	case "Tuned":
		notes = tunedDiff(a, b, &r)
	default:
		notes = Diff("", a, b)
	}
	if len(notes) == 0 {
		r.Verdict = Equivalent
		return r
	}
	r.Verdict = Different
	r.Notes = notes
	return r
}

func name(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

// typed returns obj with the parts that have a Go type read through that
// type, as their consumers read them: a KubeletConfig's spec.kubeletConfig
// is decoded into the kubelet's KubeletConfiguration and encoded again, the
// way the Machine Config Operator reads it, so that fields holding their
// zero value (durations "0s" included) compare as absent.
func typed(obj map[string]any) map[string]any {
	if obj["kind"] != "KubeletConfig" {
		return obj
	}
	spec, _ := obj["spec"].(map[string]any)
	raw, ok := spec["kubeletConfig"]
	if !ok {
		return obj
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return obj
	}
	var kc kubeletconfigv1beta1.KubeletConfiguration
	if err := json.Unmarshal(data, &kc); err != nil {
		return obj
	}
	out, nspec := without(obj), without(spec)
	nspec["kubeletConfig"] = kc
	out["spec"] = nspec
	return out
}

// jsonValue returns v as encoding/json decodes it (numbers as float64), so
// that objects parsed by different YAML readers compare.
func jsonValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// Prune returns v without the map entries that hold a zero value (nil, "",
// false, 0, empty maps and lists), recursively; list elements keep their
// places.
func Prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			if p := Prune(e); !isZero(p) {
				out[k] = p
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Prune(e)
		}
		return out
	}
	return v
}

func isZero(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case bool:
		return !t
	case float64:
		return t == 0
	case int64:
		return t == 0
	case int:
		return t == 0
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// maxNotes bounds the differences one comparison lists.
const maxNotes = 12

// Diff lists the paths where a and b (pruned) differ, at most maxNotes.
func Diff(prefix string, a, b any) []string {
	var out []string
	var walk func(p string, a, b any)
	walk = func(p string, a, b any) {
		if len(out) >= maxNotes || reflect.DeepEqual(a, b) {
			return
		}
		ma, okA := a.(map[string]any)
		mb, okB := b.(map[string]any)
		if okA && okB {
			for _, k := range unionKeys(ma, mb) {
				walk(p+"."+k, ma[k], mb[k])
			}
			return
		}
		la, okA := a.([]any)
		lb, okB := b.([]any)
		if okA && okB && len(la) == len(lb) {
			for i := range la {
				walk(fmt.Sprintf("%s[%d]", p, i), la[i], lb[i])
			}
			return
		}
		out = append(out, fmt.Sprintf("%s: ours %s, NTO %s", strings.TrimPrefix(p, "."), short(b), short(a)))
	}
	walk(prefix, a, b)
	return out
}

func unionKeys(a, b map[string]any) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func short(v any) string {
	if v == nil {
		return "absent"
	}
	s := fmt.Sprintf("%v", v)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// DecodeDataURL returns the bytes of an Ignition "data:" source.
func DecodeDataURL(src string) (string, error) {
	rest, ok := strings.CutPrefix(src, "data:")
	if !ok {
		return "", fmt.Errorf("%.40q: not a data URL", src)
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", fmt.Errorf("%.40q: no data", src)
	}
	if strings.HasSuffix(meta, ";base64") {
		b, err := base64.StdEncoding.DecodeString(data)
		return string(b), err
	}
	return url.PathUnescape(data)
}

// ruleCount lists, by rule, the files and units that rule found
// equivalent.
type ruleCount map[string][]string

func (c ruleCount) add(rule, what string) { c[rule] = append(c[rule], what) }

func (c ruleCount) notes() []string {
	var out []string
	for rule, what := range c {
		out = append(out, fmt.Sprintf("%s (%d): %s", rule, len(what), strings.Join(what, ", ")))
	}
	sort.Strings(out)
	return out
}

// machineConfigDiff compares two pruned MachineConfigs by the equivalence
// rules; it returns the differences and sets r.Notes to the rules used.
func machineConfigDiff(a, b any, r *Result) []string {
	ma, mb := a.(map[string]any), b.(map[string]any)
	var out []string
	out = append(out, Diff("metadata", ma["metadata"], mb["metadata"])...)
	sa, _ := ma["spec"].(map[string]any)
	sb, _ := mb["spec"].(map[string]any)
	ca, cb := sa["config"], sb["config"]
	out = append(out, Diff("spec", without(sa, "config"), without(sb, "config"))...)
	ia, _ := ca.(map[string]any)
	ib, _ := cb.(map[string]any)
	out = append(out, Diff("spec.config", without(ia, "storage", "systemd"), without(ib, "storage", "systemd"))...)

	rules := ruleCount{}
	fa, fb := files(ia), files(ib)
	for _, p := range unionKeys(fa, fb) {
		x, y := fa[p], fb[p]
		switch {
		case x == nil:
			out = append(out, "file "+p+": ours only")
			continue
		case y == nil:
			out = append(out, "file "+p+": NTO only")
			continue
		}
		xm, ym := x.(map[string]any), y.(map[string]any)
		out = append(out, Diff("file "+p, without(xm, "contents"), without(ym, "contents"))...)
		ta, errA := fileText(xm)
		tb, errB := fileText(ym)
		if errA != nil || errB != nil {
			out = append(out, fmt.Sprintf("file %s: contents: %v %v", p, errA, errB))
			continue
		}
		if ta == tb {
			rules.add("same bytes", p)
			continue
		}
		ok, rule, why := fileEquivalent(p, ta, tb)
		if !ok {
			out = append(out, fmt.Sprintf("file %s (%s): %s", p, rule, why))
			continue
		}
		rules.add(rule, p)
	}
	ua, ub := units(ia), units(ib)
	for _, n := range unionKeys(ua, ub) {
		x, y := ua[n], ub[n]
		switch {
		case x == nil:
			out = append(out, "unit "+n+": ours only")
			continue
		case y == nil:
			out = append(out, "unit "+n+": NTO only")
			continue
		}
		xm, ym := x.(map[string]any), y.(map[string]any)
		out = append(out, Diff("unit "+n, without(xm, "contents"), without(ym, "contents"))...)
		ta, _ := xm["contents"].(string)
		tb, _ := ym["contents"].(string)
		if ta == tb {
			rules.add("same unit text", n)
			continue
		}
		if ok, why := unitsEquivalent(ta, tb); !ok {
			out = append(out, fmt.Sprintf("unit %s: %s", n, why))
			continue
		}
		rules.add("systemd directives", n)
	}
	r.Notes = rules.notes()
	return out
}

// without returns m without keys (a shallow copy).
func without(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func files(ign map[string]any) map[string]any {
	storage, _ := ign["storage"].(map[string]any)
	list, _ := storage["files"].([]any)
	out := map[string]any{}
	for _, f := range list {
		if m, ok := f.(map[string]any); ok {
			p, _ := m["path"].(string)
			out[p] = m
		}
	}
	return out
}

func units(ign map[string]any) map[string]any {
	sd, _ := ign["systemd"].(map[string]any)
	list, _ := sd["units"].([]any)
	out := map[string]any{}
	for _, u := range list {
		if m, ok := u.(map[string]any); ok {
			n, _ := m["name"].(string)
			out[n] = m
		}
	}
	return out
}

func fileText(f map[string]any) (string, error) {
	c, _ := f["contents"].(map[string]any)
	src, _ := c["source"].(string)
	if src == "" {
		return "", nil
	}
	return DecodeDataURL(src)
}
