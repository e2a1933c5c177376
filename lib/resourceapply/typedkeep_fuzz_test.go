package resourceapply

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// FuzzKnown: for any document of a kind the typed scheme knows, known
// (the walk by type, with its fallbacks) gives what encoding the decoded
// object and pruning by it gives: the same object, the same dropped paths,
// an error exactly when the round trip has one.
func FuzzKnown(f *testing.F) {
	for _, doc := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3, strategy: {rollingUpdate: {maxSurge: 25%}}, template: {spec: {containers: [{name: c, resources: {limits: {cpu: 100m}}}]}}}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80, targetPort: http}], sessionAffinityConfig: {}, bogus: [1]}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: aGVsbG8=}\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\nroleRef: {kind: ClusterRole, name: r}\nuserNames: [a]\n",
		"apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np}\nspec: {podSelector: {}, ingress: [{ports: [{port: null}, {port: 8443}]}]}\n",
		"apiVersion: security.openshift.io/v1\nkind: SecurityContextConstraints\nmetadata: {name: s}\nallowHostDirVolumePlugin: false\npriority: null\nusers: []\n",
	} {
		f.Add(doc)
	}
	s, err := newTypedScheme()
	if err != nil {
		f.Fatal(err)
	}
	m := &Manager{scheme: s}
	f.Fuzz(func(t *testing.T, doc string) {
		ms, _ := manifest.Parse("fuzz.yaml", []byte(doc), manifest.ParseOptions{})
		for _, mf := range ms {
			obj := mf.Obj
			if obj == nil || obj.GroupVersionKind().GroupKind() == crdGK || !s.Recognizes(obj.GroupVersionKind()) {
				continue
			}
			want, wantDropped, wantErr := m.knownByRoundTrip(obj)
			got, gotDropped, gotErr := m.known(obj)
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("error %v, round trip's %v", gotErr, wantErr)
			}
			if wantErr != nil {
				continue
			}
			if diff := cmp.Diff(wantDropped, gotDropped); diff != "" {
				t.Fatalf("dropped (-round trip +known):\n%s", diff)
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Fatalf("object (-round trip +known):\n%s", diff)
			}
		}
	})
}
