package nodetuning

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

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
// the plan) into generated objects; on a hosted control plane it renders
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
		return renderHosted(all, naming)
	}
	return renderStandalone(all, in.Objects)
}

func isProfile(m *manifest.Manifest) bool {
	return m.GVK == GroupVersionKind
}

// ref prints an object of a manifest as Kind/name or Kind/namespace/name.
func ref(m *manifest.Manifest) string {
	if ns := m.Obj.GetNamespace(); ns != "" {
		return m.GVK.Kind + "/" + ns + "/" + m.Obj.GetName()
	}
	return m.GVK.Kind + "/" + m.Obj.GetName()
}

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

func renderStandalone(all, objects []*manifest.Manifest) (*component.Output, error) {
	out := &component.Output{}
	var errs []error
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
		objs, err := Render(pp)
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
		out.Findings = append(out.Findings, missingCRDs(m, objects)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
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

func renderHosted(all []*manifest.Manifest, naming Naming) (*component.Output, error) {
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
		h, err := RenderHosted(src, naming)
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
