package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/profiles"
)

func renderCommand() *command {
	return &command{
		name:  "render",
		short: "Print or write the objects a cluster profile installs, in apply order",
		usage: "[-o DIR | --list | --explain] [selection flags]",
		long: `Loads the payload, selects what the profile, feature set, feature gates and
capabilities include, applies the kustomize overlays of the profile and its
ancestors (root first), and prints the objects as YAML in apply order (each
headed by "# Source: FILE#DOC"), or writes them under DIR with one file per
source file. An object an overlay changes keeps its source file and run
level; an object an overlay adds is filed as overlays/<overlay>/<its file>.
The ConfigMap openshift-config/cluster-profile (data.profile: the profile in
effect) is added as generated/0000_<NN>_<component>_99_cluster-profile.yaml,
right after the object that creates the openshift-config namespace, so the
cluster remembers its profile.

The profile is --profile, else ` + profiles.Default + `; --profiles-dir and
--overlays-dir add user-defined profiles and overlays (see 'payload-apply
profiles').

--list prints one line per object in apply order:
  RUNLEVEL<TAB>COMPONENT<TAB>FILE<TAB>APIVERSION<TAB>KIND<TAB>NAMESPACE<TAB>NAME
(NAMESPACE empty for cluster-scoped objects; RUNLEVEL and COMPONENT "-" for
files whose names do not follow 0000_<NN>_<component>_<name>).

--explain prints every manifest of the payload in load order with the
decision: "included" and the annotation that matched (for a derived profile,
the nearest profile of the chain the manifest is annotated for) and the
overlays that changed it, "excluded" and why, or "deleted" by an overlay;
then the objects overlays "added" and the "generated" ones.

Exit codes: 0 rendered, 1 the payload or options are wrong (each problem on
its own line, naming FILE#DOC), 2 usage error.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &renderOptions{}
			o.selection.addFlags(fs)
			fs.StringVarP(&o.outDir, "output-dir", "o", "", "write one file per source file under this directory instead of printing")
			fs.BoolVar(&o.list, "list", false, "print one line per object instead of YAML")
			fs.BoolVar(&o.explain, "explain", false, "print the inclusion decision for every manifest")
			return o
		},
	}
}

type renderOptions struct {
	selection selectionFlags
	outDir    string
	list      bool
	explain   bool

	opts plan.Options
}

func (o *renderOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	// One selection: load only what it includes whole.
	o.opts.Lean = true
	return err
}

func (o *renderOptions) Validate() error {
	n := 0
	for _, b := range []bool{o.outDir != "", o.list, o.explain} {
		if b {
			n++
		}
	}
	if n > 1 {
		return usageErrorf("--output-dir, --list and --explain exclude each other")
	}
	return nil
}

func (o *renderOptions) Run(ctx context.Context, s IOStreams) error {
	p, err := plan.Build(ctx, o.opts)
	if err != nil {
		return err
	}
	logPlan(ctx, p)
	printFindings(s, p.Findings)
	switch {
	case o.list:
		return p.WriteList(s.Out)
	case o.explain:
		return p.WriteExplain(s.Out)
	case o.outDir != "":
		files, err := p.WriteDir(o.outDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.ErrOut, "wrote %d objects in %d files under %s\n", len(p.Rendered()), len(files), o.outDir)
		return nil
	}
	return p.WriteYAML(s.Out)
}

// logPlan logs the resolved configuration at V(1) and exclusions at V(4).
func logPlan(ctx context.Context, p *plan.Plan) {
	logger := klog.FromContext(ctx)
	version := ""
	if p.Payload.Release != nil {
		version = p.Payload.Release.Version
	}
	logger.V(1).Info("Plan", "version", version, "profile", p.Profile, "profileChain", p.ProfileChain,
		"featureSet", plan.FeatureSetLabel(p.FeatureSet), "featureGates", p.FeatureGates.Len(),
		"included", len(p.Selection.Included), "manifests", len(p.Selection.Entries), "nodes", len(p.Graph.Nodes))
	if logger.V(4).Enabled() {
		for _, e := range p.Selection.Entries {
			if !e.Included {
				logger.V(4).Info("Excluded", "file", e.Manifest.Position(), "object", e.Manifest.ID().String(), "reason", e.Reason)
			}
		}
	}
}

// printFindings prints warnings met while planning on stderr.
func printFindings(s IOStreams, fs []manifest.Finding) {
	for _, f := range fs {
		fmt.Fprintf(s.ErrOut, "%s\n", f)
	}
}
