package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/profiles"
)

func renderCommand() *command {
	return &command{
		name:  "render",
		short: "Print or write the objects a cluster profile installs, in apply order",
		usage: "[-o yaml|json|name | --output-dir DIR [--clean] | --list | --explain] [selection flags]",
		long: `Loads the payload, selects what the profile, feature set, feature gates and
capabilities include, applies the kustomize overlays of the profile and its
ancestors (root first), and prints the objects in apply order: as YAML
(-o yaml, the default; each headed by "# Source: FILE#DOC"), as one JSON v1
List (-o json, as kubectl get -o json), or one "kind.group/name" per line
(-o name, as kubectl -o name). --output-dir DIR writes them under DIR
instead, one file per source file (manifests/, release-manifests/,
generated/, extra/ for --extra-manifests, overlays/). DIR must be new or
empty: a render into a directory with files would leave an earlier
render's files beside this one's. --clean removes them first, and only
when everything in DIR is what a render writes (those directories holding
.yaml, .yml and .json files); anything else is never deleted: the error
names it. An object an overlay changes keeps its source file and run
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
overlays that changed it, "excluded" and why, "unmanaged" (an unmanaged
override in spec.overrides of the ClusterVersion in --cluster-config), or
"deleted" by an overlay; then the objects overlays "added" and the
"generated" ones.

Exit codes: 0 rendered, 1 the payload is wrong (each problem on its own
line, naming FILE#DOC), 2 usage error (a flag naming a profile, feature
set or file that does not exist; --output-dir not empty).`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &renderOptions{}
			o.selection.addFlags(fs)
			o.output = addOutputFlag(fs, formatYAML, formatJSON, formatName)
			o.output.pathHint = "to write files under a directory, use --output-dir DIR"
			fs.StringVar(&o.outDir, "output-dir", "", "write one file per source file under this new or empty directory instead of printing")
			fs.BoolVar(&o.clean, "clean", false, "with --output-dir: remove an earlier render's files from the directory first")
			fs.BoolVar(&o.list, "list", false, "print one line per object instead of YAML")
			fs.BoolVar(&o.explain, "explain", false, "print the inclusion decision for every manifest")
			return o
		},
	}
}

type renderOptions struct {
	selection selectionFlags
	output    *outputFlag
	outDir    string
	clean     bool
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
	var modes []string
	for name, set := range map[string]bool{"-o": o.selection.fs.Changed("output"), "--output-dir": o.outDir != "", "--list": o.list, "--explain": o.explain} {
		if set {
			modes = append(modes, name)
		}
	}
	if len(modes) > 1 {
		sort.Strings(modes)
		return usageErrorf("%s exclude each other", strings.Join(modes, " and "))
	}
	if o.clean && o.outDir == "" {
		return usageErrorf("--clean is for --output-dir")
	}
	if o.outDir != "" {
		return checkOutputDir(o.outDir, o.clean)
	}
	return nil
}

func (o *renderOptions) Run(ctx context.Context, s IOStreams) error {
	p, err := plan.Build(ctx, o.opts)
	if err != nil {
		return err
	}
	logPlan(ctx, p)
	printFindings(ctx, s, p.Findings)
	switch {
	case o.list:
		return p.WriteList(s.Out)
	case o.explain:
		return p.WriteExplain(s.Out)
	case o.outDir != "":
		if o.clean {
			if err := cleanOutputDir(o.outDir); err != nil {
				return err
			}
		}
		files, err := p.WriteDir(o.outDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.ErrOut, "wrote %s in %s under %s\n", clustersync.Plural(len(p.Rendered()), "object"), clustersync.Plural(len(files), "file"), o.outDir)
		return nil
	case o.output.value == formatJSON:
		return printJSON(s.Out, objectList(p.Rendered()))
	case o.output.value == formatName:
		var b strings.Builder
		for _, m := range p.Rendered() {
			b.WriteString(objectName(m) + "\n")
		}
		_, err := io.WriteString(s.Out, b.String())
		return err
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
	if c := p.PlanCache; c != nil {
		logger.V(1).Info("Plan cache", "payload", c.Fingerprint, "hit", c.Hit, "files", c.Files, "saved", c.Saved)
		if c.Err != nil {
			logger.Info("Warning: plan cache", "err", c.Err)
		}
	}
	if logger.V(4).Enabled() {
		for _, e := range p.Selection.Entries {
			if !e.Included {
				logger.V(4).Info("Excluded", "file", e.Manifest.Position(), "object", e.Manifest.ID().String(), "reason", e.Reason)
			}
		}
	}
}

// printFindings prints warnings met while planning on stderr.
func printFindings(ctx context.Context, s IOStreams, fs []manifest.Finding) {
	paths := pathsOf(ctx)
	for _, f := range fs {
		fmt.Fprintf(s.ErrOut, "%s\n", manifest.Printable(paths.real(f.String())))
	}
}
