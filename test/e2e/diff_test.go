//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// diffHeader matches the header of one object's diff, either side.
var diffHeader = regexp.MustCompile(`(?m)^(?:---|\+\+\+) (\S+)$`)

// changedObjects returns the objects a text diff shows, as
// "a/<path>" or "b/<path>" for each side that is not /dev/null.
func changedObjects(stdout string) []string {
	var out []string
	for _, m := range diffHeader.FindAllStringSubmatch(stdout, -1) {
		if m[1] != "/dev/null" {
			out = append(out, m[1])
		}
	}
	return out
}

// TestDiffLive: `diff --kubeconfig` against a real API server. On an empty
// cluster everything is to create (the objects whose CRD or namespace the
// plan brings, as the payload gives them); right after `apply` nothing
// differs (exit 0); after the test edits a Deployment and deletes a
// ConfigMap, the diff shows exactly those two and exits 1. The ConfigMap
// deleted is create-only (trusted-ca), which shows both halves of the
// rule: edited, it stays unchanged (apply never updates it); deleted, it
// is to create (apply creates it when missing). An object annotated for
// deletion that exists is a deletion. Two runs print the same, sorted by
// run level, component and object. A cluster that cannot be reached fails
// at once with one error, and reads the user may not do fail with each
// object named, both exit 2. A Secret's values never show in the output
// or the logs, even at -v=10.
func TestDiffLive(t *testing.T) {
	s := apiserver.New(t, apiserver.Options{})
	ctx := t.Context()
	c, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	kc := "--kubeconfig=" + s.Kubeconfig
	const ns = "openshift-ingress-operator"

	t.Run("an empty cluster: no release to compare with but the one named", func(t *testing.T) {
		r := cli(t, ctx, "diff", kc)
		if r.Code != 2 || !strings.Contains(r.Stderr, "the cluster has no record of the release it runs") || !strings.Contains(r.Stderr, "pass --payload") {
			t.Fatalf("exit %d, want 2 and why:\n%s", r.Code, r.Stderr)
		}
		r = cli(t, ctx, "diff", kc, "--payload=embedded://payload-apply")
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Code, r.Stderr)
		}
		// 40 objects, one of them annotated for deletion.
		if !strings.HasSuffix(r.Stdout, "Summary: 39 to create, 0 to change, 0 to delete, 0 unchanged\n") {
			t.Errorf("summary:\n%s", tailLines(r.Stdout))
		}
		// Kinds whose CRD is in the plan: as the payload gives them.
		for _, want := range []string{"+++ b/config.openshift.io/ClusterOperator/ingress", "+++ b/operator.openshift.io/IngressController/openshift-ingress-operator/default"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("diff lacks %q", want)
			}
		}
		if r.Stderr != "comparing with --payload embedded://payload-apply (4.22.0); the cluster has no record of a release\n" {
			t.Errorf("stderr:\n%s", r.Stderr)
		}
	})

	t.Run("apply", func(t *testing.T) {
		if r := cli(t, ctx, "apply", kc); r.Code != 0 {
			t.Fatalf("exit %d:\n%s", r.Code, r.Stderr)
		}
	})

	t.Run("right after apply: no differences", func(t *testing.T) {
		r := cli(t, ctx, "diff", kc)
		if r.Code != 0 || r.Stdout != "Summary: 0 to create, 0 to change, 0 to delete, 39 unchanged\n" ||
			!strings.HasPrefix(r.Stderr, "comparing with the release the cluster runs: 4.22.0 (embedded://payload-apply@sha256:") {
			t.Fatalf("exit %d, want 0:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		r = cli(t, ctx, "diff", kc, "-o", "json")
		var out struct {
			Summary map[string]int `json:"summary"`
			Objects []any          `json:"objects"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || r.Code != 0 || len(out.Objects) != 0 || out.Summary["unchanged"] != 39 {
			t.Errorf("-o json: exit %d, %v:\n%s", r.Code, err, r.Stdout)
		}
	})

	t.Run("a create-only object that was edited is unchanged", func(t *testing.T) {
		cm, err := c.Resource(configMaps).Namespace(ns).Get(ctx, "trusted-ca", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedStringMap(cm.Object, map[string]string{"ca-bundle.crt": "injected"}, "data")
		if _, err := c.Resource(configMaps).Namespace(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "e2e-network-operator"}); err != nil {
			t.Fatal(err)
		}
		if r := cli(t, ctx, "diff", kc, "--summary"); r.Code != 0 {
			t.Fatalf("exit %d, want 0:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("an edited Deployment and a deleted ConfigMap: exactly those two", func(t *testing.T) {
		d, err := c.Resource(deployments).Namespace(ns).Get(ctx, "ingress-operator", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(d.Object, int64(3), "spec", "replicas")
		if _, err := c.Resource(deployments).Namespace(ns).Update(ctx, d, metav1.UpdateOptions{FieldManager: "e2e-edit"}); err != nil {
			t.Fatal(err)
		}
		if err := c.Resource(configMaps).Namespace(ns).Delete(ctx, "trusted-ca", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		r := cli(t, ctx, "diff", kc)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		want := []string{
			"a/apps/Deployment/openshift-ingress-operator/ingress-operator",
			"b/apps/Deployment/openshift-ingress-operator/ingress-operator",
			"b/core/ConfigMap/openshift-ingress-operator/trusted-ca",
		}
		if got := changedObjects(r.Stdout); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("objects shown %q, want %q:\n%s", got, want, r.Stdout)
		}
		for _, line := range []string{"-  replicas: 3\n+  replicas: 1\n", "--- /dev/null\n+++ b/core/ConfigMap/openshift-ingress-operator/trusted-ca\n", "# 50/cluster-ingress-operator\n"} {
			if !strings.Contains(r.Stdout, line) {
				t.Errorf("diff lacks %q:\n%s", line, r.Stdout)
			}
		}
		if removed := regexp.MustCompile(`(?m)^-[^-]`).FindAllString(r.Stdout, -1); len(removed) != 1 {
			t.Errorf("%d lines removed, want the one of replicas:\n%s", len(removed), r.Stdout)
		}
		if !strings.HasSuffix(r.Stdout, "Summary: 1 to create, 1 to change, 0 to delete, 37 unchanged\n") {
			t.Errorf("summary:\n%s", tailLines(r.Stdout))
		}
		// Nothing was written: the Deployment still has 3 replicas.
		d, err = c.Resource(deployments).Namespace(ns).Get(ctx, "ingress-operator", metav1.GetOptions{})
		if n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); err != nil || n != 3 {
			t.Errorf("replicas %d (%v) after diff, want 3", n, err)
		}
	})

	t.Run("output is stable and sorted", func(t *testing.T) {
		first, second := cli(t, ctx, "diff", kc), cli(t, ctx, "diff", kc)
		if first.Stdout != second.Stdout || first.Code != 1 || second.Code != 1 {
			t.Errorf("two runs differ (exit %d, %d):\n%s\n---\n%s", first.Code, second.Code, first.Stdout, second.Stdout)
		}
		r := cli(t, ctx, "diff", kc, "-o", "json")
		var out struct {
			Objects []struct {
				Group, Kind, Namespace, Name, Component string
				RunLevel                                int
			} `json:"objects"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range out.Objects {
			if o.Group == "" {
				o.Group = "core"
			}
			got = append(got, fmt.Sprintf("%02d %s %s/%s/%s/%s", o.RunLevel, o.Component, o.Group, o.Kind, o.Namespace, o.Name))
		}
		if !sort.StringsAreSorted(got) || len(got) != 2 {
			t.Errorf("-o json objects not sorted by run level, component and object: %q", got)
		}
	})

	t.Run("an unreachable cluster: exit 2 at once, one clear error", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "https://" + l.Addr().String()
		_ = l.Close()
		start := time.Now()
		r := cli(t, ctx, "diff", kc, "--server="+dead, "--profile=self-managed-high-availability")
		if r.Code != 2 || r.Stdout != "" {
			t.Errorf("exit %d, want 2, and no output:\n%s", r.Code, r.Stdout)
		}
		if want := "error: cannot reach the cluster at " + dead + ": "; !strings.HasPrefix(r.Stderr, want) || !strings.Contains(r.Stderr, "connection refused") || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("stderr, want one line starting %q:\n%s", want, r.Stderr)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %s: an unreachable cluster must fail at once, not retry", d)
		}
	})

	t.Run("forbidden: exit 2, the reads refused named", func(t *testing.T) {
		// Without --profile the first read is the cluster's profile.
		r := cli(t, ctx, "diff", kc, "--as=e2e-nobody")
		if r.Code != 2 || r.Stdout != "" {
			t.Errorf("exit %d, want 2, and no output:\n%s", r.Code, r.Stdout)
		}
		if !strings.Contains(r.Stderr, `error: reading the cluster's profile: ConfigMap/openshift-config/cluster-profile: get: forbidden: `) ||
			!strings.Contains(r.Stderr, `user "e2e-nobody" cannot get configmaps in namespace "openshift-config": the role needs verb "get" on resource "configmaps"`) {
			t.Errorf("stderr:\n%s", r.Stderr)
		}
		// With --profile and --payload, the record left out (a warning),
		// every object is refused and named, by file.
		r = cli(t, ctx, "diff", kc, "--as=e2e-nobody", "--profile=self-managed-high-availability", "--payload=embedded://payload-apply")
		if r.Code != 2 {
			t.Errorf("exit %d, want 2:\n%s", r.Code, tailLines(r.Stderr))
		}
		if !strings.Contains(r.Stderr, "release-manifests/0000_50_cluster-ingress-operator_02-deployment.yaml#0: Deployment.apps/openshift-ingress-operator/ingress-operator: get: forbidden: ") {
			t.Errorf("stderr does not name the Deployment refused:\n%s", tailLines(r.Stderr))
		}
		if !strings.HasSuffix(r.Stdout, "Summary: 0 to create, 0 to change, 0 to delete, 0 unchanged\n") {
			t.Errorf("stdout:\n%s", r.Stdout)
		}
	})

	t.Run("an object annotated for deletion that exists is a deletion", func(t *testing.T) {
		cm := &unstructured.Unstructured{}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetName("tuned-profiles")
		if _, err := c.Resource(configMaps).Namespace("openshift-cluster-node-tuning-operator").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r := cli(t, ctx, "diff", kc, "--summary")
		if r.Code != 1 || r.Stdout != "Summary: 1 to create, 1 to change, 1 to delete, 37 unchanged\n" {
			t.Errorf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		r = cli(t, ctx, "diff", kc)
		if !strings.Contains(r.Stdout, "--- a/core/ConfigMap/openshift-cluster-node-tuning-operator/tuned-profiles\n+++ /dev/null\n") {
			t.Errorf("no deletion shown:\n%s", r.Stdout)
		}
	})

	t.Run("Secret values never show, even at -v=10", func(t *testing.T) {
		extra := "--extra-manifests=testdata/TestDiffLive/extra"
		first, second := "payload-apply-e2e-first-value", "payload-apply-e2e-second-value"
		secretsIn := func(t *testing.T, what string, r result) {
			t.Helper()
			for _, v := range []string{first, second} {
				for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
					if strings.Contains(r.Stdout, form) || strings.Contains(r.Stderr, form) {
						t.Errorf("%s: the secret value %q shows in the output", what, form)
					}
				}
			}
		}
		r := cli(t, ctx, "apply", kc, extra, "-v=10")
		if r.Code != 0 {
			t.Fatalf("apply: exit %d:\n%s", r.Code, tailLines(r.Stderr))
		}
		secretsIn(t, "apply -v=10", r)
		// The logs do have bodies: the test would see a leak.
		if !strings.Contains(r.Stderr, "Request Body") || !strings.Contains(r.Stderr, "Response Body") {
			t.Fatalf("apply -v=10 logged no bodies:\n%s", tailLines(r.Stderr))
		}
		if r := cli(t, ctx, "diff", kc, extra); r.Code != 0 {
			t.Fatalf("diff after apply: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}

		sec, err := c.Resource(secrets).Namespace(ns).Get(ctx, "e2e-diff", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(sec.Object, base64.StdEncoding.EncodeToString([]byte(second)), "data", "password")
		if _, err := c.Resource(secrets).Namespace(ns).Update(ctx, sec, metav1.UpdateOptions{FieldManager: "e2e-edit"}); err != nil {
			t.Fatal(err)
		}
		r = cli(t, ctx, "diff", kc, extra, "-v=10")
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Code, tailLines(r.Stderr))
		}
		secretsIn(t, "diff -v=10", r)
		if !strings.Contains(r.Stderr, "Response Body") {
			t.Errorf("diff -v=10 logged no bodies:\n%s", tailLines(r.Stderr))
		}
		if got := changedObjects(r.Stdout); strings.Join(got, " ") != "a/core/Secret/openshift-ingress-operator/e2e-diff b/core/Secret/openshift-ingress-operator/e2e-diff" {
			t.Errorf("objects shown %q:\n%s", got, r.Stdout)
		}
		for _, want := range []string{"-  password: '*** (before)'\n+  password: '*** (after)'\n", "  username: '***'\n"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("diff lacks %q:\n%s", want, r.Stdout)
			}
		}
		r = cli(t, ctx, "diff", kc, extra, "-o", "json", "-v=10")
		if r.Code != 1 || !strings.Contains(r.Stdout, `"kind": "Secret"`) {
			t.Errorf("-o json: exit %d:\n%s", r.Code, r.Stdout)
		}
		secretsIn(t, "diff -o json -v=10", r)
	})
}

// tailLines returns the last lines of a long output, for failure messages.
func tailLines(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
