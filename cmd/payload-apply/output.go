package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// The output formats (-o/--output), named as kubectl names them where it
// has them. A command takes the ones meaningful for it.
const (
	formatText = "text" // for people: tables, lines, diffs
	formatWide = "wide" // a table with more columns
	formatYAML = "yaml"
	formatJSON = "json"
	formatName = "name" // one "kind.group/name" per object, as kubectl -o name
	formatDOT  = "dot"  // graph: Graphviz
	// formatConfigMap: sign's atomic signature as the CVO's signature
	// ConfigMap (YAML).
	formatConfigMap = "configmap"
)

// outputFlag is -o/--output: the format of what a command prints on
// stdout, one of its formats; a value that is not one of them is a usage
// error listing them. It is never a path: directories are --output-dir.
type outputFlag struct {
	value   string
	formats []string
	// pathHint is what to say when the value looks like a path (the
	// command used to take one): the flag that takes it now.
	pathHint string
}

var _ pflag.Value = (*outputFlag)(nil)

// addOutputFlag adds -o/--output with formats, the first the default.
func addOutputFlag(fs *pflag.FlagSet, formats ...string) *outputFlag {
	o := &outputFlag{value: formats[0], formats: formats}
	fs.VarP(o, "output", "o", "output format: "+strings.Join(formats, ", "))
	return o
}

// String returns the format.
func (o *outputFlag) String() string { return o.value }

// Type names the value in the help.
func (o *outputFlag) Type() string { return "format" }

// Set checks and sets the format.
func (o *outputFlag) Set(v string) error {
	if slices.Contains(o.formats, v) {
		o.value = v
		return nil
	}
	msg := "want " + strings.Join(o.formats, ", ")
	if o.pathHint != "" {
		msg += "; -o is a format: " + o.pathHint
	}
	return errors.New(msg)
}

// completions are the formats, for shell completion.
func (o *outputFlag) completions() []string { return o.formats }

// printJSON writes v as indented JSON and a newline.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printYAML writes v as YAML (through its JSON form, so the field names
// are the JSON ones).
func printYAML(w io.Writer, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// printData writes v as format (json or yaml).
func printData(w io.Writer, format string, v any) error {
	if format == formatYAML {
		return printYAML(w, v)
	}
	return printJSON(w, v)
}

// jsonToYAML converts what write writes as JSON to YAML on w.
func jsonToYAML(w io.Writer, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	data, err := yaml.JSONToYAML(b.Bytes())
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// objectName is an object as kubectl -o name prints it:
// "kind.group/name" (lowercase kind, no group for the core group).
func objectName(m *manifest.Manifest) string {
	kind := strings.ToLower(m.GVK.Kind)
	if m.GVK.Group != "" {
		kind += "." + m.GVK.Group
	}
	return kind + "/" + m.Obj.GetName()
}

// objectList is objects as one kubectl-style v1 List.
func objectList(ms []*manifest.Manifest) map[string]any {
	items := make([]any, len(ms))
	for i, m := range ms {
		items[i] = m.Obj.Object
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
}

// flagValues are the values shell completion offers for flags that take
// one of a few words, by flag name.
func flagValues(name string) []string {
	switch name {
	case "profile", "against-profile":
		if set, err := profiles.Embedded(); err == nil {
			return set.Names()
		}
	case "feature-set", "against-feature-set":
		return append([]string{"Default"}, manifest.KnownFeatureSets()...)
	case "order":
		return []string{string(payload.OrderUpdate), string(payload.OrderInstall), string(payload.OrderReconcile)}
	case "dry-run":
		return []string{"server", "none"}
	}
	return nil
}

// registerCompletions makes the shell complete the values of c's flags:
// formats for -o, the known words of flagValues; other flags complete file
// names (cobra's default).
func registerCompletions(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		words := flagValues(f.Name)
		if of, ok := f.Value.(interface{ completions() []string }); ok {
			words = of.completions()
		}
		if len(words) == 0 {
			return
		}
		_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return words, cobra.ShellCompDirectiveNoFileComp
		})
	})
}
