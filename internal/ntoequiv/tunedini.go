package ntoequiv

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Option is one key and value of a TuneD profile section.
type Option struct {
	Key, Value string
}

// Section is a named section of a TuneD profile with its options in the
// order they were first set.
type Section struct {
	Name    string
	Options []Option
}

// Get returns the value of key and whether it is set.
func (s *Section) Get(key string) (string, bool) {
	for _, o := range s.Options {
		if o.Key == key {
			return o.Value, true
		}
	}
	return "", false
}

// set sets key, keeping its position when it is already there.
func (s *Section) set(key, value string) {
	for i, o := range s.Options {
		if o.Key == key {
			s.Options[i].Value = value
			return
		}
	}
	s.Options = append(s.Options, Option{key, value})
}

// Profile is a parsed TuneD profile: its sections in file order.
type Profile struct {
	Sections []*Section
}

// Section returns the named section, or nil.
func (p *Profile) Section(name string) *Section {
	for _, s := range p.Sections {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Get returns section.key, or "" and false.
func (p *Profile) Get(section, key string) (string, bool) {
	if s := p.Section(section); s != nil {
		return s.Get(key)
	}
	return "", false
}

func (p *Profile) section(name string) *Section {
	if s := p.Section(name); s != nil {
		return s
	}
	s := &Section{Name: name}
	p.Sections = append(p.Sections, s)
	return s
}

// maxProfileBytes bounds the profile text ParseProfile reads.
const maxProfileBytes = 1 << 20

// ParseProfile parses TuneD profile text the way TuneD's configuration
// parser reads it: "[section]" headers, "key=value" options (the first "="
// splits; key and value trimmed), whole-line comments starting with "#" or
// ";", inline comments starting with whitespace and "#", and continuation
// lines (indented, after an option) appended to the value with a newline.
// A later option of the same key in a section replaces the earlier value.
func ParseProfile(text string) (*Profile, error) {
	if len(text) > maxProfileBytes {
		return nil, fmt.Errorf("profile: %d bytes, more than %d", len(text), maxProfileBytes)
	}
	p := &Profile{}
	var cur *Section
	var last *Option
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ";"):
			continue
		}
		if cut := inlineComment(line); cut >= 0 {
			line = strings.TrimRight(line[:cut], " \t")
			trimmed = strings.TrimSpace(line)
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last == nil {
				return nil, fmt.Errorf("line %d: continuation without an option", i+1)
			}
			last.Value += "\n" + trimmed
			cur.set(last.Key, last.Value)
			continue
		}
		if strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]") {
			cur = p.section(trimmed[1 : len(trimmed)-1])
			last = nil
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("line %d: option before any section", i+1)
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not key=value", i+1, trimmed)
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		cur.set(key, value)
		last = &Option{key, value}
	}
	return p, nil
}

// inlineComment returns where an inline comment ("#" after whitespace)
// starts, or -1.
func inlineComment(line string) int {
	for i := 1; i < len(line); i++ {
		if line[i] == '#' && (line[i-1] == ' ' || line[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// Host is what TuneD functions see of a node: the kernel release (uname -r)
// and the output of lscpu.
type Host struct {
	Name          string
	KernelRelease string
	Lscpu         string
}

// Hosts are the nodes the comparison evaluates profiles on: Intel, AMD and
// ARM, each with the default and the realtime kernel.
var Hosts = []Host{
	{"intel", "5.14.0-570.el9_6.x86_64", "Architecture: x86_64\nVendor ID: GenuineIntel\n"},
	{"intel-rt", "5.14.0-570.rt14.el9_6.x86_64", "Architecture: x86_64\nVendor ID: GenuineIntel\n"},
	{"amd", "5.14.0-570.el9_6.x86_64", "Architecture: x86_64\nVendor ID: AuthenticAMD\n"},
	{"amd-rt", "5.14.0-570.rt14.el9_6.x86_64", "Architecture: x86_64\nVendor ID: AuthenticAMD\n"},
	{"arm", "5.14.0-570.el9_6.aarch64", "Architecture: aarch64\nVendor ID: ARM\n"},
	{"arm-rt", "5.14.0-570.rt14.el9_6.aarch64", "Architecture: aarch64\nVendor ID: ARM\n"},
}

// maxExpandDepth bounds the nesting of ${f:...} calls.
const maxExpandDepth = 16

// Expand evaluates the TuneD functions of value on host: exec (only
// "uname -r"), regex_search_ternary and lscpu_check. Other functions and
// ${variables} are left as written.
func Expand(value string, host Host) (string, error) {
	return expand(value, host, 0)
}

func expand(value string, host Host, depth int) (string, error) {
	if depth > maxExpandDepth {
		return "", fmt.Errorf("functions nested deeper than %d", maxExpandDepth)
	}
	var b strings.Builder
	for i := 0; i < len(value); {
		start := strings.Index(value[i:], "${f:")
		if start < 0 {
			b.WriteString(value[i:])
			break
		}
		start += i
		b.WriteString(value[i:start])
		end, err := closing(value, start+1)
		if err != nil {
			return "", err
		}
		inner, err := expand(value[start+4:end], host, depth+1)
		if err != nil {
			return "", err
		}
		out, known, err := call(inner, host)
		if err != nil {
			return "", err
		}
		if !known {
			out = "${f:" + inner + "}"
		}
		b.WriteString(out)
		i = end + 1
	}
	return b.String(), nil
}

// closing returns the index of the "}" that closes the "{" at open.
func closing(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%q: unclosed ${", s[open-1:])
}

// splitArgs splits function arguments at ":" not escaped by "\", and
// unescapes "\:".
func splitArgs(s string) []string {
	var args []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == ':' {
			cur.WriteByte(':')
			i++
			continue
		}
		if s[i] == ':' {
			args = append(args, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(s[i])
	}
	return append(args, cur.String())
}

func call(inner string, host Host) (string, bool, error) {
	args := splitArgs(inner)
	switch args[0] {
	case "exec":
		if slices.Equal(args[1:], []string{"uname", "-r"}) {
			return host.KernelRelease, true, nil
		}
		return "", false, nil
	case "regex_search_ternary":
		if len(args) != 5 {
			return "", false, fmt.Errorf("regex_search_ternary: %d arguments, want 4", len(args)-1)
		}
		re, err := regexp.Compile(args[2])
		if err != nil {
			return "", false, fmt.Errorf("regex_search_ternary: %w", err)
		}
		if re.MatchString(args[1]) {
			return args[3], true, nil
		}
		return args[4], true, nil
	case "lscpu_check":
		if len(args)%2 != 1 {
			return "", false, fmt.Errorf("lscpu_check: odd number of arguments")
		}
		for i := 1; i+1 < len(args); i += 2 {
			re, err := regexp.Compile(args[i])
			if err != nil {
				return "", false, fmt.Errorf("lscpu_check: %w", err)
			}
			if re.MatchString(host.Lscpu) {
				return args[i+1], true, nil
			}
		}
		return "", true, nil
	}
	return "", false, nil
}

// includeSplit splits an include value as TuneD does.
var includeSplit = regexp.MustCompile(`\s*[,;]\s*`)

// Resolved is a profile set merged for one host.
type Resolved struct {
	// External are the included profiles that are not part of the set
	// (TuneD's own, such as cpu-partitioning), in include order.
	External []string
	// Merged is the result: every section's options after inheritance.
	Merged *Profile
}

// maxIncludes bounds the profiles one resolution loads.
const maxIncludes = 64

// Resolve loads the profile named root from profiles on host and merges it
// with what it includes, as TuneD's loader does: each profile's includes
// (expanded, split at "," and ";") load before it, recursively, and later
// profiles' options replace earlier ones. Profiles missing from the set are
// reported in External and contribute nothing.
func Resolve(profiles map[string]*Profile, root string, host Host) (*Resolved, error) {
	r := &Resolved{Merged: &Profile{}}
	var order []*Profile
	seen := map[string]bool{}
	var load func(name string, depth int) error
	load = func(name string, depth int) error {
		if depth > maxIncludes || len(order) > maxIncludes {
			return fmt.Errorf("%s: more than %d includes", root, maxIncludes)
		}
		p, ok := profiles[name]
		if !ok {
			r.External = append(r.External, name)
			return nil
		}
		if seen[name] {
			return nil
		}
		seen[name] = true
		if inc, ok := p.Get("main", "include"); ok {
			expanded, err := Expand(inc, host)
			if err != nil {
				return fmt.Errorf("%s: include: %w", name, err)
			}
			for _, n := range includeSplit.Split(strings.TrimSpace(expanded), -1) {
				if n = strings.TrimSpace(n); n != "" {
					if err := load(n, depth+1); err != nil {
						return err
					}
				}
			}
		}
		order = append(order, p)
		return nil
	}
	if err := load(root, 0); err != nil {
		return nil, err
	}
	for _, p := range order {
		for _, s := range p.Sections {
			dst := r.Merged.section(s.Name)
			for _, o := range s.Options {
				if s.Name == "main" && o.Key == "include" {
					continue
				}
				dst.set(o.Key, o.Value)
			}
		}
	}
	return r, nil
}
