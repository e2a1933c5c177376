package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/permissions"
	"github.com/payload-apply/payload-apply/operator"
	"github.com/payload-apply/payload-apply/operator/deploy"
	"github.com/payload-apply/payload-apply/plan"
)

// manifestsFlags are the flags of `operator manifests`.
type manifestsFlags struct {
	namespace, name, image, payloadImage string
	kubeconfigSecret, cpu, memory        string
	replicas                             int32
	output                               *outputFlag
}

func (m *manifestsFlags) addFlags(fs *pflag.FlagSet) {
	d := deploy.DefaultOptions()
	fs.StringVar(&m.namespace, "namespace", d.Namespace, "manifests: the operator's namespace (its Lease is there too)")
	fs.StringVar(&m.name, "name", d.Name, "manifests: name of the ServiceAccount, roles, bindings and Deployment")
	fs.StringVar(&m.image, "image", "localhost/payload-apply:"+version(), "manifests: the operator's image ('operator image' builds it)")
	fs.Int32Var(&m.replicas, "replicas", d.Replicas, "manifests: replicas of the Deployment (one leads)")
	fs.StringVar(&m.payloadImage, "payload-image", "", "manifests: an image holding the payload, mounted at /payload (an image volume) and served instead of the baked-in or built-in one")
	fs.StringVar(&m.kubeconfigSecret, "kubeconfig-secret", "", "manifests: HyperShift's shape: the managed cluster's kubeconfig is key \"kubeconfig\" of this Secret; the Lease stays in the cluster the Deployment runs in")
	fs.StringVar(&m.cpu, "cpu-request", d.CPURequest, "manifests: the container's CPU request")
	fs.StringVar(&m.memory, "memory-request", d.MemoryRequest, "manifests: the container's memory request")
	m.output = addOutputFlag(fs, formatYAML, formatJSON)
	fs.Lookup("output").Usage = `manifests: output format, "yaml" (documents) or "json" (a List)`
}

func (m *manifestsFlags) validate() error { return nil }

// Flags passed on to the operator in the Deployment when given here.
var (
	operatorPassFlags  = []string{"lease-name", "lease-duration", "renew-deadline", "retry-period", "resync", "pass-timeout", "parallelism", "reconcile-parallelism", "v"}
	selectionPassFlags = []string{"release-image", "profile", "feature-set", "feature-gates", "baseline-capability-set", "additional-capabilities", "exclude", "hypershift-naming", "bundle-deployment-shape"}
	// Files on this machine, which the container cannot read.
	localFileFlags = []string{"lease-kubeconfig", "cluster-config", "extra-manifests", "catalog", "feature-gate-manifest", "profiles-dir", "overlays-dir"}
)

// containerArgs returns the operator's arguments in the Deployment: the
// flags given that concern the operator, where it reads its payload and
// its managed cluster, and the metrics address of port.
func (o *operatorOptions) containerArgs(port int32) ([]string, error) {
	for _, name := range localFileFlags {
		if o.fs.Changed(name) {
			return nil, usageErrorf("--%s names a file on this machine, which the operator's container cannot read: give the operator what it says through the cluster or its image", name)
		}
	}
	args := []string{"operator", "--metrics-bind-address=:" + strconv.Itoa(int(port))}
	for _, name := range append(append([]string{}, operatorPassFlags...), selectionPassFlags...) {
		if f := o.fs.Lookup(name); f != nil && f.Changed {
			v := f.Value.String()
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				v = joinComma(sv.GetSlice())
			}
			args = append(args, "--"+name+"="+v)
		}
	}
	switch {
	case o.manifests.payloadImage != "":
		args = append(args, "--payload="+deploy.PayloadMountPath)
	case o.selection.payload != "":
		// The payload given here is baked into the image ('operator image
		// --payload'), at the image's root.
		args = append(args, "--payload=/")
	}
	if o.manifests.kubeconfigSecret != "" {
		args = append(args, "--kubeconfig="+deploy.KubeconfigMountPath+"/"+deploy.KubeconfigKey)
	}
	return args, nil
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

// runManifests prints the objects that deploy the operator.
func (o *operatorOptions) runManifests(ctx context.Context, s IOStreams) error {
	port := int32(9099)
	if o.fs.Changed("metrics-bind-address") {
		_, p, err := net.SplitHostPort(o.metricsAddr)
		n, perr := strconv.Atoi(p)
		if err != nil || perr != nil || n < 1 || n > 65535 {
			return usageErrorf("--metrics-bind-address %q: want :PORT for the Deployment", o.metricsAddr)
		}
		port = int32(n)
	}
	args, err := o.containerArgs(port)
	if err != nil {
		return err
	}
	rules, err := managedClusterRules(ctx, o.opts, o.manifests.name)
	if err != nil {
		return err
	}
	d := deploy.DefaultOptions()
	d.Namespace, d.Name, d.Image, d.Replicas = o.manifests.namespace, o.manifests.name, o.manifests.image, o.manifests.replicas
	d.Args, d.MetricsPort = args, port
	d.PayloadImage, d.KubeconfigSecret = o.manifests.payloadImage, o.manifests.kubeconfigSecret
	d.CPURequest, d.MemoryRequest = o.manifests.cpu, o.manifests.memory
	d.Rules, d.LeaseRules = rules, operator.LeaseRules(o.leaseName)
	objs, err := deploy.Objects(d)
	if err != nil {
		return usageError{err}
	}
	return printObjects(s, objs, o.manifests.output.value)
}

// managedClusterRules returns the ClusterRole's rules: what applying the
// selection needs (as 'payload-apply rbac' prints it, steps included) and
// the operator's own (operator.Rules).
func managedClusterRules(ctx context.Context, opts plan.Options, name string) ([]rbacv1.PolicyRule, error) {
	opts.Lean = true
	p, err := plan.Build(ctx, opts)
	if err != nil {
		return nil, err
	}
	extra := operator.Rules()
	for _, st := range p.Steps {
		if rs, ok := st.Step.(component.RuleStep); ok {
			extra = append(extra, rs.Rules()...)
		}
	}
	return permissions.ClusterRole(name, p.Unstructured(), extra...).Rules, nil
}

// printObjects writes objs as YAML documents or a JSON List.
func printObjects(s IOStreams, objs []*unstructured.Unstructured, format string) error {
	if format == "json" {
		items := make([]any, len(objs))
		for i, obj := range objs {
			items[i] = obj.Object
		}
		list := map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return fmt.Errorf("operator manifests: %w", err)
		}
		_, err = fmt.Fprintf(s.Out, "%s\n", b)
		return err
	}
	for i, obj := range objs {
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("operator manifests: %w", err)
		}
		if i > 0 {
			fmt.Fprintln(s.Out, "---")
		}
		if _, err := s.Out.Write(b); err != nil {
			return err
		}
	}
	return nil
}
