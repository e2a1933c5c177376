package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/profiles"
)

func profilesCommand() *command {
	return &command{
		name:  "profiles",
		short: "List the cluster profiles, or show one merged with its parents",
		usage: "[show NAME] [-o text|name|json|yaml] [--profiles-dir DIR] [--overlays-dir DIR]",
		long: `Without arguments, lists the known profiles (built in, and those of
--profiles-dir) as NAME, PARENT ("-" for none) and FILE, sorted by name.
` + profiles.Default + ` is the default profile.

"show NAME" prints the profile merged with its ancestors as one
ClusterProfile definition, defaults filled in, followed by YAML comments that
say which file set each field ("default" when none did) and where each of its
overlays is found, in the order they apply (the root profile's first).

-o name prints the names only; -o json and -o yaml print the definitions
(with "show", the merged definition alone).

A profile file is apiVersion payload-apply/v1alpha1, kind ClusterProfile;
spec.parent names its parent. Children inherit everything: maps and the
overlays list merge by key (the parent's entries first, the child's new
ones appended), the child's other values win, and featureGateProfile,
hypershift and the inherited overlays are protected: a child may restate but
not change them.

Exit codes: 0 printed, 1 a profile or overlay is wrong (each problem on its
own line, naming the file), 2 usage error (unknown profile, bad arguments).`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &profilesOptions{}
			o.output = addOutputFlag(fs, formatText, formatName, formatJSON, formatYAML)
			addProfileDirFlags(fs, &o.profilesDir, &o.overlaysDir)
			return o
		},
		args: func(args []string) []string {
			switch len(args) {
			case 0:
				return []string{"show"}
			case 1:
				return flagValues("profile")
			}
			return nil
		},
	}
}

type profilesOptions struct {
	profilesDir string
	overlaysDir string
	show        string
	output      *outputFlag

	set     *profiles.Set
	sources []overlay.Source
}

func (o *profilesOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	switch {
	case len(args) == 0:
	case args[0] == "show" && len(args) == 2:
		o.show = args[1]
	case args[0] == "show":
		return usageErrorf("show takes one profile name")
	default:
		return usageErrorf("unexpected arguments: %v", args)
	}
	var err error
	if o.set, err = profileSet(o.profilesDir); err != nil {
		return err
	}
	extra, err := overlaySources(o.overlaysDir)
	if err != nil {
		return err
	}
	o.sources = append([]overlay.Source{plan.EmbeddedOverlays()}, extra...)
	return nil
}

func (o *profilesOptions) Validate() error {
	if o.show == "" {
		return nil
	}
	if _, err := o.set.Definition(o.show); err != nil {
		return usageError{err}
	}
	return nil
}

func (o *profilesOptions) Run(ctx context.Context, s IOStreams) error {
	if o.show != "" {
		return o.runShow(s)
	}
	switch o.output.value {
	case formatName:
		_, err := fmt.Fprintln(s.Out, strings.Join(o.set.Names(), "\n"))
		return err
	case formatJSON, formatYAML:
		defs := []any{}
		for _, name := range o.set.Names() {
			d, err := o.set.Definition(name)
			if err != nil {
				return err
			}
			defs = append(defs, d)
		}
		return printData(s.Out, o.output.value, map[string]any{"apiVersion": "v1", "kind": "List", "items": defs})
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPARENT\tFILE")
	for _, name := range o.set.Names() {
		d, err := o.set.Definition(name)
		if err != nil {
			return err
		}
		parent := d.Spec.Parent
		if parent == "" {
			parent = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, parent, d.File)
	}
	return tw.Flush()
}

func (o *profilesOptions) runShow(s IOStreams) error {
	p, err := o.set.Profile(o.show)
	if err != nil {
		return err
	}
	switch o.output.value {
	case formatName:
		_, err := fmt.Fprintln(s.Out, p.Name)
		return err
	case formatJSON, formatYAML:
		return printData(s.Out, o.output.value, p.Merged())
	}
	data, err := yaml.Marshal(p.Merged())
	if err != nil {
		return fmt.Errorf("profile %s: encode: %w", p.Name, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Profile %s: %s\n", p.Name, strings.Join(p.Chain, " -> "))
	b.Write(data)
	b.WriteString("# Where each field comes from:\n")
	paths := make([]string, 0, len(p.Origins))
	for path := range p.Origins {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		fmt.Fprintf(&b, "#   %s: %s\n", path, p.Origins[path])
	}
	if len(p.Overlays) > 0 {
		b.WriteString("# Overlays, in the order they apply:\n")
	}
	var errs []error
	for _, ref := range p.Overlays {
		ov, err := overlay.Find(o.sources, ref.Name, ref.Path)
		if err != nil {
			errs = append(errs, &overlay.Error{File: ref.File, Err: err})
			fmt.Fprintf(&b, "#   %s: not found\n", ref.Name)
			continue
		}
		fmt.Fprintf(&b, "#   %s: %s (listed in %s)\n", ref.Name, ov.File, ref.File)
	}
	if _, err := s.Out.Write(b.Bytes()); err != nil {
		return err
	}
	return errors.Join(errs...)
}
