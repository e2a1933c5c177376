package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/diff"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
)

func diffCommand() *command {
	return &command{
		name:  "diff",
		short: "Show what another profile, feature set or payload would change, or what apply would change on a cluster",
		usage: "([--kubeconfig K] [--parallelism N] | --against-profile P | --against-feature-set S | --against-payload DIR)... [--summary | -o text|json|yaml] [selection flags]",
		long: `Compares two sets of objects object by object and prints a unified diff per
object to create, change or delete, with headers a/<group>/<Kind>/<namespace>/<name>
and b/... ("core" for the legacy group, no namespace for cluster-scoped
objects; /dev/null for the missing side), grouped under "# RUNLEVEL/component"
lines, then a summary: N to create, M to change, K to delete, U unchanged.

Offline, with --against-profile, --against-feature-set or --against-payload:
the selection the selection flags describe ("a") against the same with the
--against-* flags applied ("b"). Objects only in b are to create, only in a
to delete. Status is kept: payload manifests such as ClusterOperators carry
the versions to wait for.

Live, without --against-* flags: what 'payload-apply apply' would change on
the cluster, with the same flags, as kubectl diff. The cluster is found as
kubectl finds it: --kubeconfig (or the other cluster flags: --context,
--server, ...), else KUBECONFIG, else ~/.kube/config, else the in-cluster
configuration.
Every object of the plan is read (--parallelism requests at once): several
objects of one resource by one LIST (across namespaces when they span
several), bounded to a few times the objects wanted, else one GET each;
Secrets are always read one by one, so no other Secret is ever read. The
object apply would leave is then computed without writing anything:
  - an object apply would not touch (the live object already has every field
    the payload sets, the test apply itself uses) is unchanged: one read,
    no dry run;
  - an object that differs is sent as a server-side dry-run apply (field
    manager payload-apply, conflicts forced) and the result is compared with
    the live object; a missing object as a dry-run create;
  - release.openshift.io/create-only objects and ClusterOperators that exist
    are unchanged (apply creates them once and never updates them);
  - release.openshift.io/delete objects that exist are shown as deletions,
    and those already gone not at all;
  - an object whose kind has no API on the server yet, or whose namespace
    does not exist yet, but which the plan creates (its
    CustomResourceDefinition or Namespace is in the plan) is shown as to
    create, as the payload gives it: no dry run can run without them, so
    defaults the server would add are missing;
  - an object whose kind or namespace nothing creates, or that the server
    rejects, is an error (printed on stderr with FILE#DOC; the other objects
    are still compared).
Status is dropped on this side. The profile is --profile, else the "profile"
key of ConfigMap openshift-config/cluster-profile on the cluster, else the
default, as apply chooses it. The payload is --payload, else the release
the cluster's record (ClusterVersion "version") says it runs, opened again
from where it was applied (stderr says which); without --payload, a
cluster with no record, or a recorded payload that cannot be opened here,
is an error (exit 2): the built-in payload is never a silent stand-in.

Fields only a server sets (managedFields, resourceVersion, uid, generation,
creationTimestamp) are dropped and Secret data is always masked ("***",
"*** (before)"/"*** (after)" when a value changes); requests about Secrets
are never logged with their bodies, whatever -v says.
Colour is used only when stdout is a terminal (and NO_COLOR is unset).

No cluster configured, a cluster that cannot be reached, or that refuses
the credentials, fails at once with one error; reads the user may not do
fail object by object. -o json (or yaml) prints the objects and the summary
as data.

Exit codes: 0 no differences, 1 differences, 2 error (including usage
errors, and objects that could not be compared), as kubectl diff.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &diffOptions{}
			fs.StringVar(&o.againstProfile, "against-profile", "", "compare with this profile (offline)")
			fs.StringVar(&o.againstFeatureSet, "against-feature-set", "", "compare with this feature set (offline)")
			fs.StringVar(&o.againstPayload, "against-payload", "", "compare with this payload: a directory, an image file or a registry reference (offline)")
			fs.BoolVar(&o.summary, "summary", false, "print only the summary line")
			o.output = addOutputFlag(fs, formatText, formatJSON, formatYAML)
			fs.IntVar(&o.parallelism, "parallelism", resourceapply.DefaultDiffOptions().Parallelism, "objects read and dry-run at once (live)")
			o.kube.addFlags(fs)
			o.selection.addFlags(fs)
			return o
		},
	}
}

type diffOptions struct {
	selection         selectionFlags
	kube              kubeFlags
	parallelism       int
	againstProfile    string
	againstFeatureSet string
	againstPayload    string
	summary           bool
	output            *outputFlag

	// live is set when a cluster flag was given: compare with the cluster.
	live bool
	a, b plan.Options
}

func (o *diffOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	if o.a, err = o.selection.complete(ctx, args); err != nil {
		return err
	}
	o.b = o.a
	if o.againstProfile != "" {
		if err := checkProfile("--against-profile", o.againstProfile, o.a.Profiles); err != nil {
			return err
		}
		o.b.Profile = o.againstProfile
	}
	if o.againstFeatureSet != "" {
		if err := checkFeatureSet("--against-feature-set", o.againstFeatureSet); err != nil {
			return err
		}
		o.b.FeatureSet = o.againstFeatureSet
	}
	if o.againstPayload != "" {
		var src payloadSource
		if o.b.Payload, src, err = o.selection.registry.openPayload(ctx, "--against-payload", o.againstPayload); err != nil {
			return err
		}
		o.b.Parsed, o.b.PlanCache = nil, nil
		if src.Parsed != nil {
			o.b.Parsed = src.Parsed
		} else {
			o.b.PlanCache = o.selection.registry.planCache(ctx)
		}
	}
	return nil
}

// against returns the --against-* flags set on the command line.
func (o *diffOptions) against() []string {
	var out []string
	for _, name := range []string{"against-profile", "against-feature-set", "against-payload"} {
		if o.selection.fs.Changed(name) {
			out = append(out, "--"+name)
		}
	}
	return out
}

func (o *diffOptions) Validate() error {
	cluster, against := o.kube.given(), o.against()
	switch {
	case len(cluster) > 0 && len(against) > 0:
		return usageErrorf("%s and %s exclude each other: compare with a cluster or offline", cluster[0], against[0])
	case len(against) > 0 && o.selection.fs.Changed("parallelism"):
		return usageErrorf("--parallelism is for diff with a cluster (without --against-*)")
	}
	if o.parallelism < 1 {
		return usageErrorf("--parallelism %d: want at least 1", o.parallelism)
	}
	if o.summary && o.output.value != formatText {
		return usageErrorf("--summary and -o %s exclude each other (the %s has the summary)", o.output.value, o.output.value)
	}
	o.live = len(against) == 0
	return o.kube.validate()
}

func (o *diffOptions) Run(ctx context.Context, s IOStreams) error {
	if o.live {
		return o.runLive(ctx, s)
	}
	fail := func(err error) error { return &exitError{Code: exitUsage, Err: err} }
	a, err := plan.Build(ctx, o.a)
	if err != nil {
		return fail(err)
	}
	if o.againstPayload == "" {
		// Same payload: parse it once.
		o.b.Loaded = a.Payload
	}
	b, err := plan.Build(ctx, o.b)
	if err != nil {
		return fail(err)
	}
	r, err := diff.Compare(a.DiffObjects(), b.DiffObjects(), diff.Options{KeepStatus: true})
	if err != nil {
		return fail(err)
	}
	return o.write(s, r, nil)
}

// write prints r as the flags ask and returns the exit: 2 with the
// failures when there are any, else 1 when r has differences.
func (o *diffOptions) write(s IOStreams, r *diff.Result, failures []error) error {
	var err error
	switch {
	case o.summary:
		err = r.WriteSummary(s.Out)
	case o.output.value == formatJSON:
		err = r.WriteJSON(s.Out)
	case o.output.value == formatYAML:
		err = jsonToYAML(s.Out, r.WriteJSON)
	default:
		err = r.WriteText(s.Out, useColor(s))
	}
	switch {
	case err != nil:
		return &exitError{Code: exitUsage, Err: err}
	case len(failures) > 0:
		return &exitError{Code: exitUsage, Err: errors.Join(failures...)}
	case r.Summary().Differs():
		return &exitError{Code: exitFail}
	}
	return nil
}

// liveGCPercent is the garbage collector's target for a live diff unless
// GOGC is set: a live diff is one selection of one payload, waited on by a
// person, so it trades memory for time, unlike the commands that may load
// many payloads (gcPercent). On the real payload: 30% less CPU than at 50,
// peak RSS 120 -> 175 MB (docs/benchmarks.md, "Live diff (issue 5)").
// liveMemoryLimit keeps a very large payload from growing the heap to
// three times what is live: from there the collector runs as often as it
// must.
const (
	liveGCPercent   = 200
	liveMemoryLimit = 1 << 30
)

// runLive compares the cluster with what apply would make of it.
func (o *diffOptions) runLive(ctx context.Context, s IOStreams) error {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(liveGCPercent))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(liveMemoryLimit))
	}
	fail := func(err error) error { return &exitError{Code: exitUsage, Err: err} }
	cfg, err := o.kube.restConfig(ctx, s)
	if isNoConfig(err) {
		return fail(fmt.Errorf("%w; or compare offline: --against-profile, --against-feature-set or --against-payload", err))
	}
	if err != nil {
		return fail(err)
	}
	start := clustersync.StartOptions{
		Connect: clustersync.ConnectOptions{Strict: true, Sink: warningPrinter{s.ErrOut}, Secrets: secretsOf(ctx)},
		Plan:    o.a,
	}
	// One selection against the cluster: load only what it includes whole.
	start.Plan.Lean = true
	if o.selection.payload == "" {
		start.Payload = payloadOfRecord(s.ErrOut, &o.selection.registry)
	}
	sess, err := clustersync.Start(ctx, cfg, start)
	if err != nil {
		return fail(err)
	}
	if o.selection.payload != "" {
		sayComparedPayload(s.ErrOut, o.selection.payload, sess)
	}
	logPlan(ctx, sess.Plan)
	r, err := clustersync.Diff(ctx, sess, clustersync.DiffOptions{Parallelism: o.parallelism})
	if err != nil {
		return fail(err)
	}
	return o.write(s, r.Result, r.Failures)
}

// useColor reports whether stdout is a terminal and NO_COLOR is unset.
func useColor(s IOStreams) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := osFile(s.Out)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// warningPrinter prints the server's warnings on stderr (the engine
// gives each distinct one once).
type warningPrinter struct{ w io.Writer }

// Event prints Warning events and ignores the others.
func (p warningPrinter) Event(e clustersync.Event) {
	if w, ok := e.(clustersync.Warning); ok {
		fmt.Fprintf(p.w, "warning: %s\n", w.Text)
	}
}
