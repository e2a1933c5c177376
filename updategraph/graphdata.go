package updategraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
	"go.yaml.in/yaml/v3"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

// GraphData is a graph-data directory in the layout of
// openshift/cincinnati-graph-data: which releases each channel holds, and
// which updates are blocked or conditional.
type GraphData struct {
	// Channels are the channels/*.yaml files, by name.
	Channels []Channel
	// Blocks are the blocked-edges/*.yaml files, in file order.
	Blocks []Block
}

// Channel is a channels/NAME.yaml file.
type Channel struct {
	// Name is the channel's name (the file's "name").
	Name string
	// Versions are the releases in it; one with build metadata (+ARCH)
	// names that architecture's release only.
	Versions []semver.Version
	// File is the file, for messages.
	File string
}

// Block is a blocked-edges/*.yaml file: the updates into To from the
// versions From matches ("VERSION+ARCH") are removed from the graph; with
// a Risk, they stay as conditional updates carrying it.
type Block struct {
	// To is the release; with build metadata (+ARCH), only that
	// architecture's.
	To semver.Version
	// From matches the versions updating into To, with their architecture
	// suffix ("4.21.3+amd64"); unanchored, as graph-data's regexes are.
	From *regexp.Regexp
	// Risk is the risk of a conditional update; nil blocks the updates.
	Risk *configv1.ConditionalUpdateRisk
	// File is the file, for messages.
	File string
}

// Limits of a graph-data directory.
const (
	// MaxGraphDataFiles bounds the files read of each directory.
	MaxGraphDataFiles = 100_000
	// MaxGraphDataFileSize bounds one file.
	MaxGraphDataFileSize = 1 << 20
	// SchemaMajor and SchemaMinor are the newest layout (the "version"
	// file) this reader understands.
	SchemaMajor, SchemaMinor = 1, 1
)

// ReadGraphData reads the graph-data directory fsys: the "version" file
// when present (a schema this reader understands: 1.0 or 1.1),
// channels/*.yaml and blocked-edges/*.yaml (.yml too; other files, and
// other directories such as raw/, are not read). Every file in error is
// reported, each error naming the file and the field.
func ReadGraphData(fsys fs.FS) (*GraphData, error) {
	if err := checkSchema(fsys); err != nil {
		return nil, err
	}
	d := &GraphData{}
	var errs []error
	byName := map[string]string{}
	err := eachYAML(fsys, "channels", func(file string, data []byte) {
		c, err := parseChannel(file, data)
		if err != nil {
			errs = append(errs, err)
			return
		}
		if other, ok := byName[c.Name]; ok {
			errs = append(errs, fmt.Errorf("%s: channel %q: also defined in %s", file, c.Name, other))
			return
		}
		byName[c.Name] = file
		d.Channels = append(d.Channels, *c)
	})
	if err != nil {
		return nil, err
	}
	err = eachYAML(fsys, "blocked-edges", func(file string, data []byte) {
		b, err := parseBlock(file, data)
		if err != nil {
			errs = append(errs, err)
			return
		}
		d.Blocks = append(d.Blocks, *b)
	})
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(d.Channels, func(i, j int) bool { return d.Channels[i].Name < d.Channels[j].Name })
	return d, nil
}

// checkSchema reads the "version" file, when there is one.
func checkSchema(fsys fs.FS) error {
	data, err := fs.ReadFile(fsys, "version")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	v, err := semver.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		return fmt.Errorf("version: %q is not a semantic version: %v", strings.TrimSpace(string(data)), err)
	}
	if v.Major != SchemaMajor || v.Minor > SchemaMinor {
		return fmt.Errorf("version: graph-data schema %s: this reader understands %d.0 to %d.%d", v, SchemaMajor, SchemaMajor, SchemaMinor)
	}
	return nil
}

// eachYAML calls each with every .yaml and .yml file of dir (missing: none),
// in name order, within the limits.
func eachYAML(fsys fs.FS, dir string, each func(file string, data []byte)) error {
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > MaxGraphDataFiles {
		return fmt.Errorf("%s: %d files, more than %d", dir, len(entries), MaxGraphDataFiles)
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if info.Size() > MaxGraphDataFileSize {
			return fmt.Errorf("%s: %d bytes, more than %d", name, info.Size(), MaxGraphDataFileSize)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		each(name, data)
	}
	return nil
}

// fields decodes a YAML mapping into raw JSON values by key. Every
// scalar but null becomes a JSON string, its text as written: YAML would
// read "to: 4.10" as the number 4.1.
func fields(file string, data []byte) (map[string]json.RawMessage, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping", file)
	}
	top := doc.Content[0]
	m := make(map[string]json.RawMessage, len(top.Content)/2)
	for i := 0; i+1 < len(top.Content); i += 2 {
		if _, twice := m[top.Content[i].Value]; twice {
			return nil, fmt.Errorf("%s: %s: given twice", file, top.Content[i].Value)
		}
		raw, err := json.Marshal(plain(top.Content[i+1]))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, top.Content[i].Value, err)
		}
		m[top.Content[i].Value] = raw
	}
	return m, nil
}

// plain converts a YAML node to maps, lists and strings (nil for null).
func plain(n *yaml.Node) any {
	switch n.Kind {
	case yaml.AliasNode:
		return plain(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = plain(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			l[i] = plain(c)
		}
		return l
	}
	if n.Tag == "!!null" {
		return nil
	}
	return n.Value
}

// field decodes key of m into v; required says a missing key is an error.
func field(file string, m map[string]json.RawMessage, key string, v any, required bool) error {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		if required {
			return fmt.Errorf("%s: %s: required", file, key)
		}
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %s: %v", file, key, err)
	}
	return nil
}

func parseChannel(file string, data []byte) (*Channel, error) {
	m, err := fields(file, data)
	if err != nil {
		return nil, err
	}
	c := &Channel{File: file}
	var versions []string
	if err := errors.Join(field(file, m, "name", &c.Name, true), field(file, m, "versions", &versions, false)); err != nil {
		return nil, err
	}
	if !cincinnati.ChannelPattern.MatchString(c.Name) {
		return nil, fmt.Errorf("%s: name %q: want lower-case letters, digits, '-' and '.' (the service's channel names)", file, c.Name)
	}
	for i, s := range versions {
		v, err := semver.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s: versions[%d] %q: not a semantic version: %v", file, i, s, err)
		}
		c.Versions = append(c.Versions, v)
	}
	return c, nil
}

// The keys of a conditional blocked edge (graph-data 1.1); a file with any
// of them must have them all.
var riskKeys = []string{"url", "name", "message", "matchingRules"}

func parseBlock(file string, data []byte) (*Block, error) {
	m, err := fields(file, data)
	if err != nil {
		return nil, err
	}
	b := &Block{File: file}
	var to, from string
	if err := errors.Join(field(file, m, "to", &to, true), field(file, m, "from", &from, true)); err != nil {
		return nil, err
	}
	if b.To, err = semver.Parse(to); err != nil {
		return nil, fmt.Errorf("%s: to %q: not a semantic version: %v", file, to, err)
	}
	if b.From, err = regexp.Compile(from); err != nil {
		return nil, fmt.Errorf("%s: from %q: not a regular expression: %v", file, from, err)
	}
	conditional := false
	for _, k := range riskKeys {
		_, ok := m[k]
		conditional = conditional || ok
	}
	if !conditional {
		for k := range m {
			if k != "to" && k != "from" {
				return nil, fmt.Errorf("%s: %s: unknown field (a blocked edge has to and from; a conditional one also %s)", file, k, strings.Join(riskKeys, ", "))
			}
		}
		return b, nil
	}
	r := &configv1.ConditionalUpdateRisk{}
	errs := []error{field(file, m, "url", &r.URL, true), field(file, m, "name", &r.Name, true),
		field(file, m, "message", &r.Message, true), field(file, m, "matchingRules", &r.MatchingRules, true)}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if r.URL == "" || r.Name == "" || r.Message == "" {
		return nil, fmt.Errorf("%s: url, name and message must not be empty", file)
	}
	// Rules of types this reader does not know pass (clusters skip
	// them); known types must be complete, and one rule at least usable.
	for i, rule := range r.MatchingRules {
		if valid, why := cincinnati.ValidRules([]configv1.ClusterCondition{rule}); len(valid) == 0 && (rule.Type == cincinnati.RuleAlways || rule.Type == cincinnati.RulePromQL) {
			return nil, fmt.Errorf("%s: matchingRules[%d]: %s", file, i, strings.TrimPrefix(why, "rule 0: "))
		}
	}
	if valid, _ := cincinnati.ValidRules(r.MatchingRules); len(valid) == 0 {
		return nil, fmt.Errorf("%s: matchingRules: no rule of a type clusters evaluate (%s or %s)", file, cincinnati.RuleAlways, cincinnati.RulePromQL)
	}
	b.Risk = r
	return b, nil
}
