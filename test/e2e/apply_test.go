//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

var (
	clusterOperators = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusteroperators"}
	namespaces       = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// operatorStatus is the status an operator writes.
func setOperatorStatus(t *testing.T, ctx context.Context, c dynamic.Interface, name, version string, conditions ...map[string]any) {
	t.Helper()
	co, err := c.Resource(clusterOperators).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var conds []any
	for _, cond := range conditions {
		cond["lastTransitionTime"] = now
		conds = append(conds, cond)
	}
	status := map[string]any{"conditions": conds}
	if version != "" {
		status["versions"] = []any{map[string]any{"name": "operator", "version": version}}
	}
	co.Object["status"] = status
	if _, err := c.Resource(clusterOperators).UpdateStatus(ctx, co, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func condition(typ, status string, reasonMessage ...string) map[string]any {
	c := map[string]any{"type": typ, "status": status}
	if len(reasonMessage) > 1 {
		c["reason"], c["message"] = reasonMessage[0], reasonMessage[1]
	}
	return c
}

// TestApplyEmbeddedPayload bootstraps a fresh server from the embedded
// payload while the test plays the operators: `apply --wait` returns only
// once every ClusterOperator is available with the version its manifest
// lists, `status` agrees, and a ClusterOperator that stays degraded makes
// `apply --wait` fail naming it.
func TestApplyEmbeddedPayload(t *testing.T) {
	s := apiserver.New(t, apiserver.Options{})
	ctx := t.Context()
	c, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	kc := "--kubeconfig=" + s.Kubeconfig
	operators := []string{"ingress", "node-tuning"}

	t.Run("dry run changes nothing", func(t *testing.T) {
		r := cli(t, ctx, "apply", kc, "--dry-run=server")
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "run level 50:") || !strings.Contains(r.Stderr, "41 of 41 done (100%)") ||
			!strings.Contains(r.Stderr, "step ingress/default-placement: skipped (dry run: it runs after Ingress.config.openshift.io/cluster, which this apply would create)") {
			t.Errorf("progress missing from stderr:\n%s", r.Stderr)
		}
		if _, err := c.Resource(namespaces).Get(ctx, "openshift-ingress-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a dry run created namespace openshift-ingress-operator (err %v)", err)
		}
	})

	t.Run("apply --wait returns when the operators report their versions", func(t *testing.T) {
		bg := startCLI(t, ctx, "apply", kc, "--wait", "--timeout=3m", "-o", "json")
		// Play the operators: available, but first at an old version.
		var created bool
		for e := range bg.Events {
			if e.Event == "task" && e.Kind == "ClusterOperator" {
				if e.Action != "Created" {
					t.Errorf("ClusterOperator %s: %s %s", e.Name, e.Action, e.Error)
				}
			}
			if e.Event == "wait" && !created {
				created = true
				for _, name := range operators {
					setOperatorStatus(t, ctx, c, name, "0.0.1-old",
						condition("Available", "True"), condition("Degraded", "False"), condition("Progressing", "True", "Upgrading", "moving"))
				}
				continue
			}
			if e.Event != "wait" || !created {
				continue
			}
			// Apply keeps waiting and says for what.
			pending := map[string]string{}
			for _, p := range e.Pending {
				pending[p.Object] = p.Message
			}
			want := "versions not reported yet: operator from 0.0.1-old to 0.0.1-snapshot"
			if pending["ClusterOperator.config.openshift.io/ingress"] == want && pending["ClusterOperator.config.openshift.io/node-tuning"] == want {
				for _, name := range operators {
					setOperatorStatus(t, ctx, c, name, "0.0.1-snapshot",
						condition("Available", "True"), condition("Degraded", "False"), condition("Progressing", "False", "AsExpected", "done"))
				}
				break
			}
		}
		code, events := bg.Wait(t)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, bg.Stderr.String())
		}
		sum := summaryOf(t, events)
		// 40 objects: the record's CRD, made before the graph, is
		// unchanged in it; the obsolete ConfigMap is already gone.
		if !*sum.Success || sum.Changes["Created"] != 38 || sum.Changes["Unchanged"] != 1 || sum.StepChanges["Configured"] != 1 {
			t.Errorf("summary %+v", sum)
		}
		var sawVersions bool
		for _, e := range events {
			for _, p := range e.Pending {
				sawVersions = sawVersions || strings.Contains(p.Message, "from 0.0.1-old to 0.0.1-snapshot")
			}
		}
		if !sawVersions {
			t.Error("apply did not report waiting for the versions")
		}
	})

	t.Run("status is available", func(t *testing.T) {
		r := cli(t, ctx, "status", kc)
		if r.Code != 0 {
			t.Fatalf("exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
		}
		for _, want := range []string{"Available=True: Done applying 4.22.0", "Progressing=False: Cluster version is 4.22.0", "Failing=False", "ingress      0.0.1-snapshot  True"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("status lacks %q:\n%s", want, r.Stdout)
			}
		}
	})

	t.Run("a ClusterOperator that stays degraded fails apply --wait", func(t *testing.T) {
		setOperatorStatus(t, ctx, c, "ingress", "0.0.1-snapshot",
			condition("Available", "True"), condition("Degraded", "True", "IngressControllersDegraded", "router pods crash"))
		start := time.Now()
		r := cli(t, ctx, "apply", kc, "--wait", "--timeout=8s")
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Code, r.Stderr)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("took %s with --timeout=8s", d)
		}
		want := "error: ClusterOperator.config.openshift.io/ingress: wait: timeout: not ready after"
		if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "Degraded=True (IngressControllersDegraded): router pods crash") {
			t.Errorf("stderr does not name the degraded ClusterOperator:\n%s", r.Stderr)
		}
		if strings.Count(r.Stderr, "error: ") != 1 {
			t.Errorf("more than the one failure reported:\n%s", r.Stderr)
		}
		st := cli(t, ctx, "status", kc)
		if st.Code != 1 || !strings.Contains(st.Stdout, "Failing=True (ClusterOperatorDegraded): Cluster operator ingress is degraded") {
			t.Errorf("status exit %d:\n%s", st.Code, st.Stdout)
		}
	})

	t.Run("the ClusterOperators were never overwritten", func(t *testing.T) {
		co, err := c.Resource(clusterOperators).Get(ctx, "ingress", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(co.Object, "status", "conditions")
		if len(conds) != 2 {
			t.Errorf("status was touched: %v", conds)
		}
	})
}
