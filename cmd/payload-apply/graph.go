package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func graphCommand() *command {
	return &command{
		name:  "graph",
		short: "Print the task graph in the CVO's update, install or reconcile order",
		usage: "[--order update|install|reconcile] [--attempt N] [-o text|dot|json] [selection flags]",
		long: `Prints the task graph exactly as the cluster-version operator (CVO) makes it,
and says which of its orders it shows (--order, the first line):

  update     (the default; 'upgrade' runs it) ByNumberAndComponent: the
             CVO's own manifests/ first, then the other files by name; run
             levels in series, the components of a run level in parallel
             (a node each, its files serially); consecutive run levels that
             have one component each share one serial node.
  install    ('apply' on a new cluster) FlattenByNumberAndComponent: every
             component of every run level is a node, all at once.
  reconcile  ('apply' of the release a cluster runs) the install's nodes in
             the order the CVO permutes them for attempt --attempt.

In every order a Job is a node of its own that everything before finishes
for and everything after waits on. "after" lists the nodes that must finish
first, and "requires" those that must succeed (the same in the CVO's graph:
a failed node stops everything after it, never its siblings). There are no
other edges: a custom resource and its CRD in one run level get none (the
engine waits for the CRD), except that a component's step (see 'apply')
waits for the objects it needs.

'apply' applies every CustomResourceDefinition and Namespace in a stage
ahead of the install order (see 'payload-apply help apply'); they keep their
place here, and a node that reaches one waits for it.

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
			fs.StringVar(&o.order, "order", string(payload.OrderUpdate), `the CVO's order to show: "update", "install" or "reconcile"`)
			fs.IntVar(&o.attempt, "attempt", 0, "the attempt the reconcile order is permuted for")
			return o
		},
	}
}

type graphOptions struct {
	selection selectionFlags
	output    *outputFlag
	order     string
	attempt   int
	opts      plan.Options
}

func (o *graphOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	// One selection: load only what it includes whole.
	o.opts.Lean = true
	return err
}

func (o *graphOptions) Validate() error {
	if _, err := payload.ParseOrder(o.order); err != nil {
		return usageErrorf("--%v", err)
	}
	return nil
}

func (o *graphOptions) Run(ctx context.Context, s IOStreams) error {
	p, err := plan.Build(ctx, o.opts)
	if err != nil {
		return err
	}
	logPlan(ctx, p)
	printFindings(ctx, s, p.Findings)
	g := p.Graph
	if order, _ := payload.ParseOrder(o.order); order != g.Order {
		g = g.WithOrder(order, o.attempt)
	}
	switch o.output.value {
	case formatDOT:
		return g.WriteDOT(s.Out)
	case formatJSON:
		return g.WriteJSON(s.Out)
	}
	return g.WriteText(s.Out)
}
