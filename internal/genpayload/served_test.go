package genpayload_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/genpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What an apply of a generated payload to a bare API server may leave
// failed, as an apply of the real payload does: the kinds whose CRDs come
// with components that install them later (the monitoring stack, the cloud
// credential operator). Everything else must apply, so that a second apply
// writes nothing.
var leftToCluster = map[string]bool{
	"monitoring.coreos.com/ServiceMonitor":            true,
	"monitoring.coreos.com/PrometheusRule":            true,
	"cloudcredential.openshift.io/CredentialsRequest": true,
}

// builtIn says whether the API server serves group itself.
func builtIn(group string) bool {
	switch group {
	case "", "apps", "batch", "policy", "autoscaling":
		return true
	}
	return strings.HasSuffix(group, ".k8s.io")
}

func load(t *testing.T, opts genpayload.Options) *payload.Payload {
	t.Helper()
	p, err := payload.Load(context.Background(), mapFS(genpayload.Generate(opts)), payload.LoadOptions{KeepData: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var celField = regexp.MustCompile(`\b(self|oldSelf)\.([A-Za-z_][A-Za-z0-9_]*)`)

// checkRules walks an OpenAPI schema: every x-kubernetes-validations rule
// names only properties of the schema it is attached to (CEL's self is
// that object), and transition rules (oldSelf) sit only where the server
// can pair an object with its old value (not below the items of a list
// that is not a map).
func checkRules(t *testing.T, where, path string, s map[string]any, correlatable bool) (rules int) {
	t.Helper()
	props, _ := s["properties"].(map[string]any)
	list, _ := s["x-kubernetes-validations"].([]any)
	rules += len(list)
	for _, r := range list {
		rule, _ := r.(map[string]any)["rule"].(string)
		for _, m := range celField.FindAllStringSubmatch(rule, -1) {
			if _, ok := props[m[2]]; !ok {
				t.Errorf("%s: %s: rule %q names %s.%s, not a property there", where, path, rule, m[1], m[2])
			}
			if m[1] == "oldSelf" && !correlatable {
				t.Errorf("%s: %s: transition rule %q below the items of a list that is not a map", where, path, rule)
			}
		}
	}
	for name, p := range props {
		if ps, ok := p.(map[string]any); ok {
			rules += checkRules(t, where, path+".properties."+name, ps, correlatable)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		rules += checkRules(t, where, path+".items", items, correlatable && s["x-kubernetes-list-type"] == "map")
	}
	return rules
}

// TestValidationRulesNameTheirFields: the API server compiles every CEL
// rule of a CRD and refuses the CRD when a rule names a field its schema
// does not have ("undefined field"); the generated CRDs must all be
// accepted.
func TestValidationRulesNameTheirFields(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		p := load(t, genpayload.Options{Seed: seed, Scale: 1})
		rules := 0
		for _, f := range p.Files {
			for _, m := range f.Manifests {
				if m.GVK.Kind != "CustomResourceDefinition" {
					continue
				}
				versions, _, _ := unstructured.NestedSlice(m.Obj.Object, "spec", "versions")
				for i, v := range versions {
					s, ok, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema")
					if !ok {
						t.Errorf("%s#%d: version %d has no schema", f.Path, m.Doc, i)
						continue
					}
					rules += checkRules(t, fmt.Sprintf("seed %d: %s#%d", seed, f.Path, m.Doc), fmt.Sprintf("versions[%d]", i), s, true)
				}
			}
		}
		if rules == 0 {
			t.Errorf("seed %d: no validation rules generated: the test checks nothing", seed)
		}
	}
}

// TestObjectsHaveAHome: in every profile and feature set, each object to
// apply (the tool's generated ones included) is in a namespace that an
// object of the same apply creates, and of a kind that the API server
// serves, that a CRD of the same apply defines, or that the real payload
// also leaves to the cluster (leftToCluster).
func TestObjectsHaveAHome(t *testing.T) {
	p := load(t, genpayload.Options{Seed: 1, Scale: 1})
	for _, prof := range []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"} {
		for _, fset := range manifest.KnownFeatureSets() {
			pl, err := plan.Build(context.Background(), plan.Options{Loaded: p, Profile: prof, FeatureSet: fset})
			if err != nil {
				t.Fatalf("%s/%s: %v", prof, fset, err)
			}
			namespaces, kinds := map[string]bool{}, map[string]bool{}
			for _, m := range pl.Objects {
				switch m.GVK.Kind {
				case "Namespace":
					namespaces[m.Obj.GetName()] = true
				case "CustomResourceDefinition":
					group, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "group")
					kind, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "names", "kind")
					kinds[group+"/"+kind] = true
				}
			}
			for _, m := range pl.Objects {
				if m.Obj.GetAnnotations()[manifest.DeleteAnnotation] == "true" {
					continue
				}
				what := fmt.Sprintf("%s/%s: %s#%d %s %s", prof, fset, m.File, m.Doc, m.GVK.Kind, m.Obj.GetName())
				if ns := m.Obj.GetNamespace(); ns != "" && !namespaces[ns] {
					t.Errorf("%s: namespace %s is not created by the payload", what, ns)
				}
				gk := m.GVK.Group + "/" + m.GVK.Kind
				if !builtIn(m.GVK.Group) && !kinds[gk] && !leftToCluster[gk] {
					t.Errorf("%s: no CustomResourceDefinition for %s", what, gk)
				}
			}
		}
	}
}
