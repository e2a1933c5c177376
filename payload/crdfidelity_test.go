package payload_test

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/plan"
)

// openSubtrees are the places where an embedded CRD leaves a subtree open
// (x-kubernetes-preserve-unknown-fields) that the real CRD spells out, or
// does not serve a version the real CRD serves, each with why that is
// safe: nothing the embedded payload, a component or a test writes goes
// there, so a real API server would not judge any of it differently. Key:
// "CRD VERSION PATH" or "CRD version VERSION".
var openSubtrees = map[string]string{
	"infrastructures.config.openshift.io v1 v1.spec.platformSpec":                      "per-platform settings (570 lines of schema) nothing here writes: the payload and the components read status.controlPlaneTopology, infrastructureTopology and platform",
	"infrastructures.config.openshift.io v1 v1.status.platformStatus":                  "per-platform status (810 lines of schema) nothing here writes",
	"ingresscontrollers.operator.openshift.io v1 v1.spec.endpointPublishingStrategy":   "publishing settings (260 lines of schema) the ingress component never sets",
	"ingresscontrollers.operator.openshift.io v1 v1.spec.httpHeaders":                  "header policies (156 lines of schema) the ingress component never sets",
	"ingresscontrollers.operator.openshift.io v1 v1.spec.logging":                      "access logging (152 lines of schema) the ingress component never sets",
	"ingresscontrollers.operator.openshift.io v1 v1.spec.tuningOptions":                "HAProxy tuning the ingress component never sets",
	"ingresscontrollers.operator.openshift.io v1 v1.spec.tlsSecurityProfile":           "TLS profiles the ingress component never sets",
	"ingresscontrollers.operator.openshift.io v1 v1.status.endpointPublishingStrategy": "written by the ingress operator, which does not run here",
	"ingresscontrollers.operator.openshift.io v1 v1.status.tlsProfile":                 "written by the ingress operator, which does not run here",
	// Versions the real CRD serves and ours does not.
	"performanceprofiles.performance.openshift.io version v1":       "served through NTO's conversion webhook, which does not run here; the node tuning component reads and writes v2",
	"performanceprofiles.performance.openshift.io version v1alpha1": "served through NTO's conversion webhook, which does not run here; the node tuning component reads and writes v2",
}

// TestEmbeddedCRDsMatchRealPayload: the embedded payload's CRDs validate
// what the real payload's validate, as a real cluster installs them. For
// each selection, every CRD both plans include is compared version by
// version, node by node, on every keyword the API server validates with
// (type, format, pattern, enum, lengths, bounds, required, nullable, list
// and map types, CEL rules, oneOf/anyOf/allOf), and on the properties each
// node declares: a property the real CRD has and ours lacks would be pruned
// by ours, one ours has and the real lacks would be pruned by a real
// server. Descriptions, printer columns and CEL messages are ours to word.
// An open subtree is allowed only where openSubtrees says why. A CRD the
// embedded payload ships for every feature set (no feature-set annotation)
// is compared in the Default selection only.
func TestEmbeddedCRDsMatchRealPayload(t *testing.T) {
	real := os.DirFS(realpayload.Dir(t))
	used := map[string]bool{}
	for _, sel := range []struct{ profile, featureSet string }{
		{"self-managed-high-availability", ""},
		{"self-managed-high-availability", "TechPreviewNoUpgrade"},
	} {
		t.Run(sel.profile+"/"+sel.featureSet, func(t *testing.T) {
			ours := crds(t, plan.Options{Profile: sel.profile, FeatureSet: sel.featureSet})
			theirs := crds(t, plan.Options{Payload: real, Profile: sel.profile, FeatureSet: sel.featureSet})
			names := make([]string, 0, len(ours))
			for name := range ours {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				r, ok := theirs[name]
				if !ok {
					t.Logf("%s: not in the real payload", name)
					continue
				}
				// A CRD the embedded payload ships for every feature set is
				// held to the real Default variant; one it ships per feature
				// set, to that feature set's.
				if sel.featureSet != "" && featureSetOf(ours[name]) == "" {
					continue
				}
				var diffs []string
				compareCRD(name, ours[name], r, &diffs, used)
				for _, d := range diffs {
					t.Errorf("%s: %s", name, d)
				}
			}
		})
	}
	for k := range openSubtrees {
		if !used[k] {
			t.Errorf("openSubtrees[%q]: no such open subtree any more: drop the entry", k)
		}
	}
}

// featureSetOf returns a manifest's release.openshift.io/feature-set
// annotation.
func featureSetOf(obj map[string]any) string {
	annotations, _ := mapAt(obj, "metadata")["annotations"].(map[string]any)
	s, _ := annotations["release.openshift.io/feature-set"].(string)
	return s
}

// crds plans opts and returns its CRDs by name.
func crds(t *testing.T, opts plan.Options) map[string]map[string]any {
	t.Helper()
	p, err := plan.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, m := range p.Objects {
		if m.GVK.Group == "apiextensions.k8s.io" && m.GVK.Kind == "CustomResourceDefinition" {
			out[m.Obj.GetName()] = m.Obj.Object
		}
	}
	return out
}

// compareCRD appends to diffs how ours differs from real.
func compareCRD(name string, ours, real map[string]any, diffs *[]string, used map[string]bool) {
	os, rs := mapAt(ours, "spec"), mapAt(real, "spec")
	for _, k := range []string{"group", "scope", "names"} {
		if !reflect.DeepEqual(os[k], rs[k]) {
			*diffs = append(*diffs, fmt.Sprintf("spec.%s: ours %v, real %v", k, os[k], rs[k]))
		}
	}
	rv := map[string]any{}
	for _, v := range listAt(rs, "versions") {
		v := v.(map[string]any)
		rv[v["name"].(string)] = v
	}
	seen := map[string]bool{}
	for _, v := range listAt(os, "versions") {
		v := v.(map[string]any)
		vn := v["name"].(string)
		seen[vn] = true
		r, ok := rv[vn].(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("version %s: not served by the real CRD", vn))
			continue
		}
		for _, k := range []string{"served", "storage", "subresources"} {
			if !reflect.DeepEqual(v[k], r[k]) {
				*diffs = append(*diffs, fmt.Sprintf("%s %s: ours %v, real %v", vn, k, v[k], r[k]))
			}
		}
		w := walker{crd: name + " " + vn, diffs: diffs, used: used}
		w.node(vn, mapAt(mapAt(v, "schema"), "openAPIV3Schema"), mapAt(mapAt(r, "schema"), "openAPIV3Schema"))
	}
	for _, vn := range sortedKeys(rv) {
		if seen[vn] || rv[vn].(map[string]any)["served"] != true {
			continue
		}
		if key := name + " version " + vn; openSubtrees[key] != "" {
			used[key] = true
			continue
		}
		*diffs = append(*diffs, fmt.Sprintf("version %s: served by the real CRD, not by ours", vn))
	}
}

// validationKeys are the schema keywords the API server validates or
// prunes with, compared node by node (properties, items and
// additionalProperties are walked).
var validationKeys = []string{
	"type", "format", "pattern", "enum", "maxLength", "minLength", "maximum", "minimum",
	"exclusiveMaximum", "exclusiveMinimum", "multipleOf", "maxItems", "minItems", "uniqueItems",
	"maxProperties", "minProperties", "required", "nullable", "default",
	"x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
	"x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
	"x-kubernetes-validations", "oneOf", "anyOf", "allOf", "not",
}

type walker struct {
	crd   string
	diffs *[]string
	used  map[string]bool
}

func (w walker) node(path string, ours, real map[string]any) {
	if real == nil {
		*w.diffs = append(*w.diffs, path+": not in the real schema (a real server prunes it)")
		return
	}
	if open, _ := ours["x-kubernetes-preserve-unknown-fields"].(bool); open && real["x-kubernetes-preserve-unknown-fields"] == nil {
		key := w.crd + " " + path
		if _, ok := openSubtrees[key]; ok {
			w.used[key] = true
			return
		}
		*w.diffs = append(*w.diffs, path+": open in ours (x-kubernetes-preserve-unknown-fields), spelled out in the real CRD")
		return
	}
	for _, k := range validationKeys {
		o, r := normalize(k, ours[k]), normalize(k, real[k])
		if !reflect.DeepEqual(o, r) {
			*w.diffs = append(*w.diffs, fmt.Sprintf("%s: %s: ours %v, real %v", path, k, o, r))
		}
	}
	op, rp := mapAt(ours, "properties"), mapAt(real, "properties")
	for _, k := range sortedKeys(op) {
		w.node(path+"."+k, mapAt(op, k), mapAt(rp, k))
	}
	var missing []string
	for _, k := range sortedKeys(rp) {
		if _, ok := op[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		*w.diffs = append(*w.diffs, fmt.Sprintf("%s: ours prunes what the real CRD keeps: %s", path, strings.Join(missing, ", ")))
	}
	if ours["items"] != nil || real["items"] != nil {
		w.node(path+"[]", mapAt(ours, "items"), mapAt(real, "items"))
	}
	oa, oIsMap := ours["additionalProperties"].(map[string]any)
	ra, rIsMap := real["additionalProperties"].(map[string]any)
	switch {
	case oIsMap && rIsMap:
		w.node(path+"{}", oa, ra)
	case !reflect.DeepEqual(ours["additionalProperties"], real["additionalProperties"]):
		*w.diffs = append(*w.diffs, fmt.Sprintf("%s: additionalProperties: ours %v, real %v", path, ours["additionalProperties"], real["additionalProperties"]))
	}
}

// normalize makes equal what validates the same: required and enum in any
// order, CEL rules without their messages, schemas under oneOf/anyOf/allOf
// without descriptions.
func normalize(key string, v any) any {
	if v == nil {
		return nil
	}
	switch key {
	case "required", "enum":
		list := slices.Clone(v.([]any))
		slices.SortFunc(list, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		return list
	case "x-kubernetes-validations":
		var rules []string
		for _, r := range v.([]any) {
			m := r.(map[string]any)
			rules = append(rules, fmt.Sprintf("%v|%v|%v|%v", m["rule"], m["reason"], m["fieldPath"], m["optionalOldSelf"]))
		}
		sort.Strings(rules)
		return rules
	case "oneOf", "anyOf", "allOf", "not":
		return stripDescriptions(v)
	}
	return v
}

func stripDescriptions(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k != "description" {
				out[k] = stripDescriptions(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = stripDescriptions(x)
		}
		return out
	}
	return v
}

func mapAt(m map[string]any, k string) map[string]any {
	v, _ := m[k].(map[string]any)
	return v
}

func listAt(m map[string]any, k string) []any {
	v, _ := m[k].([]any)
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
