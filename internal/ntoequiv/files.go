package ntoequiv

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
)

// Directive is one "Key=Value" line of a systemd unit, in its section.
type Directive struct {
	Section, Key, Value string
}

// ParseUnit reads a systemd unit file or drop-in: "[Section]" headers and
// "Key=Value" directives, "#" and ";" comments, lines continued with a
// trailing backslash. Values are trimmed and their whitespace runs made one
// space.
func ParseUnit(text string) ([]Directive, error) {
	var out []Directive
	section := ""
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") || strings.HasPrefix(next, ";") {
				// systemd skips comment lines inside a continuation.
				next = ""
			}
			line = strings.TrimSuffix(line, `\`) + " " + next
		}
		switch {
		case line == "", strings.HasPrefix(line, "#"), strings.HasPrefix(line, ";"):
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			return nil, fmt.Errorf("line %d: %q is not a directive in a section", i+1, line)
		}
		out = append(out, Directive{section, strings.TrimSpace(key), strings.Join(strings.Fields(value), " ")})
	}
	return out, nil
}

// unitsEquivalent compares two units section by section, each section's
// directives in order (systemd merges repeated sections, so where a section
// is split does not matter): Description is ignored, and Exec command lines
// are equal when their first and last words are and they hold the same
// words (options may come in another order).
func unitsEquivalent(a, b string) (bool, string) {
	da, err := ParseUnit(a)
	if err != nil {
		return false, err.Error()
	}
	db, err := ParseUnit(b)
	if err != nil {
		return false, err.Error()
	}
	ga, gb := bySection(da), bySection(db)
	for _, sec := range unionKeys(anyMap(ga), anyMap(gb)) {
		x, y := ga[sec], gb[sec]
		if len(x) != len(y) {
			return false, fmt.Sprintf("[%s]: %v, want %v", sec, keys(y), keys(x))
		}
		for i := range x {
			if x[i].Key != y[i].Key {
				return false, fmt.Sprintf("[%s] directive %d is %s, want %s", sec, i, y[i].Key, x[i].Key)
			}
			if x[i].Value == y[i].Value || strings.HasPrefix(x[i].Key, "Exec") && sameCommand(x[i].Value, y[i].Value) {
				continue
			}
			return false, fmt.Sprintf("[%s] %s=%q, want %q", sec, y[i].Key, y[i].Value, x[i].Value)
		}
	}
	return true, ""
}

// bySection groups directives by section, in order, without Description.
func bySection(ds []Directive) map[string][]Directive {
	out := map[string][]Directive{}
	for _, d := range ds {
		if d.Key != "Description" {
			out[d.Section] = append(out[d.Section], d)
		}
	}
	return out
}

func anyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func keys(ds []Directive) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Key
	}
	return out
}

// sameCommand reports whether two command lines run the same command with
// the same words, options in any order; quoted words compare without their
// leading and trailing blanks (as a "bash -c" script reads them).
func sameCommand(a, b string) bool {
	wa, wb := shellWords(a), shellWords(b)
	for _, w := range [][]string{wa, wb} {
		for i := range w {
			w[i] = strings.TrimSpace(w[i])
		}
	}
	if len(wa) != len(wb) || len(wa) == 0 || wa[0] != wb[0] || wa[len(wa)-1] != wb[len(wb)-1] {
		return false
	}
	slices.Sort(wa)
	slices.Sort(wb)
	return slices.Equal(wa, wb)
}

// shellWords splits a command line into words, honouring single and double
// quotes.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// keyValues reads "key = value" lines (TOML tables, sysctl files) into
// "table.key" -> value, comments and blank lines ignored, whitespace runs
// in values made one space.
func keyValues(text string) map[string]string {
	out := map[string]string{}
	table := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "", strings.HasPrefix(line, "#"), strings.HasPrefix(line, ";"):
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			table = line[1:len(line)-1] + "."
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		out[table+strings.TrimSpace(k)] = strings.Join(strings.Fields(v), " ")
	}
	return out
}

// ruleLines returns the lines of a udev rules file without comments, with
// whitespace runs made one space.
func ruleLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// fileEquivalent compares two contents of the file at p by its format. It
// returns whether they are equivalent, the rule that decided and, when not,
// why.
func fileEquivalent(p, a, b string) (ok bool, rule, why string) {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(p, ".sh"):
		if strings.HasPrefix(a, "#!") && strings.HasPrefix(b, "#!") && strings.Contains(firstLine(b), "bash") {
			return true, "script", ""
		}
		return false, "script", "not both bash scripts"
	case strings.HasPrefix(p, "/etc/systemd/"):
		ok, why := unitsEquivalent(a, b)
		return ok, "systemd directives", why
	case strings.HasSuffix(p, ".rules"):
		if slices.Equal(ruleLines(a), ruleLines(b)) {
			return true, "udev rules", ""
		}
		return false, "udev rules", fmt.Sprintf("rules %q, want %q", ruleLines(b), ruleLines(a))
	case strings.HasSuffix(p, ".conf") || strings.HasPrefix(p, "/etc/sysconfig/"):
		ka, kb := keyValues(a), keyValues(b)
		if reflect.DeepEqual(ka, kb) {
			return true, "keys and values", ""
		}
		return false, "keys and values", fmt.Sprintf("%v, want %v", kb, ka)
	case base == "enable_dynamic_cpu_affinity":
		if strings.TrimSpace(a) != "" && strings.TrimSpace(b) != "" {
			return true, "non-empty marker", ""
		}
		return false, "non-empty marker", "empty"
	}
	var ja, jb any
	if json.Unmarshal([]byte(a), &ja) == nil && json.Unmarshal([]byte(b), &jb) == nil {
		if reflect.DeepEqual(ja, jb) {
			return true, "JSON values", ""
		}
		return false, "JSON values", fmt.Sprintf("%v, want %v", jb, ja)
	}
	return false, "bytes", "contents differ"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
