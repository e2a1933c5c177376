package nodetuning

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Labels, annotations and the finalizer of the hosted (HyperShift) flow.
const (
	// LabelPerformanceProfileConfig marks a source ConfigMap: "true" when it
	// holds a PerformanceProfile.
	LabelPerformanceProfileConfig = "hypershift.openshift.io/performanceprofile-config"
	// LabelNodePool is both a label (the NodePool's name) and an annotation
	// (its namespace/name) on the source and on every output ConfigMap.
	LabelNodePool = "hypershift.openshift.io/nodePool"
	// LabelPerformanceProfileName carries the profile's name on every output
	// ConfigMap.
	LabelPerformanceProfileName = "hypershift.openshift.io/performanceProfileName"
	// LabelTunedConfig marks the ConfigMap holding the Tuned.
	LabelTunedConfig = "hypershift.openshift.io/tuned-config"
	// LabelMachineConfig marks the ConfigMap holding the MachineConfig (and,
	// with NamingUpstream, also the one holding the KubeletConfig).
	LabelMachineConfig = "hypershift.openshift.io/nto-generated-machine-config"
	// LabelKubeletConfig marks the ConfigMap holding the KubeletConfig
	// (NamingSeed).
	LabelKubeletConfig = "hypershift.openshift.io/nto-generated-kubelet-config"
	// LabelKubeletConfigUpstream marks the ConfigMap holding the
	// KubeletConfig with NamingUpstream, beside LabelMachineConfig.
	LabelKubeletConfigUpstream = "hypershift.openshift.io/kubeletconfig-config"
	// LabelStatus marks the status ConfigMap.
	LabelStatus = "hypershift.openshift.io/nto-generated-performance-profile-status"
	// Finalizer is added to the source ConfigMap so that deleting it first
	// deletes the RuntimeClass, which no owner reference can reach.
	Finalizer = "hypershift.openshift.io/foreground-deletion"
	// StatusKey is the data key of the status ConfigMap.
	StatusKey = "status"
)

// SourceKeys returns the data keys a source ConfigMap may hold its profile
// under: "tuning" (what the upstream operator reads), "tuned" (what the seed
// says the admin writes) and "config" (what the seed says the controller
// extracts).
func SourceKeys() []string { return []string{"tuning", "tuned", "config"} }

// Naming chooses the names, labels and data keys of the hosted outputs.
type Naming string

const (
	// NamingSeed follows the enhancement's static diagram: tuned-<p>
	// (key "tuned"), mc-<p> and kc-<p> (key "config"), <p>-status, where p
	// is the profile's name.
	NamingSeed Naming = "seed"
	// NamingUpstream writes what the node tuning operator ships:
	// tuned-<cm> (key "tuning"), machineconfig-<cm> and kubeletconfig-<cm>
	// (key "config"), status-<cm>, where cm is the source ConfigMap's name.
	NamingUpstream Naming = "upstream"
)

// ParseNaming returns the naming mode s names (--hypershift-naming); "" is
// NamingSeed.
func ParseNaming(s string) (Naming, error) {
	switch Naming(s) {
	case "", NamingSeed:
		return NamingSeed, nil
	case NamingUpstream:
		return NamingUpstream, nil
	}
	return "", fmt.Errorf("hypershift naming %q: want %s or %s", s, NamingSeed, NamingUpstream)
}

// output is one of the embedded ConfigMaps.
type output int

const (
	outTuned output = iota
	outMachineConfig
	outKubeletConfig
	outStatus
)

// layout returns the name, data key and kind labels of an output ConfigMap.
func (n Naming) layout(o output, profile, source string) (name, key string, labels map[string]string) {
	if n == NamingUpstream {
		switch o {
		case outTuned:
			return "tuned-" + source, "tuning", map[string]string{LabelTunedConfig: "true"}
		case outMachineConfig:
			return "machineconfig-" + source, "config", map[string]string{LabelMachineConfig: "true"}
		case outKubeletConfig:
			return "kubeletconfig-" + source, "config", map[string]string{LabelMachineConfig: "true", LabelKubeletConfigUpstream: "true"}
		default:
			return "status-" + source, StatusKey, map[string]string{LabelStatus: "true"}
		}
	}
	switch o {
	case outTuned:
		return "tuned-" + profile, "tuned", map[string]string{LabelTunedConfig: "true"}
	case outMachineConfig:
		return "mc-" + profile, "config", map[string]string{LabelMachineConfig: "true"}
	case outKubeletConfig:
		return "kc-" + profile, "config", map[string]string{LabelKubeletConfig: "true"}
	default:
		return profile + "-status", StatusKey, map[string]string{LabelStatus: "true"}
	}
}

// Source is a hosted profile: a ConfigMap labelled
// hypershift.openshift.io/performanceprofile-config=true and the
// PerformanceProfile it holds.
type Source struct {
	// Namespace and Name identify the ConfigMap (the hosted control plane
	// namespace, where the outputs go too).
	Namespace, Name string
	// Key is the data key the profile came from (one of SourceKeys) and
	// Data its text.
	Key, Data string
	// NodePool is the NodePool's name and NodePoolNamespacedName its
	// namespace/name, from the ConfigMap's hypershift.openshift.io/nodePool
	// annotation (and label).
	NodePool, NodePoolNamespacedName string
	// Profile is the decoded profile (not yet validated).
	Profile *PerformanceProfile
}

// IsSource reports whether an object is a source ConfigMap.
func IsSource(m *manifest.Manifest) bool {
	return m.GVK.Group == "" && m.GVK.Kind == "ConfigMap" && m.Obj.GetLabels()[LabelPerformanceProfileConfig] == "true"
}

// ParseSource reads a source ConfigMap: the profile under exactly one of
// SourceKeys, and the NodePool from the annotation
// hypershift.openshift.io/nodePool ("namespace/name" or "name"; required),
// which the label of the same key, when present, must agree with. Every
// problem is returned, each naming the field.
func ParseSource(cm *manifest.Manifest) (*Source, []error) {
	src := &Source{Namespace: cm.Obj.GetNamespace(), Name: cm.Obj.GetName()}
	var errs []error
	if src.Namespace == "" {
		errs = append(errs, errors.New("metadata.namespace: required (the hosted control plane namespace)"))
	}

	ann, hasAnn := cm.Obj.GetAnnotations()[LabelNodePool]
	label, hasLabel := cm.Obj.GetLabels()[LabelNodePool]
	switch {
	case !hasAnn || strings.TrimSpace(ann) == "":
		errs = append(errs, fmt.Errorf("metadata.annotations[%q]: required (the NodePool as namespace/name)", LabelNodePool))
	default:
		src.NodePoolNamespacedName = ann
		src.NodePool = ann
		if _, name, ok := strings.Cut(ann, "/"); ok {
			src.NodePool = name
		}
		if msgs := validation.IsValidLabelValue(src.NodePool); len(msgs) > 0 || src.NodePool == "" {
			errs = append(errs, fmt.Errorf("metadata.annotations[%q] %q: the NodePool name is not a label value: %s", LabelNodePool, ann, strings.Join(msgs, "; ")))
		}
		if hasLabel && label != src.NodePool {
			errs = append(errs, fmt.Errorf("metadata.labels[%q] %q: disagrees with the annotation %q", LabelNodePool, label, ann))
		}
	}

	data, _ := cm.Obj.Object["data"].(map[string]any)
	var keys []string
	for _, k := range SourceKeys() {
		if _, ok := data[k]; ok {
			keys = append(keys, k)
		}
	}
	switch len(keys) {
	case 0:
		errs = append(errs, fmt.Errorf("data: want the PerformanceProfile under one of the keys %s", strings.Join(SourceKeys(), ", ")))
		return src, errs
	case 1:
	default:
		errs = append(errs, fmt.Errorf("data: holds %s: want exactly one of them", strings.Join(keys, " and ")))
		return src, errs
	}
	src.Key = keys[0]
	text, ok := data[src.Key].(string)
	if !ok {
		errs = append(errs, fmt.Errorf("data.%s: not a string", src.Key))
		return src, errs
	}
	src.Data = text
	pp, err := decodeEmbedded(text)
	if err != nil {
		errs = append(errs, fmt.Errorf("data.%s: %w", src.Key, err))
		return src, errs
	}
	src.Profile = pp
	if msgs := validation.IsValidLabelValue(pp.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("data.%s: %s/%s: metadata.name: not a label value, so it cannot label the outputs: %s", src.Key, GroupVersionKind.Kind, pp.Name, strings.Join(msgs, "; ")))
	}
	return src, errs
}

// decodeEmbedded decodes the one PerformanceProfile a ConfigMap holds.
func decodeEmbedded(text string) (*PerformanceProfile, error) {
	ms, err := manifest.Parse("", []byte(text), manifest.ParseOptions{})
	if err != nil {
		return nil, err
	}
	if len(ms) != 1 {
		return nil, fmt.Errorf("holds %d objects, want one PerformanceProfile", len(ms))
	}
	return Decode(ms[0].Obj.Object)
}

// Hosted is what a hosted profile renders to.
type Hosted struct {
	// Source is the source ConfigMap and its profile.
	Source *Source
	// Naming is the naming mode of the outputs.
	Naming Naming
	// Objects are the rendered MachineConfig, KubeletConfig, Tuned and
	// RuntimeClass.
	Objects *Objects
	// ConfigMaps are the ConfigMaps embedding the Tuned, the MachineConfig
	// and the KubeletConfig, in that order, with an owner reference to the
	// source ConfigMap that lacks its uid.
	ConfigMaps []map[string]any
	// Status is the status ConfigMap without its data.
	Status map[string]any
}

// RenderHosted validates the source's profile and renders the outputs for a
// cluster as opts describe it (opts.Pool is nil on a hosted control plane:
// the KubeletConfig selects its pool by the profile's pool selector or its
// node selector's role, as NTO's HyperShift controller does). An invalid
// profile gives an *InvalidError.
func RenderHosted(src *Source, naming Naming, opts Options) (*Hosted, error) {
	objs, err := Render(src.Profile, opts)
	if err != nil {
		return nil, err
	}
	h := &Hosted{Source: src, Naming: naming, Objects: objs}
	for _, e := range []struct {
		o   output
		obj map[string]any
	}{{outTuned, objs.Tuned}, {outMachineConfig, objs.MachineConfig}, {outKubeletConfig, objs.KubeletConfig}} {
		text, err := yaml.Marshal(e.obj)
		if err != nil {
			return nil, fmt.Errorf("%s: marshal: %w", kindName(e.obj), err)
		}
		name, key, _ := naming.layout(e.o, src.Profile.Name, src.Name)
		cm := h.configMap(e.o)
		cm["data"] = map[string]any{key: string(text)}
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			return nil, fmt.Errorf("ConfigMap %s: not a name: %s", name, strings.Join(msgs, "; "))
		}
		h.ConfigMaps = append(h.ConfigMaps, cm)
	}
	h.Status = h.configMap(outStatus)
	return h, nil
}

// configMap returns an output ConfigMap without data.
func (h *Hosted) configMap(o output) map[string]any {
	name, _, kindLabels := h.Naming.layout(o, h.Source.Profile.Name, h.Source.Name)
	labels := map[string]any{
		LabelPerformanceProfileName: h.Source.Profile.Name,
		LabelNodePool:               h.Source.NodePool,
	}
	for k, v := range kindLabels {
		labels[k] = v
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       h.Source.Namespace,
			"labels":          labels,
			"annotations":     map[string]any{LabelNodePool: h.Source.NodePoolNamespacedName},
			"ownerReferences": []any{ownerReference(h.Source.Name, "")},
		},
	}
}

// ownerReference is the controller reference to the source ConfigMap; an
// empty uid is left out (render's preview).
func ownerReference(name, uid string) map[string]any {
	ref := map[string]any{
		"apiVersion":         "v1",
		"kind":               "ConfigMap",
		"name":               name,
		"controller":         true,
		"blockOwnerDeletion": true,
	}
	if uid != "" {
		ref["uid"] = uid
	}
	return ref
}

// statusFor returns the status the step reports with the given conditions.
func (h *Hosted) statusFor(conds []Condition) *PerformanceProfileStatus {
	return &PerformanceProfileStatus{
		Conditions:   conds,
		Tuned:        TunedNamespace + "/" + TunedName(h.Source.Profile.Name),
		RuntimeClass: RuntimeClassName(h.Source.Profile.Name),
	}
}

// Preview returns the objects the step writes, as render shows them: the
// embedded ConfigMaps, the status ConfigMap with the conditions of a
// successful apply (without times, which the apply sets), and the
// RuntimeClass. Owner references have no uid. file names their file.
func (h *Hosted) Preview(file string) ([]*manifest.Manifest, error) {
	status := h.Status
	text, err := marshalStatus(h.statusFor(availableConditions()))
	if err != nil {
		return nil, err
	}
	status = copyMap(status)
	status["data"] = map[string]any{StatusKey: text}
	objs := append(append([]map[string]any{}, h.ConfigMaps...), status, h.Objects.RuntimeClass)
	out := make([]*manifest.Manifest, 0, len(objs))
	for i, obj := range objs {
		m, err := manifest.FromObject(file, i, obj)
		if err != nil {
			return nil, fmt.Errorf("%s#%d: %w", file, i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// marshalStatus serializes a status for the status ConfigMap.
func marshalStatus(st *PerformanceProfileStatus) (string, error) {
	text, err := yaml.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("status: marshal: %w", err)
	}
	return string(text), nil
}

// kindName prints an object built of maps as Kind/name.
func kindName(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v", obj["kind"], md["name"])
}

// copyMap copies the top level of a map.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
