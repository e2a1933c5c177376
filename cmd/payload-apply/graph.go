package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/plan"
)

func graphCommand() *command {
	return &command{
		name:  "graph",
		short: "Print the task graph: run levels in series, components in parallel",
		usage: "[-o text|dot|json] [selection flags]",
		long: `Prints the task graph the apply step walks. Each node holds the files of one
component at one run level, applied serially; the nodes of a run level run in
parallel and run levels run in series. A Job is a node of its own that
everything before finishes for and everything after waits on. Files whose
names do not follow 0000_<NN>_<component>_<name> run last in one serial node.

"after" lists the nodes that must finish first; "requires" lists the nodes
that must succeed (the same component's previous node, the node creating a
CRD the node needs, a Job before it): a failed node stops only the nodes that
require it.

'apply' applies every CustomResourceDefinition and Namespace in a stage
ahead of this graph (see 'payload-apply help apply'); they keep their place
here, and a node that reaches one waits for it.

-o dot prints Graphviz (dashed red edges are requirements that are not
ordering edges); -o json prints {"tasks": N, "nodes": [...]}. --format is
the deprecated name of -o: it still works, with a warning.

Exit codes: 0 printed, 1 the payload or options are wrong, 2 usage error.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &graphOptions{}
			o.selection.addFlags(fs)
			o.output = addOutputFlag(fs, formatText, formatDOT, formatJSON)
			fs.Var(o.output, "format", "deprecated: use -o/--output")
			deprecateFlag(fs, "format", "use -o/--output")
			return o
		},
	}
}

type graphOptions struct {
	selection selectionFlags
	output    *outputFlag
	opts      plan.Options
}

func (o *graphOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	// One selection: load only what it includes whole.
	o.opts.Lean = true
	return err
}

func (o *graphOptions) Validate() error { return nil }

func (o *graphOptions) Run(ctx context.Context, s IOStreams) error {
	p, err := plan.Build(ctx, o.opts)
	if err != nil {
		return err
	}
	logPlan(ctx, p)
	printFindings(ctx, s, p.Findings)
	switch o.output.value {
	case formatDOT:
		return p.Graph.WriteDOT(s.Out)
	case formatJSON:
		return p.Graph.WriteJSON(s.Out)
	}
	return p.Graph.WriteText(s.Out)
}
