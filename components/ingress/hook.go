package ingress

import (
	"context"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Files of the objects the hook generates; their names place them in the
// task graph: the Ingress config with the config objects, its status step
// right after it, the default IngressController after the ingress operator.
const (
	IngressConfigFile     = "0000_05_config-operator_90_ingress-cluster.yaml"
	PlacementStepFile     = "0000_05_config-operator_91_ingress-default-placement.step"
	IngressControllerFile = "0000_50_cluster-ingress-operator_90_default-ingresscontroller.yaml"
)

// Objects the component reads and writes.
var (
	ingressControllerCRD = manifest.ID{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "ingresscontrollers.operator.openshift.io"}
	ingressConfigCRD     = manifest.ID{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "ingresses.config.openshift.io"}
	// IngressConfigID is the cluster's Ingress config object.
	IngressConfigID = manifest.ID{Group: configv1.GroupName, Kind: "Ingress", Name: "cluster"}
	// DefaultIngressControllerID is the default IngressController.
	DefaultIngressControllerID = manifest.ID{Group: "operator.openshift.io", Kind: "IngressController", Namespace: "openshift-ingress-operator", Name: "default"}
)

// Hook renders the ingress component. The zero value is ready to use.
type Hook struct{}

var _ component.Hook = Hook{}

// Name returns "ingress".
func (Hook) Name() string { return "ingress" }

// Render adds, when the plan installs the Ingress config CRD, the Ingress
// config object "cluster" (spec from --cluster-config; status cannot be
// created with an object, so the placement is written by a Step after it
// exists), and, when the plan installs the ingress operator and the control
// plane is not External, the default IngressController with explicit
// spec.replicas and spec.nodePlacement.nodeSelector. An admin's
// IngressController openshift-ingress-operator/default in --extra-manifests
// wins: the hook fills only the fields it leaves unset.
func (Hook) Render(ctx context.Context, in *component.Input) (*component.Output, error) {
	out := &component.Output{}
	has := func(id manifest.ID) *manifest.Manifest {
		for _, list := range [][]*manifest.Manifest{in.Objects, in.Extra} {
			for _, m := range list {
				if m.ID() == id {
					return m
				}
			}
		}
		return nil
	}
	infra := in.Cluster.Infrastructure
	p := Decide(infra, in.Cluster.PlatformType(), in.Cluster.Ingress)
	where := in.Cluster.File
	if where == "" {
		where = "profile " + in.Profile()
	}
	for _, w := range p.Warnings {
		out.Findings = append(out.Findings, manifest.Finding{File: where, Doc: -1, Severity: manifest.SeverityWarning, Message: w})
	}

	if has(ingressConfigCRD) != nil {
		if has(IngressConfigID) == nil {
			m, err := component.Generated(IngressConfigFile, 0, ingressConfigObject(in.Cluster.Objects[IngressConfigID]))
			if err != nil {
				return nil, err
			}
			out.Add = append(out.Add, m)
		}
		out.Steps = append(out.Steps, component.StepSpec{
			Step:  &PlacementStep{Placement: p.DefaultPlacement},
			File:  component.GeneratedDir + "/" + PlacementStepFile,
			After: []manifest.ID{IngressConfigID},
		})
	}

	if has(ingressControllerCRD) == nil {
		return out, nil
	}
	admin := has(DefaultIngressControllerID)
	if admin != nil && admin.File != "" && isExtra(in, admin) {
		merged, changed, err := fillDefaults(admin, p)
		if err != nil {
			return nil, err
		}
		if changed {
			out.Remove = append(out.Remove, DefaultIngressControllerID)
			out.Add = append(out.Add, merged)
		}
		return out, nil
	}
	if admin != nil {
		// The payload itself ships a default IngressController: leave it.
		return out, nil
	}
	if !p.RenderDefault {
		out.Findings = append(out.Findings, manifest.Finding{File: where, Doc: -1, Severity: manifest.SeverityWarning,
			Message: "no default IngressController rendered: the control plane is External, so there is no control-plane node to host routers"})
		return out, nil
	}
	m, err := component.Generated(IngressControllerFile, 0, defaultIngressController(p))
	if err != nil {
		return nil, err
	}
	out.Add = append(out.Add, m)
	return out, nil
}

func isExtra(in *component.Input, m *manifest.Manifest) bool {
	for _, e := range in.Extra {
		if e == m {
			return true
		}
	}
	return false
}

// defaultIngressController renders openshift-ingress-operator/default.
func defaultIngressController(p Placement) map[string]any {
	return map[string]any{
		"apiVersion": "operator.openshift.io/v1",
		"kind":       "IngressController",
		"metadata": map[string]any{
			"name":      DefaultIngressControllerID.Name,
			"namespace": DefaultIngressControllerID.Namespace,
			"annotations": map[string]any{
				"payload-apply.openshift.io/default-placement": string(p.Effective),
			},
		},
		"spec": map[string]any{
			"replicas": int64(p.Replicas),
			"nodePlacement": map[string]any{
				"nodeSelector": map[string]any{"matchLabels": stringMap(p.NodeSelector)},
			},
		},
	}
}

// fillDefaults returns the admin's IngressController with spec.replicas and
// spec.nodePlacement.nodeSelector filled where the admin left them unset.
func fillDefaults(admin *manifest.Manifest, p Placement) (*manifest.Manifest, bool, error) {
	obj := admin.Obj.DeepCopy()
	changed := false
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); !found {
		if err := unstructured.SetNestedField(obj.Object, int64(p.Replicas), "spec", "replicas"); err != nil {
			return nil, false, fmt.Errorf("%s: %s: %w", admin.Position(), admin.ID(), err)
		}
		changed = true
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "nodePlacement", "nodeSelector"); !found {
		if err := unstructured.SetNestedField(obj.Object, map[string]any{"matchLabels": stringMap(p.NodeSelector)}, "spec", "nodePlacement", "nodeSelector"); err != nil {
			return nil, false, fmt.Errorf("%s: %s: %w", admin.Position(), admin.ID(), err)
		}
		changed = true
	}
	if !changed {
		return admin, false, nil
	}
	m, err := manifest.FromObject(admin.File, admin.Doc, obj.Object)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", admin.Position(), err)
	}
	return m, true, nil
}

// ingressConfigObject is the Ingress config "cluster": the spec as written
// in --cluster-config (status dropped: the step writes it), else empty.
func ingressConfigObject(given *manifest.Manifest) map[string]any {
	spec := map[string]any{}
	if given != nil {
		if s, ok := given.Obj.DeepCopy().Object["spec"].(map[string]any); ok {
			spec = s
		}
	}
	return map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       "Ingress",
		"metadata": map[string]any{
			"name": "cluster",
			// The installer's object: created once; the admin may edit its spec later.
			"annotations": map[string]any{"release.openshift.io/create-only": "true"},
		},
		"spec": spec,
	}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
