package main

import (
	"context"

	"github.com/spf13/pflag"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/permissions"
	"github.com/payload-apply/payload-apply/plan"
)

func rbacCommand() *command {
	return &command{
		name:  "rbac",
		short: "Print the least-privilege ClusterRole that apply and status need for the selection",
		usage: "[--name N] [-o yaml|json] [selection flags]",
		long: `Prints, as YAML, the ClusterRole that 'apply' and 'status' need to apply
the objects the selection includes (the cluster-profile ConfigMap among
them) and to read them back. For every kind of the plan:

  get, list, create, patch   read before writing, server-side apply (PATCH),
                             create-only objects and ClusterOperators,
                             --wait's lists
  watch                      CustomResourceDefinitions (waited on until
                             Established)
  delete                     kinds with objects annotated
                             release.openshift.io/delete
  bind, escalate             clusterroles and roles, when the payload
                             creates RBAC objects: granting operators
                             permissions the role does not hold itself is
                             an escalation the API server checks

plus get on configmaps (the cluster's profile, the admin gates and
acknowledgements), get, list on clusteroperators (status), get, list,
create, patch on clusterversions and update on clusterversions/status (the
cluster's record, ClusterVersion "version", which apply and upgrade keep),
get, list, create, patch, watch on customresourcedefinitions (the record's
CRD when the cluster lacks it), plus what the selection's component steps need
(the ingress default placement's Ingress status, the node tuning
operator's hosted ConfigMaps and RuntimeClass, the platform operators
manager's BundleDeployments and statuses). Discovery (/api, /apis) is open to every
authenticated user by default (ClusterRole system:discovery).

Bind it with a ClusterRoleBinding to the user or service account that runs
payload-apply (docs/reliability.md, "Security"). The resource of a kind
comes from the payload's CustomResourceDefinition when it has one, else is
guessed from the kind as kubectl does.

Exit codes: 0 printed, 1 the payload or options are wrong, 2 usage error.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &rbacOptions{}
			fs.StringVar(&o.name, "name", "payload-apply", "name of the ClusterRole")
			o.output = addOutputFlag(fs, formatYAML, formatJSON)
			o.selection.addFlags(fs)
			return o
		},
	}
}

type rbacOptions struct {
	selection selectionFlags
	name      string
	output    *outputFlag
	opts      plan.Options
}

func (o *rbacOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	o.opts.Lean = true
	return err
}

func (o *rbacOptions) Validate() error {
	if o.name == "" {
		return usageErrorf("--name: want a name")
	}
	return nil
}

func (o *rbacOptions) Run(ctx context.Context, s IOStreams) error {
	p, err := plan.Build(ctx, o.opts)
	if err != nil {
		return err
	}
	logPlan(ctx, p)
	printFindings(ctx, s, p.Findings)
	objs := p.Unstructured()
	var steps []rbacv1.PolicyRule
	for _, st := range p.Steps {
		if rs, ok := st.Step.(component.RuleStep); ok {
			steps = append(steps, rs.Rules()...)
		}
	}
	return printData(s.Out, o.output.value, permissions.ClusterRole(o.name, objs, steps...))
}
