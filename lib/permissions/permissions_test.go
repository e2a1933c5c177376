package permissions

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func objects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func TestClusterRole(t *testing.T) {
	objs := objects(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: a}",
		"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i, namespace: a}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old, namespace: a, annotations: {release.openshift.io/delete: \"true\"}}",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, names: {kind: Widget, plural: widgetz}}",
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: rb, namespace: a}",
	)
	got := ClusterRole("payload-apply", objs)
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "delete", "get", "list", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create", "get", "list", "patch"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"create", "get", "list", "patch", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create", "get", "list", "patch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions"}, Verbs: []string{"create", "get", "list", "patch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"example.com"}, Resources: []string{"widgetz"}, Verbs: []string{"create", "get", "list", "patch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"create", "get", "list", "patch"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "roles"}, Verbs: []string{"bind"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"create", "get", "list", "patch"}},
	}
	if got.Name != "payload-apply" || got.Kind != "ClusterRole" || !reflect.DeepEqual(got.Rules, want) {
		out, _ := yaml.Marshal(got)
		t.Errorf("ClusterRole:\n%s", out)
	}
	// The same kinds in another order give the same role.
	rev := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		rev[len(objs)-1-i] = o
	}
	if again := ClusterRole("payload-apply", rev); !reflect.DeepEqual(again.Rules, got.Rules) {
		t.Error("the role depends on the order of the objects")
	}
}

// Extra rules (a component step's) merge into the rules of the objects'
// kinds, by group and resource.
func TestClusterRoleExtraRules(t *testing.T) {
	objs := objects(t, "apiVersion: config.openshift.io/v1\nkind: Ingress\nmetadata: {name: cluster}")
	got := ClusterRole("r", objs,
		rbacv1.PolicyRule{APIGroups: []string{"config.openshift.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"patch"}},
		rbacv1.PolicyRule{APIGroups: []string{"config.openshift.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get"}},
	)
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"create", "get", "list", "patch", "watch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions", "ingresses"}, Verbs: []string{"create", "get", "list", "patch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"patch"}},
	}
	if !reflect.DeepEqual(got.Rules, want) {
		out, _ := yaml.Marshal(got)
		t.Errorf("ClusterRole:\n%s", out)
	}
}
