package ntoequiv

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// TunedProfiles parses the profiles of a Tuned object (pruned or not) by
// name.
func TunedProfiles(tuned map[string]any) (map[string]*Profile, error) {
	spec, _ := tuned["spec"].(map[string]any)
	list, _ := spec["profile"].([]any)
	out := map[string]*Profile{}
	for i, e := range list {
		m, _ := e.(map[string]any)
		n, _ := m["name"].(string)
		data, _ := m["data"].(string)
		p, err := ParseProfile(data)
		if err != nil {
			return nil, fmt.Errorf("spec.profile[%d] %s: %w", i, n, err)
		}
		out[n] = p
	}
	return out, nil
}

// RecommendedProfile returns the profile a Tuned recommends first.
func RecommendedProfile(tuned map[string]any) string {
	spec, _ := tuned["spec"].(map[string]any)
	list, _ := spec["recommend"].([]any)
	if len(list) == 0 {
		return ""
	}
	m, _ := list[0].(map[string]any)
	p, _ := m["profile"].(string)
	return p
}

// tunedDiff compares two pruned Tuned objects by their effective profiles
// on every host of Hosts.
func tunedDiff(a, b any, r *Result) []string {
	ma, mb := a.(map[string]any), b.(map[string]any)
	var out []string
	out = append(out, Diff("metadata", ma["metadata"], mb["metadata"])...)
	sa, _ := ma["spec"].(map[string]any)
	sb, _ := mb["spec"].(map[string]any)
	out = append(out, Diff("spec", without(sa, "profile"), without(sb, "profile"))...)
	pa, err := TunedProfiles(ma)
	if err != nil {
		return append(out, "NTO "+err.Error())
	}
	pb, err := TunedProfiles(mb)
	if err != nil {
		return append(out, "ours "+err.Error())
	}
	na, nb := sortedNames(pa), sortedNames(pb)
	if !slices.Equal(na, nb) {
		out = append(out, fmt.Sprintf("profiles %v, NTO %v", nb, na))
	}
	root := RecommendedProfile(ma)
	for _, h := range Hosts {
		ra, err := Resolve(pa, root, h)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: NTO: %v", h.Name, err))
			continue
		}
		rb, err := Resolve(pb, root, h)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: ours: %v", h.Name, err))
			continue
		}
		out = append(out, EffectiveDiff(h.Name, ra, rb)...)
		if len(out) >= maxNotes {
			break
		}
	}
	if len(out) == 0 {
		r.Notes = []string{fmt.Sprintf("effective TuneD profile on %d hosts", len(Hosts))}
	}
	return out
}

func sortedNames(m map[string]*Profile) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// EffectiveDiff lists the differences between two resolved profile sets:
// external includes, and every section's options as a set (see
// EffectiveOptions). Order does not matter: TuneD's bootloader plugin
// composes the command line from the cmdline options sorted by name.
func EffectiveDiff(host string, want, got *Resolved) []string {
	var out []string
	if !slices.Equal(want.External, got.External) {
		out = append(out, fmt.Sprintf("%s: includes %v, NTO %v", host, got.External, want.External))
	}
	names := map[string]bool{}
	for _, s := range append(append([]*Section{}, want.Merged.Sections...), got.Merged.Sections...) {
		names[s.Name] = true
	}
	var sections []string
	for n := range names {
		sections = append(sections, n)
	}
	sort.Strings(sections)
	for _, n := range sections {
		x, y := EffectiveOptions(want.Merged.Section(n)), EffectiveOptions(got.Merged.Section(n))
		sx, sy := slices.Clone(x), slices.Clone(y)
		slices.Sort(sx)
		slices.Sort(sy)
		if !slices.Equal(sx, sy) {
			out = append(out, fmt.Sprintf("%s: [%s]: ours %q, NTO %q", host, n, onlyIn(sy, sx), onlyIn(sx, sy)))
		}
	}
	return out
}

// EffectiveOptions returns a section's options as "key=value" lines the way
// the comparison sees them: summary dropped; kernel command line values as
// TuneD's bootloader plugin reads them (after a leading "+" or "-" the rest
// is trimmed; whitespace runs count as one space), and one that appends
// nothing ("+") dropped. Empty values stay: they clear what an included
// profile set.
func EffectiveOptions(s *Section) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, o := range s.Options {
		if s.Name == "main" && o.Key == "summary" {
			continue
		}
		v := o.Value
		if strings.HasPrefix(o.Key, "cmdline") {
			op := ""
			if strings.HasPrefix(v, "+") || strings.HasPrefix(v, "-") {
				op, v = v[:1], v[1:]
			}
			v = strings.Join(strings.Fields(v), " ")
			if op == "+" && v == "" {
				continue
			}
			v = op + v
		}
		out = append(out, o.Key+"="+v)
	}
	return out
}

// onlyIn returns the lines of a that b lacks.
func onlyIn(a, b []string) []string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, l)
		}
	}
	return out
}

// Cmdline composes the kernel command line of a resolved profile set as
// TuneD's bootloader plugin does: the [bootloader] options whose names
// start with "cmdline", sorted by name; a value starting with "+" appends
// the rest, one starting with "-" removes it from what came before, any
// other appends the whole value. Variables (${isolated_cores}) are left as
// written.
func Cmdline(r *Resolved) string {
	s := r.Merged.Section("bootloader")
	if s == nil {
		return ""
	}
	var keys []string
	values := map[string]string{}
	for _, o := range s.Options {
		if strings.HasPrefix(o.Key, "cmdline") {
			keys = append(keys, o.Key)
			values[o.Key] = o.Value
		}
	}
	sort.Strings(keys)
	var words []string
	for _, k := range keys {
		v := values[k]
		if v == "" {
			continue
		}
		switch v[0] {
		case '+':
			words = append(words, strings.Fields(v[1:])...)
		case '-':
			for _, w := range strings.Fields(v[1:]) {
				words = slices.DeleteFunc(words, func(x string) bool { return x == w })
			}
		default:
			words = append(words, strings.Fields(v)...)
		}
	}
	return strings.Join(words, " ")
}
