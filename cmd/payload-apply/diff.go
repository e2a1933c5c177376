package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/lib/diff"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func diffCommand() *command {
	return &command{
		name:  "diff",
		short: "Show what another profile, feature set or payload would change",
		usage: "(--against-profile P | --against-feature-set S | --against-payload DIR)... [--summary | -o json] [selection flags]",
		long: `Renders two selections offline and compares them object by object: the one
the selection flags describe ("a") and the same with the --against-* flags
applied ("b"). Objects only in b are to create, only in a to delete, in both
but different to change; each gets a unified diff with headers
a/<group>/<Kind>/<namespace>/<name> and b/... ("core" for the legacy group,
no namespace for cluster-scoped objects), grouped under "# RUNLEVEL/component"
lines, then a summary: N to create, M to change, K to delete, U unchanged.

Fields only a server sets (managedFields, resourceVersion, uid, generation,
creationTimestamp) are dropped and Secret data is always masked ("***",
"*** (before)"/"*** (after)" when a value changes). Offline, status is kept:
payload manifests such as ClusterOperators carry the versions to wait for.
Colour is used only when stdout is a terminal (and NO_COLOR is unset).

Exit codes: 0 no differences, 1 differences, 2 error (including usage
errors), as kubectl diff.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &diffOptions{}
			o.selection.addFlags(fs)
			fs.StringVar(&o.againstProfile, "against-profile", "", "compare with this profile")
			fs.StringVar(&o.againstFeatureSet, "against-feature-set", "", "compare with this feature set")
			fs.StringVar(&o.againstPayload, "against-payload", "", "compare with this payload directory")
			fs.BoolVar(&o.summary, "summary", false, "print only the summary line")
			fs.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
			return o
		},
	}
}

type diffOptions struct {
	selection         selectionFlags
	againstProfile    string
	againstFeatureSet string
	againstPayload    string
	summary           bool
	output            string

	a, b plan.Options
}

func (o *diffOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) > 0 {
		return usageErrorf("unexpected arguments: %v", args)
	}
	var err error
	if o.a, err = o.selection.options(); err != nil {
		return err
	}
	o.b = o.a
	if o.againstProfile != "" {
		o.b.Profile = o.againstProfile
	}
	if o.againstFeatureSet != "" {
		o.b.FeatureSet = o.againstFeatureSet
	}
	if o.againstPayload != "" {
		if o.b.Payload, err = payloadFS(o.againstPayload); err != nil {
			return err
		}
	}
	return nil
}

func (o *diffOptions) Validate() error {
	if o.againstProfile == "" && o.againstFeatureSet == "" && o.againstPayload == "" {
		return usageErrorf("say what to compare with: --against-profile, --against-feature-set or --against-payload")
	}
	if o.output != "text" && o.output != "json" {
		return usageErrorf("--output %q: want text or json", o.output)
	}
	if o.summary && o.output == "json" {
		return usageErrorf("--summary and -o json exclude each other (the JSON has the summary)")
	}
	return nil
}

func (o *diffOptions) Run(ctx context.Context, s IOStreams) error {
	fail := func(err error) error { return &exitError{Code: exitUsage, Err: err} }
	a, err := plan.Build(o.a)
	if err != nil {
		return fail(err)
	}
	if o.againstPayload == "" {
		// Same payload: parse it once.
		o.b.Loaded = a.Payload
	}
	b, err := plan.Build(o.b)
	if err != nil {
		return fail(err)
	}
	r, err := diff.Compare(diffObjects(a), diffObjects(b), diff.Options{KeepStatus: true})
	if err != nil {
		return fail(err)
	}
	switch {
	case o.summary:
		err = r.WriteSummary(s.Out)
	case o.output == "json":
		err = r.WriteJSON(s.Out)
	default:
		err = r.WriteText(s.Out, useColor(s))
	}
	if err != nil {
		return fail(err)
	}
	if r.Summary().Differs() {
		return &exitError{Code: exitFail}
	}
	return nil
}

// diffObjects turns a plan's objects into diff inputs placed by run level
// and component.
func diffObjects(p *plan.Plan) []diff.Object {
	out := make([]diff.Object, len(p.Objects))
	for i, m := range p.Objects {
		level, comp, _ := payload.ParseFileName(m.OriginalFilename)
		out[i] = diff.Object{Obj: m.Obj, File: m.Position(), RunLevel: level, Component: comp}
	}
	return out
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
