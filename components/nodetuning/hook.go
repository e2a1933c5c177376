package nodetuning

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// StandaloneFile is the generated file of a profile's four objects: run
// level 81, after the MachineConfig and KubeletConfig CRDs (80) and the
// Tuned CRD (50).
func StandaloneFile(profile string) string {
	return "0000_81_cluster-node-tuning-operator_50-performance-" + profile + ".yaml"
}

// Hook is the component's render hook. Standalone it renders the
// PerformanceProfiles among the objects and extra manifests (they stay in
// the plan) into generated objects, each for the MachineConfigPool that
// selects its nodes, and, with workload partitioning (Input.Cluster's
// Infrastructure), each pool's partitioning MachineConfig; the
// MixedCPUsAllocation feature gate (Input.FeatureGates) turns mixed CPUs
// on. On a hosted control plane it renders
// the source ConfigMaps into a HostedStep each, placed after its source,
// with the outputs as the step's preview. Naming chooses the hosted naming
// (NamingSeed, the default, or NamingUpstream). Invalid profiles
// fail the plan: every problem is reported as
// "FILE#DOC: Kind/[namespace/]name: [data.KEY: PerformanceProfile/NAME: ]field problem".
// The zero value is ready to use.
type Hook struct {
	// Naming names the hosted outputs (--hypershift-naming); "" is
	// NamingSeed.
	Naming Naming
}

var _ component.Hook = Hook{}

// Name is "nodetuning".
func (Hook) Name() string { return "nodetuning" }

// Render renders every profile of in; see Hook.
func (h Hook) Render(_ context.Context, in *component.Input) (*component.Output, error) {
	naming, err := ParseNaming(string(h.Naming))
	if err != nil {
		return nil, err
	}
	all := make([]*manifest.Manifest, 0, len(in.Objects)+len(in.Extra))
	all = append(append(all, in.Objects...), in.Extra...)
	if in.HostedControlPlane {
		return renderHosted(all, naming, hostedOptions(in))
	}
	return renderStandalone(all, in)
}

func isProfile(m *manifest.Manifest) bool {
	return m.GVK == GroupVersionKind
}

// ref prints an object of a manifest as Kind/name or Kind/namespace/name.
func ref(m *manifest.Manifest) string { return m.ID().Ref() }

// profileErrors turns a render error into one error per line, each headed
// by prefix.
func profileErrors(prefix string, err error) []error {
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		return []error{fmt.Errorf("%s: %w", prefix, err)}
	}
	var out []error
	for _, line := range strings.Split(invalid.Error(), "\n") {
		out = append(out, fmt.Errorf("%s: %s", prefix, line))
	}
	return out
}

// neededCRDs are the CRDs the standalone objects need, by group/Kind.
var neededCRDs = []string{
	"machineconfiguration.openshift.io/MachineConfig",
	"machineconfiguration.openshift.io/KubeletConfig",
	"tuned.openshift.io/Tuned",
}

// PinningFile is the generated file of a pool's workload partitioning
// MachineConfig, at the run level of the profiles' objects; its name sorts
// before theirs.
func PinningFile(pool string) string {
	return "0000_81_cluster-node-tuning-operator_" + BootstrapPinningName(pool) + ".yaml"
}

func renderStandalone(all []*manifest.Manifest, in *component.Input) (*component.Output, error) {
	out := &component.Output{}
	c, errs := readCluster(all, in.Cluster)
	if c.legacy != nil {
		out.Findings = append(out.Findings, manifest.Finding{File: c.legacy.File, Doc: c.legacy.Doc, Severity: manifest.SeverityWarning,
			Message: fmt.Sprintf("%s: writes %s on a single-node control plane without Infrastructure status.cpuPartitioning AllNodes: taken as the legacy request for workload partitioning", ref(c.legacy), kubeletPinningConfig)})
	}
	for _, pool := range c.pinnedPools {
		g, err := component.Generated(PinningFile(pool), 0, BootstrapPinningMachineConfig(pool))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.Add = append(out.Add, g)
	}
	for _, m := range all {
		if IsSource(m) {
			out.Findings = append(out.Findings, manifest.Finding{File: m.File, Doc: m.Doc, Severity: manifest.SeverityWarning,
				Message: fmt.Sprintf("%s: labelled %s=true, but the profile is not a hosted control plane: applied as it is, its PerformanceProfile is not rendered", ref(m), LabelPerformanceProfileConfig)})
			continue
		}
		if !isProfile(m) {
			continue
		}
		prefix := m.Position() + ": " + ref(m)
		pp, err := Decode(m.Obj.Object)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", prefix, err))
			continue
		}
		opts := Options{WorkloadPartitioning: c.partitioning, MixedCPUsFeatureGate: in.FeatureGates.Has(FeatureGateMixedCPUs)}
		if len(Validate(pp)) == 0 {
			pool, err := c.selectPool(pp.Spec.NodeSelector)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", prefix, err))
				continue
			}
			opts.Pool = pool
		}
		objs, err := Render(pp, opts)
		if err != nil {
			errs = append(errs, profileErrors(m.Position(), err)...)
			continue
		}
		for i, obj := range objs.List() {
			g, err := component.Generated(StandaloneFile(pp.Name), i, obj)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", prefix, err))
				continue
			}
			out.Add = append(out.Add, g)
		}
		out.Findings = append(out.Findings, profileFindings(m, pp)...)
		out.Findings = append(out.Findings, missingCRDs(m, in.Objects)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// FeatureGateMixedCPUs is the feature gate that lets profiles share CPUs
// (spec.cpu.shared with the mixedCpus hint).
const FeatureGateMixedCPUs = "MixedCPUsAllocation"

// profileFindings warns about what a profile asks that the render does not
// do or that NTO's webhook rejects once it sees the nodes.
func profileFindings(m *manifest.Manifest, pp *PerformanceProfile) []manifest.Finding {
	var out []manifest.Finding
	warn := func(msg string) {
		out = append(out, manifest.Finding{File: m.File, Doc: m.Doc, Severity: manifest.SeverityWarning, Message: ref(m) + ": " + msg})
	}
	for _, w := range Warnings(pp) {
		warn(w.Error())
	}
	if pp.Annotations[AnnotationPause] == "true" {
		warn(fmt.Sprintf("metadata.annotations[%q]: pauses only the operator's reconcile of existing objects: the render renders the profile", AnnotationPause))
	}
	return out
}

// missingCRDs warns about the CRDs of the rendered objects that the plan
// does not create.
func missingCRDs(m *manifest.Manifest, objects []*manifest.Manifest) []manifest.Finding {
	have := map[string]bool{}
	for _, o := range objects {
		if o.GVK.Group == "apiextensions.k8s.io" && o.GVK.Kind == "CustomResourceDefinition" {
			group, _, _ := unstructured.NestedString(o.Obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Obj.Object, "spec", "names", "kind")
			have[group+"/"+kind] = true
		}
	}
	var out []manifest.Finding
	for _, crd := range neededCRDs {
		if !have[crd] {
			out = append(out, manifest.Finding{File: m.File, Doc: m.Doc, Severity: manifest.SeverityWarning,
				Message: fmt.Sprintf("%s: the plan has no CRD for %s, so the rendered object of that kind cannot be applied", ref(m), crd)})
		}
	}
	return out
}

// hostedOptions are the render options on a hosted control plane: no
// MachineConfigPools (NodePools instead), workload partitioning and the
// mixed CPUs gate as the cluster facts say.
func hostedOptions(in *component.Input) Options {
	opts := Options{MixedCPUsFeatureGate: in.FeatureGates.Has(FeatureGateMixedCPUs)}
	if in.Cluster != nil && in.Cluster.Infrastructure != nil {
		opts.WorkloadPartitioning = in.Cluster.Infrastructure.Status.CPUPartitioning == configv1.CPUPartitioningAllNodes
	}
	return opts
}

func renderHosted(all []*manifest.Manifest, naming Naming, opts Options) (*component.Output, error) {
	out := &component.Output{}
	var errs []error
	// Where each output came from, to catch two sources writing one object.
	owners := map[string]*manifest.Manifest{}
	claim := func(m *manifest.Manifest, key, what string) {
		if prev, ok := owners[key]; ok {
			errs = append(errs, fmt.Errorf("%s: %s: would write %s, which %s (%s) writes too", m.Position(), ref(m), what, ref(prev), prev.Position()))
			return
		}
		owners[key] = m
	}
	for _, m := range all {
		if isProfile(m) {
			out.Findings = append(out.Findings, manifest.Finding{File: m.File, Doc: m.Doc, Severity: manifest.SeverityWarning,
				Message: fmt.Sprintf("%s: a hosted control plane takes PerformanceProfiles from ConfigMaps labelled %s=true: this one is applied as it is and not rendered", ref(m), LabelPerformanceProfileConfig)})
			continue
		}
		if !IsSource(m) {
			continue
		}
		prefix := m.Position() + ": " + ref(m)
		src, perrs := ParseSource(m)
		for _, err := range perrs {
			errs = append(errs, fmt.Errorf("%s: %w", prefix, err))
		}
		if len(perrs) > 0 {
			continue
		}
		h, err := RenderHosted(src, naming, opts)
		if err != nil {
			errs = append(errs, profileErrors(prefix+": data."+src.Key, err)...)
			continue
		}
		for _, cm := range append(append([]map[string]any{}, h.ConfigMaps...), h.Status) {
			name := kindName(cm)
			claim(m, src.Namespace+"/"+name, strings.Replace(name, "/", "/"+src.Namespace+"/", 1))
		}
		claim(m, kindName(h.Objects.RuntimeClass), kindName(h.Objects.RuntimeClass))

		base := strings.TrimSuffix(path.Base(m.File), path.Ext(m.File)) + "_nodetuning-" + src.Name
		preview, err := h.Preview(component.GeneratedDir + "/" + base + ".yaml")
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", prefix, err))
			continue
		}
		out.Steps = append(out.Steps, component.StepSpec{
			Step:    NewHostedStep(h),
			File:    component.GeneratedDir + "/" + base + ".step",
			After:   []manifest.ID{m.ID()},
			Preview: preview,
		})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
