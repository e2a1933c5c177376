package plan

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// GeneratedAnnotation marks an object the tool generated; its value says
// what for.
const GeneratedAnnotation = "payload-apply/generated"

// clusterProfileConfigMap returns openshift-config/cluster-profile with
// data.profile set to the profile in effect, so that the cluster remembers
// its profile (and a later apply or diff against it picks the same one). It
// is placed right after the object that creates the openshift-config
// Namespace, in the same run level and component (its file name sorts after
// that one's); without such an object, at run level 03 of config-operator,
// where the reference payload creates the namespace.
func clusterProfileConfigMap(p *profiles.Profile, objs []*manifest.Manifest) (*manifest.Manifest, error) {
	level, comp := 3, "config-operator"
	for _, m := range objs {
		if m.GVK.Group == "" && m.GVK.Kind == "Namespace" && m.Obj.GetName() == profiles.ConfigMapNamespace {
			if l, c, ok := payload.ParseFileName(m.OriginalFilename); ok {
				level, comp = l, c
			}
			break
		}
	}
	file := fmt.Sprintf("%s/0000_%02d_%s_99_cluster-profile.yaml", component.GeneratedDir, level, comp)
	labels := map[string]any{}
	keys := make([]string, 0, len(p.Labels))
	for k := range p.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		labels[k] = p.Labels[k]
	}
	metadata := map[string]any{
		"name":      profiles.ConfigMapName,
		"namespace": profiles.ConfigMapNamespace,
		"annotations": map[string]any{
			GeneratedAnnotation: "cluster-profile",
			"kubernetes.io/description": "The cluster profile this cluster was installed with. " +
				"payload-apply reads it when no --profile is given.",
		},
	}
	if len(labels) > 0 {
		metadata["labels"] = labels
	}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   metadata,
		"data":       map[string]any{profiles.ConfigMapKey: p.Name},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", file, err)
	}
	m := &manifest.Manifest{File: file}
	if err := m.Manifest.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m.OriginalFilename = file[len(component.GeneratedDir)+1:]
	m.Raw = nil // not kept (see manifest.Manifest)
	return m, nil
}
