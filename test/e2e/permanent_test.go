//go:build e2e

package e2e

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/hostile"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// TestPermanentRejections applies payloads with an object no retry can
// put on the server: the apply must fail it at once (not after the
// two-minute retry or type wait), naming the object and why, and apply
// the rest.
func TestPermanentRejections(t *testing.T) {
	s := apiserver.New(t, apiserver.Options{})
	crd := func(kind, plural string) string {
		return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ` + strings.ToLower(plural) + `.example.com
  annotations: {include.release.openshift.io/self-managed-high-availability: "true"}
spec:
  group: example.com
  names: {kind: ` + kind + `, plural: ` + plural + `}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`
	}
	// big is a custom resource of size bytes: less than the API server
	// takes in a request (3 MiB), more than etcd stores in one (1.5 MiB,
	// or the 2 MiB its gRPC client sends). A custom resource, which no
	// validation limits as a ConfigMap's (1 MiB) does.
	type tcase = struct {
		name   string
		files  map[string]string
		object string
		reason string
		want   string
		order  string // --order; "": install
	}
	big := func(size int, name, server string) tcase {
		return tcase{name: name,
			files: map[string]string{
				"release-manifests/0000_10_crds_00_crd.yaml": crd("Gadget", "gadgets"),
				"release-manifests/0000_50_rel_01_big.yaml": "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: big\n" +
					"  annotations: {include.release.openshift.io/self-managed-high-availability: \"true\"}\ndata: " + strings.Repeat("x", size) + "\n",
			},
			object: "Gadget/big", reason: "Invalid",
			want: "Gadget.example.com/big: apply: invalid: " + server}
	}
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  annotations: {include.release.openshift.io/self-managed-high-availability: \"true\"}\n"
	cases := []tcase{
		big(1800<<10, "etcd: request is too large", "etcdserver: request is too large"),
		big(2500<<10, "gRPC: message larger than etcd's client takes", "rpc error: code = ResourceExhausted desc = trying to send message larger than max"),
		{name: "a CustomResourceDefinition the server refuses, and its objects",
			files: map[string]string{
				// The object comes first (as a FeatureGate at 05 comes
				// before its CRD at 10): it waits for the staged CRD.
				"release-manifests/0000_05_rel_01_widget.yaml": widget,
				"release-manifests/0000_70_crds_00_crd.yaml":   crd("Widget", "Widgets"), // a plural must be lower case
			},
			object: "Widget/w", reason: "ResourceTypeMissing",
			want: "Widget.example.com/w: apply: resource type missing: the server has no API for Widget in example.com/v1: its CustomResourceDefinition was not applied: CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com: apply: invalid: "},
		{name: "a CustomResourceDefinition after its objects in the update order",
			files: map[string]string{
				// Run levels in series: the CRD at 70 cannot come before
				// the Widget at 05 is done; waiting for it would run out
				// the two-minute type wait.
				"release-manifests/0000_05_rel_01_widget.yaml": widget,
				"release-manifests/0000_70_crds_00_crd.yaml":   crd("Widget", "Widgets"),
			},
			order:  "update",
			object: "Widget/w", reason: "ResourceTypeMissing",
			want: "Widget.example.com/w: apply: resource type missing: the server has no API for Widget in example.com/v1, and its CustomResourceDefinition (release-manifests/0000_70_crds_00_crd.yaml#0) comes after it in the update order: it cannot be waited for"},
	}
	// Every apply keeps the cluster's record: its CRD comes with the
	// payload, as with a real one.
	const recordCRD = "manifests/0000_00_cluster-version-operator_01_clusterversions.crd.yaml"
	cvCRD, err := fs.ReadFile(payload.Embedded(), recordCRD)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			hostile.WriteTree(t, dir, map[string]string{
				recordCRD:                                    string(cvCRD),
				"release-manifests/release-metadata":         `{"kind": "cincinnati-metadata-v0", "version": "4.22.0"}`,
				"release-manifests/image-references":         `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.22.0"}, "spec": {"tags": []}}`,
				"release-manifests/0000_00_rel_00_ns.yaml":   included("Namespace", "openshift-config", ""),
				"release-manifests/0000_50_rel_00_ns.yaml":   included("Namespace", "rel-e2e", ""),
				"release-manifests/0000_60_other_00_cm.yaml": included("ConfigMap", "other", "rel-e2e"),
			}, tc.files)
			order := tc.order
			if order == "" {
				order = "install"
			}
			r := runBounded(t, 3*time.Minute, "apply", "--kubeconfig="+s.Kubeconfig, "--payload="+dir, "--order="+order, "-o", "json")
			t.Logf("exit %d in %s", r.Code, r.took.Round(100*time.Millisecond))
			if r.Code != 1 {
				t.Errorf("exit %d, want 1; stderr:\n%.3000s", r.Code, r.Stderr)
			}
			if r.took > 30*time.Second {
				t.Errorf("took %s: the rejection was retried or waited for", r.took)
			}
			events := parseEvents(t, r.Stdout)
			if errs := strings.Join(summaryOf(t, events).Errors, "\n"); !strings.Contains(errs, tc.want) {
				t.Errorf("the errors lack %q:\n%.3000s", tc.want, errs)
			}
			got := failures(events)
			if got[tc.object] != tc.reason {
				t.Errorf("%s failed as %q, want %q (failures: %v)", tc.object, got[tc.object], tc.reason, got)
			}
			if _, failed := got["ConfigMap/rel-e2e/other"]; failed {
				t.Errorf("an object after the rejected one failed too: %v", got)
			}
		})
	}
}
