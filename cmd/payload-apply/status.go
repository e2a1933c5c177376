package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
)

func statusCommand() *command {
	return &command{
		name:  "status",
		short: "Show the cluster's record, the payload's ClusterOperators and the aggregate status",
		usage: "[--kubeconfig K] [-o text|wide|json|yaml] [--payload P] [selection flags]",
		long: `Prints the cluster's record, ClusterVersion "version" as apply and upgrade
keep it (the release it works towards, the history newest first, the
conditions), then reads every ClusterOperator of the release and prints one
line per operator (as 'oc get clusteroperators' does), then the aggregate
status, computed like ClusterVersion's conditions at install time.

The release is the one the record says the cluster runs (its newest history
entry), opened again from where it was applied, and said on stderr; with
--payload, that payload (stderr says what the cluster runs beside it).
Without --payload, a cluster with no record, or a recorded payload that
cannot be opened here (moved, changed, or a registry reference), is a usage
error: status never falls back to the built-in payload.

The aggregate:

  Available    True ("Done applying V") when every ClusterOperator is
               Available=True, not Degraded=True, and reports every version
               its manifest lists; else False.
  Progressing  False when all are done; else True, "Working towards V: N of M
               done (P% complete)", or "Unable to apply V: ..." when failing.
  Failing      True when a ClusterOperator is missing, not available or
               degraded, naming them; versions not reported yet are progress,
               not failure.

The profile is --profile, else the "profile" key of ConfigMap
openshift-config/cluster-profile when the cluster has it, else the default.

Objects of the release that the record's spec.overrides mark unmanaged are
listed last ("unmanaged (spec.overrides): ..."): no command writes them.

-o wide adds the reason an operator is not ready (the CVO's
ClusterOperatorNotAvailable, ClusterOperatorDegraded, ...) and every
version it reports. -o json (or -o yaml) prints {"version", "done",
"total", "conditions": [...], "operators": [...], "clusterVersion":
{"desired", "history", "conditions", "capabilities"}, "unmanaged": [...]}
instead.

Exit codes: 0 Available=True and Failing not True (the aggregate, and the
record's Failing); 1 not available or failing, or the payload could not be
read; 2 usage error, no release to compare with, no cluster configured, the
cluster unreachable, or the credentials refused or lacking a permission
(forbidden, unauthorized).`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &statusOptions{}
			o.output = addOutputFlag(fs, formatText, formatWide, formatJSON, formatYAML)
			o.kube.addFlags(fs)
			o.selection.addFlags(fs)
			return o
		},
	}
}

type statusOptions struct {
	selection selectionFlags
	kube      kubeFlags
	output    *outputFlag

	opts plan.Options
}

func (o *statusOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	return err
}

func (o *statusOptions) Validate() error { return o.kube.validate() }

// jsonStatus is the -o json shape of status; field names are part of the
// CLI contract.
type jsonStatus struct {
	resourceapply.ClusterStatus
	Operators      []jsonOperator `json:"operators"`
	ClusterVersion *jsonRecord    `json:"clusterVersion"`
	Unmanaged      []string       `json:"unmanaged,omitempty"`
}

type jsonOperator struct {
	Name        string            `json:"name"`
	Found       bool              `json:"found"`
	Ready       bool              `json:"ready"`
	Available   string            `json:"available,omitempty"`
	Progressing string            `json:"progressing,omitempty"`
	Degraded    string            `json:"degraded,omitempty"`
	Versions    map[string]string `json:"versions,omitempty"`
	Reason      string            `json:"reason,omitempty"`
	Message     string            `json:"message,omitempty"`
	Since       string            `json:"since,omitempty"`
}

func (o *statusOptions) Run(ctx context.Context, s IOStreams) error {
	cfg, err := o.kube.restConfig(ctx, s)
	if err != nil {
		return err
	}
	if _, err := checkReachable(cfg); err != nil {
		return err
	}
	start := clustersync.StartOptions{
		Connect: clustersync.ConnectOptions{Sink: warningPrinter{s.ErrOut}, Secrets: secretsOf(ctx)},
		Plan:    o.opts,
	}
	if o.selection.payload == "" {
		start.Payload = payloadOfRecord(s.ErrOut, &o.selection.registry)
	}
	sess, err := clustersync.Start(ctx, cfg, start)
	if err != nil {
		return clusterFailure(err)
	}
	if o.selection.payload != "" {
		sayComparedPayload(s.ErrOut, o.selection.payload, sess)
	}
	logPlan(ctx, sess.Plan)
	rep, err := clustersync.Status(ctx, sess)
	if err != nil {
		return failure(err)
	}
	st, ops := rep.Cluster, rep.Operators
	if o.output.value == formatJSON || o.output.value == formatYAML {
		out := jsonStatus{ClusterStatus: st, Operators: []jsonOperator{}, ClusterVersion: recordJSON(sess.Record)}
		for _, m := range rep.Unmanaged {
			out.Unmanaged = append(out.Unmanaged, m.ID().String())
		}
		for _, op := range ops {
			out.Operators = append(out.Operators, jsonOperator{Name: op.Name, Found: op.Found, Ready: op.Ready,
				Available: string(op.Available), Progressing: string(op.Progressing), Degraded: string(op.Degraded),
				Versions: op.Versions, Reason: op.Reason, Message: op.Message, Since: op.Since})
		}
		if err := printData(s.Out, o.output.value, out); err != nil {
			return err
		}
	} else {
		wide := o.output.value == formatWide
		printRecord(s.Out, sess.Record)
		fmt.Fprintln(s.Out)
		tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
		head := "NAME\tVERSION\tAVAILABLE\tPROGRESSING\tDEGRADED\tSINCE\tMESSAGE"
		if wide {
			head = "NAME\tVERSION\tAVAILABLE\tPROGRESSING\tDEGRADED\tSINCE\tREASON\tVERSIONS\tMESSAGE"
		}
		fmt.Fprintln(tw, head)
		for _, op := range ops {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t", op.Name, dash(op.Versions["operator"]), dash(string(op.Available)),
				dash(string(op.Progressing)), dash(string(op.Degraded)), dash(op.Since))
			if wide {
				fmt.Fprintf(tw, "%s\t%s\t", dash(op.Reason), dash(versionList(op.Versions)))
			}
			fmt.Fprintln(tw, op.Message)
		}
		tw.Flush()
		fmt.Fprintln(s.Out)
		for _, c := range st.Conditions {
			line := fmt.Sprintf("%s=%s", c.Type, c.Status)
			if c.Reason != "" {
				line += " (" + c.Reason + ")"
			}
			if c.Message != "" {
				line += ": " + strings.ReplaceAll(c.Message, "\n", "\n  ")
			}
			fmt.Fprintln(s.Out, line)
		}
		for _, m := range rep.Unmanaged {
			fmt.Fprintf(s.Out, "unmanaged (spec.overrides): %s (%s): left as it is\n", m.ID(), m.Position())
		}
	}
	if !st.Healthy() || recordFailing(sess.Record) {
		return &exitError{Code: exitFail}
	}
	return nil
}

// versionList prints versions as "name=version,..." sorted by name.
func versionList(vs map[string]string) string {
	names := make([]string, 0, len(vs))
	for n := range vs {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = n + "=" + vs[n]
	}
	return strings.Join(names, ",")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
