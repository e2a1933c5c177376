package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
)

func validateCommand() *command {
	return &command{
		name:  "validate",
		short: "Check a payload: parsing, duplicates, annotations, images, ordering",
		usage: "[-o text|json] [selection flags]",
		long: `Checks every file of the payload and prints one line per problem:
  FILE[#DOC]: error|warning: message

Checked: YAML/JSON parsing (every bad document, not only the first), repeated
mapping keys (the last value wins, silently), release-metadata and
image-references, inclusion annotations (unknown profiles, misspelt keys,
values other than "true", unknown feature sets, gates and capabilities),
objects that two included files both define and the overlays of each profile,
built with kustomize over its selection (for every profile and feature set,
or only the ones --profile and --feature-set name), overlays no profile
applies, container images against image-references, and file names the task
graph cannot order. Overlay problems name the overlay's kustomization file
(or the profile file that lists a missing overlay).

What the API server would refuse is checked too, in each selection's objects
(FILE#DOC: error: Kind/ns/name: FIELD: what is wrong): an apiVersion or kind
with spaces or of the wrong type, a client-side kind: List, a name, namespace,
label or annotation the server does not accept (a number where a string goes:
quote it), a built-in kind's fields against its type (replicas: "three"), and
custom resources against the OpenAPI v3 schema of their
CustomResourceDefinition in the payload, as the API server applies it: types,
enums, patterns, required fields after defaults, list keys, and fields the
schema does not declare (server-side apply refuses them). A field a built-in
type does not have is a warning: apply drops it, as the CVO does. Rules in
x-kubernetes-validations (CEL) are left to the server.

A release image (--payload an OCI layout or image tarball) is also checked as
'build' checks it: release-manifests/ with release-metadata and
image-references, the io.openshift.release label equal to the release
version, which must equal the ImageStream name, and every pull spec
well-formed. Unused image-references tags are warnings, as for directories:
real releases carry images no manifest names.

-o json prints {"errors": N, "warnings": N, "findings": [{"file", "doc",
"severity", "message"}]} instead (doc -1: the whole file).

Exit codes: 0 valid (warnings only), 1 invalid (at least one error), 2 usage
error or a payload that cannot be read.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &validateOptions{}
			o.output = addOutputFlag(fs, formatText, formatJSON)
			o.selection.addFlags(fs)
			return o
		},
	}
}

type validateOptions struct {
	selection selectionFlags
	output    *outputFlag
	opts      plan.Options
}

func (o *validateOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	return err
}

func (o *validateOptions) Validate() error { return nil }

func (o *validateOptions) Run(ctx context.Context, s IOStreams) error {
	var findings []manifest.Finding
	var err error
	if labels := imageLabels(o.opts.Payload); labels != nil {
		findings, err = plan.Validate(ctx, o.opts, plan.ValidateOptions{Release: true, Labels: labels})
	} else {
		findings, err = plan.Validate(ctx, o.opts, plan.ValidateOptions{})
	}
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	errs, warns := 0, 0
	paths := pathsOf(ctx)
	out := validateResult{Findings: []validateFinding{}}
	for _, f := range findings {
		if o.output.value == formatText {
			fmt.Fprintln(s.Out, manifest.Printable(paths.real(f.String())))
		}
		out.Findings = append(out.Findings, validateFinding{File: paths.real(f.File), Doc: f.Doc, Severity: string(f.Severity), Message: f.Message})
		if f.Severity == manifest.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	if o.output.value == formatJSON {
		out.Errors, out.Warnings = errs, warns
		if err := printJSON(s.Out, out); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.ErrOut, "%s, %s\n", clustersync.Plural(errs, "error"), clustersync.Plural(warns, "warning"))
	if errs > 0 {
		return &exitError{Code: exitFail}
	}
	return nil
}

// validateResult is validate -o json.
type validateResult struct {
	Errors   int               `json:"errors"`
	Warnings int               `json:"warnings"`
	Findings []validateFinding `json:"findings"`
}

type validateFinding struct {
	File     string `json:"file"`
	Doc      int    `json:"doc"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}
