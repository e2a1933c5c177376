// Package gencomplete makes a complete release of a partial payload. The
// real payload (../shared/testdata/ocp-payload) is what 21 operator
// repositories ship: its objects use kinds that other operators define
// (monitoring's ServiceMonitor and PrometheusRule, the cloud credential
// operator's CredentialsRequest, ...) and namespaces that other operators
// make, so on a bare API server those objects fail. Write copies a payload
// and adds what those operators would bring: a CustomResourceDefinition for
// every kind that neither kube-apiserver nor a CRD of the payload serves,
// and a Namespace for every namespace no manifest of the payload creates,
// each file at run level 00, included in every profile the payload names.
//
// A CRD's schema is derived from the payload's objects of its kind, the
// way the real ones constrain them: the top-level fields that every object
// to apply (not annotated for deletion) sets are required (spec, for
// ServiceMonitor and PrometheusRule, as in the monitoring operator's own
// CRDs); everything else is open (x-kubernetes-preserve-unknown-fields).
// Scope: namespaced when any object of the kind names a namespace.
//
// The tests of complete releases (make test-complete) and hack/gen-complete
// use it.
//
// May import: payload, lib/manifest.
// Cluster I/O: none.
package gencomplete

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// The files Write adds, in release-manifests/.
const (
	CRDFile       = "0000_00_zz-complete_00_crds.yaml"
	NamespaceFile = "0000_00_zz-complete_01_namespaces.yaml"
)

// Kind is a kind Write made a CustomResourceDefinition for.
type Kind struct {
	schema.GroupKind
	// Versions are the versions the payload's objects use; Namespaced
	// the scope; Required the top-level fields the schema requires.
	Versions   []string
	Namespaced bool
	Required   []string
	// Objects counts the payload's objects of the kind.
	Objects int
}

// Added is what Write added.
type Added struct {
	Kinds      []Kind
	Namespaces []string
}

// Write writes the payload at src, with what a complete release adds, to
// dst, which must not exist yet or be empty.
func Write(ctx context.Context, src, dst string) (*Added, error) {
	p, err := payload.Load(ctx, os.DirFS(src), payload.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("gencomplete: %s: %w", src, err)
	}
	added, crds, namespaces := complete(p)
	if err := copyPayload(src, dst); err != nil {
		return nil, err
	}
	for name, data := range map[string]string{CRDFile: crds, NamespaceFile: namespaces} {
		if data == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, "release-manifests", name), []byte(data), 0o644); err != nil {
			return nil, err
		}
	}
	return added, nil
}

// served reports whether kube-apiserver serves gvk with no CRD: the
// built-in kinds, CustomResourceDefinitions and APIServices.
func served(gvk schema.GroupVersionKind) bool {
	return scheme.Scheme.Recognizes(gvk) || gvk.Group == "apiextensions.k8s.io" || gvk.Group == "apiregistration.k8s.io"
}

// complete returns what p lacks, as YAML streams of CRDs and Namespaces.
func complete(p *payload.Payload) (*Added, string, string) {
	defined := map[schema.GroupKind]bool{}
	var all []*manifest.Manifest
	profiles := map[string]bool{}
	for i := range p.Files {
		for j := range p.Files[i].Manifests {
			m := &p.Files[i].Manifests[j]
			all = append(all, m)
			for k, v := range m.Obj.GetAnnotations() {
				if strings.HasPrefix(k, manifest.IncludePrefix) && v == "true" {
					profiles[k] = true
				}
			}
			if m.GVK.GroupKind() == crdGK && !m.IsDelete() {
				group, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "group")
				kind, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "names", "kind")
				defined[schema.GroupKind{Group: group, Kind: kind}] = true
			}
		}
	}
	// Per profile (inclusion annotation), the namespaces its objects are
	// in and those its Namespaces create.
	needed, created := map[string]map[string]bool{}, map[string]map[string]bool{}
	for _, m := range all {
		if m.IsDelete() {
			continue
		}
		for k := range profiles {
			if m.Obj.GetAnnotations()[k] != "true" {
				continue
			}
			switch {
			case m.GVK.GroupKind() == schema.GroupKind{Kind: "Namespace"}:
				add(created, m.Obj.GetName(), k)
			case m.Obj.GetNamespace() != "":
				add(needed, m.Obj.GetNamespace(), k)
			}
		}
	}
	kinds := map[schema.GroupKind]*Kind{}
	fields := map[schema.GroupKind]map[string]int{}
	applied := map[schema.GroupKind]int{}
	for _, m := range all {
		gvk := m.GVK
		if served(gvk) || defined[gvk.GroupKind()] || gvk.Kind == "" {
			continue
		}
		k := kinds[gvk.GroupKind()]
		if k == nil {
			k = &Kind{GroupKind: gvk.GroupKind()}
			kinds[gvk.GroupKind()] = k
			fields[gvk.GroupKind()] = map[string]int{}
		}
		k.Objects++
		if !slices.Contains(k.Versions, gvk.Version) {
			k.Versions = append(k.Versions, gvk.Version)
		}
		k.Namespaced = k.Namespaced || m.Obj.GetNamespace() != ""
		if m.IsDelete() {
			continue
		}
		applied[gvk.GroupKind()]++
		for f := range m.Obj.Object {
			switch f {
			case "apiVersion", "kind", "metadata", "status":
			default:
				fields[gvk.GroupKind()][f]++
			}
		}
	}
	added := &Added{}
	for gk, k := range kinds {
		for f, n := range fields[gk] {
			if n == applied[gk] {
				k.Required = append(k.Required, f)
			}
		}
		sort.Strings(k.Required)
		sort.Strings(k.Versions)
		added.Kinds = append(added.Kinds, *k)
	}
	sort.Slice(added.Kinds, func(i, j int) bool { return added.Kinds[i].String() < added.Kinds[j].String() })
	everywhere := map[string]string{}
	for k := range profiles {
		everywhere[k] = "true"
	}
	var crds, namespaces []string
	for _, k := range added.Kinds {
		crds = append(crds, crdYAML(k, everywhere))
	}
	for _, ns := range slices.Sorted(maps.Keys(needed)) {
		// Included in the profiles whose objects need it and whose
		// Namespaces do not create it (another would be a duplicate).
		include := map[string]string{}
		for k := range needed[ns] {
			if !created[ns][k] {
				include[k] = "true"
			}
		}
		if len(include) == 0 {
			continue
		}
		added.Namespaces = append(added.Namespaces, ns)
		namespaces = append(namespaces, toYAML(map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ns, "annotations": include}}))
	}
	return added, strings.Join(crds, "---\n"), strings.Join(namespaces, "---\n")
}

var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

func add(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

// crdYAML is the CustomResourceDefinition of k.
func crdYAML(k Kind, include map[string]string) string {
	plural := plural(strings.ToLower(k.Kind))
	annotations := map[string]string{"api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1111"}
	for a, v := range include {
		annotations[a] = v
	}
	props := map[string]any{}
	for _, f := range k.Required {
		props[f] = map[string]any{"x-kubernetes-preserve-unknown-fields": true}
	}
	root := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	if len(k.Required) > 0 {
		root["properties"], root["required"] = props, k.Required
	}
	var versions []any
	for i, v := range k.Versions {
		versions = append(versions, map[string]any{"name": v, "served": true, "storage": i == len(k.Versions)-1,
			"schema": map[string]any{"openAPIV3Schema": root}})
	}
	scope := "Cluster"
	if k.Namespaced {
		scope = "Namespaced"
	}
	return toYAML(map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + k.Group, "annotations": annotations},
		"spec": map[string]any{"group": k.Group, "scope": scope, "versions": versions,
			"names": map[string]any{"kind": k.Kind, "plural": plural, "singular": strings.ToLower(k.Kind), "listKind": k.Kind + "List"}},
	})
}

// plural is the English plural of a lower-case kind, as the operators'
// own CRDs name them.
func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && !strings.HasSuffix(s, "ay") && !strings.HasSuffix(s, "ey") && !strings.HasSuffix(s, "oy"):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and lists: always encodable
	}
	return string(b)
}

// copyPayload copies src's manifests/ and release-manifests/ to dst.
func copyPayload(src, dst string) error {
	root := os.DirFS(src)
	return fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dir, _ := path.Split(p)
		if d.IsDir() || (dir != "manifests/" && dir != "release-manifests/") {
			return nil
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
