package ingress_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payload-apply/payload-apply/internal/golden"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/plan"
)

// ingressView prints what the ingress component contributed to a plan: the
// Ingress config and IngressController objects, the steps and the warnings.
func ingressView(t *testing.T, p *plan.Plan) string {
	t.Helper()
	var b bytes.Buffer
	for _, m := range p.Objects {
		if m.GVK.Kind != "IngressController" && !(m.GVK.Kind == "Ingress" && m.GVK.Group == "config.openshift.io") {
			continue
		}
		data, err := plan.MarshalObject(m)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s", m.Position(), data)
	}
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "# step %s at %s after %v\n", s.Step.Name(), s.File, s.After)
	}
	for _, f := range p.Findings {
		fmt.Fprintf(&b, "# %s\n", f)
	}
	return b.String()
}

func clusterConfig(t *testing.T, name string) *component.ClusterConfig {
	t.Helper()
	path := filepath.Join("testdata", "clusters", name+".yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := component.ParseClusterConfig(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRenderClusterConfig: render --cluster-config for single-node on
// platform None, single-node with workers, a three-node cluster and a
// HyperShift (External) control plane.
func TestRenderClusterConfig(t *testing.T) {
	for _, name := range []string{"sno-none", "sno-workers", "three-node", "hypershift"} {
		t.Run(name, func(t *testing.T) {
			p, err := plan.Build(context.Background(), plan.Options{ClusterConfig: clusterConfig(t, name)})
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", filepath.FromSlash(t.Name())+".golden"), ingressView(t, p))
		})
	}
}

// TestAdminIngressControllerWins: an IngressController in --extra-manifests
// keeps every field the admin set; the component fills only what is unset.
func TestAdminIngressControllerWins(t *testing.T) {
	header := "apiVersion: operator.openshift.io/v1\nkind: IngressController\nmetadata:\n  name: default\n  namespace: openshift-ingress-operator\nspec:\n"
	tests := []struct {
		name string
		spec string
		want []string
		not  []string
	}{
		{name: "replicas set", spec: "  replicas: 3\n",
			want: []string{"replicas: 3", "node-role.kubernetes.io/master: \"\"", "# Source: extra/99-ingresscontroller.yaml#0"}},
		{name: "node selector set", spec: "  nodePlacement:\n    nodeSelector:\n      matchLabels:\n        ingress: \"yes\"\n",
			want: []string{"replicas: 1", "ingress: \"yes\""}, not: []string{"node-role.kubernetes.io/master"}},
		{name: "tolerations only", spec: "  nodePlacement:\n    tolerations:\n    - key: special\n      operator: Exists\n",
			want: []string{"key: special", "node-role.kubernetes.io/master: \"\"", "replicas: 1"}},
		{name: "everything set", spec: "  replicas: 5\n  nodePlacement:\n    nodeSelector:\n      matchLabels:\n        zone: a\n",
			want: []string{"replicas: 5", "zone: a"}, not: []string{"node-role.kubernetes.io/master", "payload-apply.openshift.io/default-placement"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			extra := fstest.MapFS{"99-ingresscontroller.yaml": {Data: []byte(header + tc.spec)}}
			p, err := plan.Build(context.Background(), plan.Options{ClusterConfig: clusterConfig(t, "sno-none"), ExtraManifests: extra})
			if err != nil {
				t.Fatal(err)
			}
			got := ingressView(t, p)
			if n := strings.Count(got, "kind: IngressController"); n != 1 {
				t.Fatalf("%d IngressControllers in the plan, want 1:\n%s", n, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("has %q:\n%s", n, got)
				}
			}
		})
	}
}

// TestNoIngressOperatorNoDefault: a profile without the ingress operator
// (hypershift) gets no IngressController.
func TestNoIngressOperatorNoDefault(t *testing.T) {
	p, err := plan.Build(context.Background(), plan.Options{Profile: "hypershift"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ingressView(t, p); strings.Contains(got, "kind: IngressController") {
		t.Errorf("hypershift got an IngressController:\n%s", got)
	}
}
