package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"github.com/payload-apply/payload-apply/updategraph"
)

func updateGraphCommand() *command {
	return &command{
		name:  "update-graph",
		short: "Build the update graph of release images and graph-data; write it per channel, or serve it as an update service",
		usage: "(--repository HOST/REPO | --release-dir DIR) [--graph-data DIR] [--channel NAME | --output-dir DIR | --serve ADDR] [flags]",
		long: `payload-apply update-graph is the update service of clusters that cannot
reach Red Hat's (the OpenShift Update Service's job): it builds the graph
of every channel from the release images of a registry repository and a
graph-data directory, and writes it, or answers clusters' requests for
it. A cluster whose ClusterVersion spec.upstream names it learns its
available and conditional updates from it (payload-apply operator, or the
CVO).

Releases: --repository HOST/REPO reads every tag's image that has the
release label (io.openshift.release: oc adm release new and payload-apply
build set it; component images and cosign signatures beside a release are
skipped) and its release-metadata: version, previous and next (the
updates into and out of it), metadata (the channels it is in,
io.openshift.upgrades.graph.release.channels; url; edge edits
previous.add, previous.remove, ...). Each image is read once, remembered
by digest: --serve reads only new images when it rebuilds. A node's
payload is the image by digest. --release-dir DIR reads instead each
directory of DIR as a payload directory (its payload named
PATH@sha256:DIGEST, as the cluster's record names a payload on disk), of
architecture --arch.

Graph-data (--graph-data DIR, the layout of openshift/cincinnati-graph-data):
channels/NAME.yaml (name, versions: a release is in a channel when the
file lists its version, VERSION+ARCH for one architecture), and
blocked-edges/*.yaml (to, from: a regular expression matched against
VERSION+ARCH of the releases updating into to; the updates are removed;
with url, name, message and matchingRules they stay as conditional
updates carrying that risk). A file in error fails the command, every one
named with its field.

Output: the graph of each channel and architecture as the service answers
it (nodes sorted by version; edges; conditionalEdges grouped by risks).
Without --channel, --output-dir or --serve: one line per graph (CHANNEL
ARCH RELEASES UPDATES CONDITIONAL), -o json the graphs. --channel NAME
prints that channel's graph (of --arch). --output-dir DIR writes
DIR/ARCH/CHANNEL.json. --serve ADDR answers GET
/api/upgrades_info/v1/graph?channel=C&arch=A (also /api/upgrades_info/graph)
until SIGTERM, building the graphs again every --refresh; a bad query
gets the service's error answer ({"kind": ..., "value": ...}: 400
missing_params or invalid_params, 406 invalid_content_type); a
well-formed channel without releases an empty graph, as the service does
(the cluster then says VersionNotFound).

Exit codes: 0 built (written, printed; served until SIGTERM); 1 a release
image or directory in error (its tag or directory named; the graphs are
built and written without it), graph-data in error, or files not
written; 2 usage error, or the registry unreachable or refusing the
credentials; 130 interrupted.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &updateGraphOptions{}
			fs.StringVar(&o.repository, "repository", "", "registry repository HOST/REPO whose release images make the graph")
			fs.StringVar(&o.releaseDir, "release-dir", "", "directory whose directories are the payloads of the releases (instead of --repository)")
			fs.StringVar(&o.graphData, "graph-data", "", "graph-data directory: channels/*.yaml, blocked-edges/*.yaml (openshift/cincinnati-graph-data's layout)")
			fs.StringVar(&o.arch, "arch", updategraph.DefaultArch, "architecture of --release-dir's releases, and of the graph --channel prints")
			fs.StringVar(&o.channel, "channel", "", "print this channel's graph (the service's JSON) on stdout")
			fs.StringVar(&o.outputDir, "output-dir", "", "write each graph to DIR/ARCH/CHANNEL.json")
			fs.StringVar(&o.serve, "serve", "", "serve the graphs on ADDR (HOST:PORT, :PORT) as an update service until SIGTERM")
			fs.DurationVar(&o.refresh, "refresh", 5*time.Minute, "with --serve: read the releases and graph-data again this often (0: never)")
			o.output = addOutputFlag(fs, formatText, formatJSON)
			o.registry.addFlags(fs)
			return o
		},
	}
}

type updateGraphOptions struct {
	repository, releaseDir, graphData string
	arch, channel, outputDir, serve   string
	refresh                           time.Duration
	output                            *outputFlag
	registry                          registryFlags

	reader *updategraph.Reader
}

func (o *updateGraphOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) > 0 {
		return usageErrorf("unexpected arguments %q: the releases come from --repository or --release-dir", args)
	}
	if o.repository != "" {
		o.reader = updategraph.NewReader(o.registry.client())
	}
	return nil
}

func (o *updateGraphOptions) Validate() error {
	if (o.repository == "") == (o.releaseDir == "") {
		return usageErrorf("name the releases: --repository HOST/REPO or --release-dir DIR (one of them)")
	}
	n := 0
	for _, set := range []bool{o.channel != "", o.outputDir != "" && o.serve == "", o.serve != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return usageErrorf("--channel prints one graph, --output-dir writes them, --serve serves them (and writes them with --output-dir): pick one")
	}
	if o.channel != "" && !cincinnati.ChannelPattern.MatchString(o.channel) {
		return usageErrorf("--channel %q: want lower-case letters, digits, '-' and '.'", o.channel)
	}
	if !cincinnati.ArchPattern.MatchString(o.arch) {
		return usageErrorf("--arch %q: want lower-case letters and digits (amd64, arm64, multi, ...)", o.arch)
	}
	if o.serve != "" {
		if _, _, err := net.SplitHostPort(o.serve); err != nil {
			return usageErrorf("--serve %q: want HOST:PORT or :PORT: %v", o.serve, err)
		}
	}
	for flag, dir := range map[string]string{"--release-dir": o.releaseDir, "--graph-data": o.graphData} {
		if dir == "" {
			continue
		}
		if _, err := safefs.Dir(dir).ReadDir("."); err != nil {
			return usageErrorf("%s: %v", flag, err)
		}
	}
	return nil
}

// build reads the releases and graph-data and builds the graphs; the
// error says what was left out (the graphs are usable) unless graphs is
// nil.
func (o *updateGraphOptions) build(ctx context.Context) (*updategraph.Graphs, error) {
	var data *updategraph.GraphData
	if o.graphData != "" {
		var err error
		if data, err = updategraph.ReadGraphData(safefs.Dir(o.graphData)); err != nil {
			return nil, &exitError{Code: exitFail, Err: fmt.Errorf("--graph-data %s: %w", o.graphData, err)}
		}
	}
	var rels []updategraph.Release
	var readErr error
	if o.reader != nil {
		rels, readErr = o.reader.Repository(ctx, o.repository)
		if rels == nil && readErr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, clusterError{fmt.Errorf("--repository %s: %w", o.repository, readErr)}
		}
	} else {
		rels, readErr = updategraph.Dir(ctx, o.releaseDir, o.arch)
		if rels == nil && readErr != nil && ctx.Err() == nil {
			readErr = fmt.Errorf("--release-dir %s: %w", o.releaseDir, readErr)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	g, err := updategraph.Build(rels, data)
	return g, errors.Join(readErr, err)
}

func (o *updateGraphOptions) Run(ctx context.Context, s IOStreams) error {
	if o.serve != "" {
		return o.runServe(ctx, s)
	}
	g, buildErr := o.build(ctx)
	if g == nil {
		return buildErr
	}
	var err error
	switch {
	case o.channel != "":
		gr := g.Get(o.channel, o.arch)
		if gr == nil {
			return errors.Join(buildErr, &exitError{Code: exitFail, Err: fmt.Errorf("--channel %s: no release of %s is in it (channels: %v)", o.channel, o.arch, g.Channels())})
		}
		err = json.NewEncoder(s.Out).Encode(gr)
	case o.outputDir != "":
		var n int
		if n, err = writeGraphs(o.outputDir, g); err == nil {
			fmt.Fprintf(s.ErrOut, "Wrote %d graphs (%d releases) to %s\n", n, g.Releases, o.outputDir)
		}
	default:
		err = printGraphs(s, o.output.String(), g)
	}
	if buildErr != nil {
		return &exitError{Code: exitFail, Err: errors.Join(buildErr, err)}
	}
	return err
}

// writeGraphs writes each graph to DIR/ARCH/CHANNEL.json.
func writeGraphs(dir string, g *updategraph.Graphs) (int, error) {
	out, err := safefs.CreateOutput(dir)
	if err != nil {
		return 0, &exitError{Code: exitFail, Err: fmt.Errorf("--output-dir: %w", err)}
	}
	defer out.Close()
	for _, k := range g.Keys() {
		data, err := json.MarshalIndent(g.Get(k.Channel, k.Arch), "", "  ")
		if err != nil {
			return 0, err
		}
		if err := out.WriteFile(path.Join(k.Arch, k.Channel+".json"), append(data, '\n'), 0o644); err != nil {
			return 0, &exitError{Code: exitFail, Err: fmt.Errorf("--output-dir: %w", err)}
		}
	}
	return len(g.Keys()), nil
}

// printGraphs prints a line per graph, or the graphs as JSON.
func printGraphs(s IOStreams, format string, g *updategraph.Graphs) error {
	if format == formatJSON {
		type entry struct {
			Channel string            `json:"channel"`
			Arch    string            `json:"arch"`
			Graph   *cincinnati.Graph `json:"graph"`
		}
		out := []entry{}
		for _, k := range g.Keys() {
			out = append(out, entry{k.Channel, k.Arch, g.Get(k.Channel, k.Arch)})
		}
		return json.NewEncoder(s.Out).Encode(out)
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tARCH\tRELEASES\tUPDATES\tCONDITIONAL")
	for _, k := range g.Keys() {
		gr := g.Get(k.Channel, k.Arch)
		conditional := 0
		for _, ce := range gr.ConditionalEdges {
			conditional += len(ce.Edges)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", k.Channel, k.Arch, len(gr.Nodes), len(gr.Edges), conditional)
	}
	return tw.Flush()
}

// runServe builds the graphs, then serves them until ctx ends, building
// them again every --refresh (a failed rebuild keeps the graphs served).
func (o *updateGraphOptions) runServe(ctx context.Context, s IOStreams) error {
	logger := klog.FromContext(ctx)
	var current atomic.Pointer[updategraph.Graphs]
	rebuild := func() error {
		start := time.Now()
		g, err := o.build(ctx)
		if g == nil {
			return err
		}
		current.Store(g)
		if o.outputDir != "" {
			if _, werr := writeGraphs(o.outputDir, g); werr != nil {
				err = errors.Join(err, werr)
			}
		}
		logger.Info("Built the update graph", "releases", g.Releases, "updates", g.Edges, "conditional", g.Conditional,
			"channels", len(g.Channels()), "took", time.Since(start).Round(time.Millisecond))
		if err != nil {
			logger.Info("Left out of the graph", "err", err)
		}
		return nil
	}
	if err := rebuild(); err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.serve)
	if err != nil {
		return usageErrorf("--serve %s: %v", o.serve, err)
	}
	srv := &http.Server{Handler: updategraph.Handler(current.Load), ReadHeaderTimeout: 10 * time.Second}
	logger.Info("Serving the update graph", "address", l.Addr().String(), "path", updategraph.GraphPaths[0])
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	var tick <-chan time.Time
	if o.refresh > 0 {
		t := time.NewTicker(o.refresh)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
			logger.Info("Stopped", "signal", context.Cause(ctx))
			return nil
		case err := <-done:
			return &exitError{Code: exitFail, Err: fmt.Errorf("--serve %s: %w", o.serve, err)}
		case <-tick:
			if err := rebuild(); err != nil && ctx.Err() == nil {
				logger.Info("Rebuilding the update graph failed; serving the last one", "err", err)
			}
		}
	}
}
