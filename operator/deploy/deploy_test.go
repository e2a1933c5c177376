package deploy_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/internal/golden"
	"github.com/payload-apply/payload-apply/operator/deploy"
)

func options() deploy.Options {
	o := deploy.DefaultOptions()
	o.Image = "quay.io/example/payload-apply:v1"
	o.Args = []string{"operator", "--metrics-bind-address=:9099"}
	o.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}
	o.LeaseRules = []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}}}
	return o
}

func render(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var b strings.Builder
	for i, obj := range objs {
		out, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(out)
	}
	return b.String()
}

func TestObjects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*deploy.Options)
	}{
		{name: "in-cluster", change: func(*deploy.Options) {}},
		{name: "hypershift", change: func(o *deploy.Options) {
			o.KubeconfigSecret = "hosted-kubeconfig"
			o.PayloadImage = "quay.io/example/release:4.22.0"
			o.Args = append(o.Args, "--kubeconfig="+deploy.KubeconfigMountPath+"/"+deploy.KubeconfigKey, "--payload="+deploy.PayloadMountPath)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options()
			tc.change(&o)
			objs, err := deploy.Objects(o)
			if err != nil {
				t.Fatal(err)
			}
			golden.AssertTestdata(t, "objects.yaml", render(t, objs))
		})
	}
}

func TestObjectsRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*deploy.Options)
		want   string
	}{
		{"no image", func(o *deploy.Options) { o.Image = "" }, "image is required"},
		{"no replicas", func(o *deploy.Options) { o.Replicas = 0 }, "replicas 0"},
		{"a bad port", func(o *deploy.Options) { o.MetricsPort = 70000 }, "metrics port 70000"},
		{"no rules", func(o *deploy.Options) { o.Rules = nil }, "rules of the managed cluster"},
		{"a bad request", func(o *deploy.Options) { o.MemoryRequest = "lots" }, `memory request "lots"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options()
			tc.change(&o)
			if _, err := deploy.Objects(o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Objects: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
