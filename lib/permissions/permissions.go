// Package permissions derives the RBAC ClusterRole that applying a set of
// manifests needs: the least the apply engine (lib/resourceapply) asks of
// the API server, kind by kind.
//
// May import: lib/manifest.
// Cluster I/O: none.
package permissions

import (
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// What the apply engine does with an object of a kind, and the RBAC verbs
// that takes:
//
//   - get: read the live object before writing (and status reads it);
//   - create: create-only objects and ClusterOperators are created;
//   - patch: server-side apply is a PATCH (also the CRD "nudge");
//   - list: --wait lists a kind with many objects to wait on (cluster-wide);
//   - watch: a CustomResourceDefinition is watched until Established;
//   - delete: objects annotated release.openshift.io/delete.
var (
	applyVerbs  = []string{"get", "list", "create", "patch"}
	crdVerbs    = []string{"watch"}
	deleteVerbs = []string{"delete"}
	// A role that creates roles and bindings granting what it does not
	// hold itself needs escalate and bind (the API server's RBAC
	// escalation check); payloads grant broad permissions to operators.
	rbacVerbs = []string{"bind", "escalate"}
)

// Always returns the rules every apply and status needs whatever the payload:
// the cluster's profile is read from ConfigMap
// openshift-config/cluster-profile and written back by the plan (its
// kind's rule comes from the plan), status reads ClusterOperators (and
// the record lists their Upgradeable conditions), and the cluster's
// record, ClusterVersion "version", is read, made (server-side apply:
// patch) and its status written (update of clusterversions/status). Its
// CustomResourceDefinition comes from the payload when the cluster lacks
// it: get, create and patch on customresourcedefinitions (with watch, to
// wait for it).
func Always() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "create", "patch", "watch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions"}, Verbs: []string{"get", "list", "create", "patch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions/status"}, Verbs: []string{"update"}},
	}
}

// ClusterRole returns the ClusterRole named name that lets the apply engine
// apply objs and status read them: for every group, the resources of the
// objects' kinds with the verbs above. A kind's resource is taken from a
// CustomResourceDefinition among objs when one defines it, else guessed
// from the kind as kubectl does (Deployment: deployments, Ingress:
// ingresses). extra are further rules merged in, such as what components'
// apply-time steps need (component.RuleStep). Rules are sorted by group;
// the result is the same for the same kinds and extra rules.
func ClusterRole(name string, objs []*unstructured.Unstructured, extra ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	plurals := crdPlurals(objs)
	verbs := map[schema.GroupResource]map[string]bool{}
	add := func(gr schema.GroupResource, vs ...string) {
		if verbs[gr] == nil {
			verbs[gr] = map[string]bool{}
		}
		for _, v := range vs {
			verbs[gr][v] = true
		}
	}
	for _, r := range append(Always(), extra...) {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				add(schema.GroupResource{Group: g, Resource: res}, r.Verbs...)
			}
		}
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		gr := resourceOf(gvk, plurals)
		add(gr, applyVerbs...)
		if gr.Group == "apiextensions.k8s.io" && gr.Resource == "customresourcedefinitions" {
			add(gr, crdVerbs...)
		}
		if o.GetAnnotations()[manifest.DeleteAnnotation] == "true" {
			add(gr, deleteVerbs...)
		}
		if gr.Group == rbacv1.GroupName {
			switch gr.Resource {
			case "clusterroles", "roles":
				add(gr, rbacVerbs...)
			case "clusterrolebindings", "rolebindings":
				// Binding a role one does not hold needs bind on the role.
				add(schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}, "bind")
				if gr.Resource == "rolebindings" {
					add(schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"}, "bind")
				}
			}
		}
	}
	// One rule per group and verb set, resources sorted.
	type key struct{ group, verbs string }
	byKey := map[key]*rbacv1.PolicyRule{}
	for gr, vs := range verbs {
		list := make([]string, 0, len(vs))
		for v := range vs {
			list = append(list, v)
		}
		sort.Strings(list)
		k := key{gr.Group, strings.Join(list, ",")}
		r := byKey[k]
		if r == nil {
			r = &rbacv1.PolicyRule{APIGroups: []string{gr.Group}, Verbs: list}
			byKey[k] = r
		}
		r.Resources = append(r.Resources, gr.Resource)
	}
	rules := make([]rbacv1.PolicyRule, 0, len(byKey))
	for _, r := range byKey {
		sort.Strings(r.Resources)
		rules = append(rules, *r)
	}
	sort.Slice(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if a.APIGroups[0] != b.APIGroups[0] {
			return a.APIGroups[0] < b.APIGroups[0]
		}
		return a.Resources[0] < b.Resources[0]
	})
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      rules,
	}
}

// crdPlurals maps the kinds CustomResourceDefinitions among objs define to
// their resources.
func crdPlurals(objs []*unstructured.Unstructured) map[schema.GroupKind]string {
	out := map[schema.GroupKind]string{}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" || o.GroupVersionKind().Group != "apiextensions.k8s.io" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
		if kind != "" && plural != "" {
			out[schema.GroupKind{Group: group, Kind: kind}] = plural
		}
	}
	return out
}

func resourceOf(gvk schema.GroupVersionKind, plurals map[schema.GroupKind]string) schema.GroupResource {
	if p, ok := plurals[gvk.GroupKind()]; ok {
		return schema.GroupResource{Group: gvk.Group, Resource: p}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}
