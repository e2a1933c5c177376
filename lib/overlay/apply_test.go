package overlay_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"

	// No golden files here: the import only registers -update, so that
	// go test -update over several packages accepts the flag here too.
	_ "github.com/payload-apply/payload-apply/internal/golden"
)

// The objects every case starts from: two files of component "demo" at run
// level 50 and one of "other" at 60.
var inputFiles = []struct{ name, body string }{
	{"release-manifests/0000_50_demo_00-namespace.yaml", `
apiVersion: v1
kind: Namespace
metadata:
  name: demo
`},
	{"release-manifests/0000_50_demo_02-deployment.yaml", `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: operator
  namespace: demo
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
spec:
  replicas: 2
  selector:
    matchLabels: {name: operator}
  template:
    metadata:
      labels: {name: operator}
    spec:
      nodeSelector:
        kubernetes.io/os: linux
        node-role.kubernetes.io/master: ""
      containers:
      - name: operator
        image: example.com/operator:1
        env:
        - {name: MODE, value: ha}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: demo
data:
  mode: single
`},
	{"release-manifests/0000_60_other_01-config.yaml", `
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: other
data:
  a: b
`},
}

func inputs(t testing.TB) []*manifest.Manifest {
	t.Helper()
	var out []*manifest.Manifest
	for _, f := range inputFiles {
		ms, err := manifest.Parse(f.name, []byte(f.body), manifest.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range ms {
			out = append(out, &ms[i])
		}
	}
	return out
}

// mapFS makes a file system of files; a body "-> TARGET" is a symbolic
// link to TARGET.
func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range files {
		if target, ok := strings.CutPrefix(body, "-> "); ok {
			fsys[name] = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
			continue
		}
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

func find(t *testing.T, fsys fstest.MapFS, dirs ...string) []*overlay.Overlay {
	t.Helper()
	src := overlay.Source{FS: fsys, Label: "test/"}
	var out []*overlay.Overlay
	for _, d := range dirs {
		o, err := overlay.Find([]overlay.Source{src}, d, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// summary prints each object as "FILE#DOC ORIGINALFILENAME ID", and each
// change as "ACTION SOURCE-ID -> OBJECT-ID".
func summary(res *overlay.Result) (objs, changes []string) {
	for _, m := range res.Objects {
		objs = append(objs, fmt.Sprintf("%s %s %s", m.Position(), m.OriginalFilename, m.ID()))
	}
	for _, c := range res.Changes {
		src, obj := "-", "-"
		if c.Source != nil {
			src = c.Source.Position()
		}
		if c.Object != nil {
			obj = c.Object.Position()
		}
		changes = append(changes, fmt.Sprintf("%s %s %s -> %s", strings.TrimPrefix(c.Overlay, "test/"), c.Action, src, obj))
	}
	return objs, changes
}

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var u map[string]any
	if err := yaml.Unmarshal([]byte(s), &u); err != nil {
		t.Fatal(err)
	}
	// The same number types as a decoded manifest.
	data, _ := yaml.YAMLToJSON([]byte(s))
	o := &unstructured.Unstructured{}
	if err := o.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return o.Object
}

var unchanged = []string{
	"release-manifests/0000_50_demo_00-namespace.yaml#0 0000_50_demo_00-namespace.yaml Namespace/demo",
	"release-manifests/0000_50_demo_02-deployment.yaml#0 0000_50_demo_02-deployment.yaml Deployment.apps/demo/operator",
	"release-manifests/0000_50_demo_02-deployment.yaml#1 0000_50_demo_02-deployment.yaml ConfigMap/demo/settings",
	"release-manifests/0000_60_other_01-config.yaml#0 0000_60_other_01-config.yaml ConfigMap/other/other",
}

func TestApply(t *testing.T) {
	const deploy = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: operator
  namespace: demo
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
spec:
  replicas: 2
  selector:
    matchLabels: {name: operator}
  template:
    metadata:
      labels: {name: operator}
    spec:
      nodeSelector:
        kubernetes.io/os: linux
        node-role.kubernetes.io/master: ""
      containers:
      - name: operator
        image: example.com/operator:1
        env:
        - {name: MODE, value: ha}
`
	tests := []struct {
		name     string
		files    map[string]string
		overlays []string
		objects  []string          // summary of Result.Objects
		changes  []string          // summary of Result.Changes
		want     map[string]string // Position -> the object's expected YAML
		same     []int             // indexes of Objects that must be the input pointers
	}{{
		name: "strategic merge patch keeps file, document and run level",
		files: map[string]string{
			"workers/kustomization.yaml": `
patches:
- path: workers.yaml
`,
			"workers/workers.yaml": `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: operator
  namespace: demo
spec:
  template:
    spec:
      nodeSelector:
        node-role.kubernetes.io/master: null
        node-role.kubernetes.io/worker: ""
      containers:
      - name: operator
        env:
        - {name: MODE, value: workers}
`,
		},
		overlays: []string{"workers"},
		objects:  unchanged,
		changes:  []string{"workers/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#0 -> release-manifests/0000_50_demo_02-deployment.yaml#0"},
		want: map[string]string{"release-manifests/0000_50_demo_02-deployment.yaml#0": strings.NewReplacer(
			`node-role.kubernetes.io/master: ""`, `node-role.kubernetes.io/worker: ""`,
			"value: ha", "value: workers").Replace(deploy)},
		same: []int{0, 2, 3},
	}, {
		name: "JSON 6902 patch on every Deployment",
		files: map[string]string{
			"one/kustomization.yaml": `
patches:
- target: {kind: Deployment}
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 1
`,
		},
		overlays: []string{"one"},
		objects:  unchanged,
		changes:  []string{"one/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#0 -> release-manifests/0000_50_demo_02-deployment.yaml#0"},
		want:     map[string]string{"release-manifests/0000_50_demo_02-deployment.yaml#0": strings.Replace(deploy, "replicas: 2", "replicas: 1", 1)},
		same:     []int{0, 2, 3},
	}, {
		name: "replacements copy a value between objects",
		files: map[string]string{
			"repl/kustomization.yaml": `
replacements:
- path: mode.yaml
`,
			"repl/mode.yaml": `
source:
  kind: ConfigMap
  name: settings
  fieldPath: data.mode
targets:
- select: {kind: Deployment, name: operator}
  fieldPaths:
  - spec.template.spec.containers.[name=operator].env.[name=MODE].value
`,
		},
		overlays: []string{"repl"},
		objects:  unchanged,
		changes:  []string{"repl/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#0 -> release-manifests/0000_50_demo_02-deployment.yaml#0"},
		want:     map[string]string{"release-manifests/0000_50_demo_02-deployment.yaml#0": strings.Replace(deploy, "value: ha", "value: single", 1)},
	}, {
		name: "labels transform",
		files: map[string]string{
			"labels/kustomization.yaml": `
labels:
- pairs: {example.com/profile: dev}
`,
		},
		overlays: []string{"labels"},
		objects:  unchanged,
		changes: []string{
			"labels/kustomization.yaml modified release-manifests/0000_50_demo_00-namespace.yaml#0 -> release-manifests/0000_50_demo_00-namespace.yaml#0",
			"labels/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#0 -> release-manifests/0000_50_demo_02-deployment.yaml#0",
			"labels/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#1 -> release-manifests/0000_50_demo_02-deployment.yaml#1",
			"labels/kustomization.yaml modified release-manifests/0000_60_other_01-config.yaml#0 -> release-manifests/0000_60_other_01-config.yaml#0",
		},
		want: map[string]string{"release-manifests/0000_60_other_01-config.yaml#0": `
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: other
  labels: {example.com/profile: dev}
data:
  a: b
`},
	}, {
		name: "namespace transform",
		files: map[string]string{
			"ns/kustomization.yaml": `
namespace: moved
`,
		},
		overlays: []string{"ns"},
		objects: []string{
			// kustomize renames a Namespace object to the namespace it sets.
			"release-manifests/0000_50_demo_00-namespace.yaml#0 0000_50_demo_00-namespace.yaml Namespace/moved",
			"release-manifests/0000_50_demo_02-deployment.yaml#0 0000_50_demo_02-deployment.yaml Deployment.apps/moved/operator",
			"release-manifests/0000_50_demo_02-deployment.yaml#1 0000_50_demo_02-deployment.yaml ConfigMap/moved/settings",
			"release-manifests/0000_60_other_01-config.yaml#0 0000_60_other_01-config.yaml ConfigMap/moved/other",
		},
		changes: []string{
			"ns/kustomization.yaml modified release-manifests/0000_50_demo_00-namespace.yaml#0 -> release-manifests/0000_50_demo_00-namespace.yaml#0",
			"ns/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#0 -> release-manifests/0000_50_demo_02-deployment.yaml#0",
			"ns/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#1 -> release-manifests/0000_50_demo_02-deployment.yaml#1",
			"ns/kustomization.yaml modified release-manifests/0000_60_other_01-config.yaml#0 -> release-manifests/0000_60_other_01-config.yaml#0",
		},
	}, {
		name: "delete patch",
		files: map[string]string{
			"drop/kustomization.yaml": `
patches:
- patch: |-
    $patch: delete
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: operator
      namespace: demo
`,
		},
		overlays: []string{"drop"},
		objects:  []string{unchanged[0], unchanged[2], unchanged[3]},
		changes:  []string{"drop/kustomization.yaml deleted release-manifests/0000_50_demo_02-deployment.yaml#0 -> -"},
		same:     []int{0, 1, 2},
	}, {
		name: "added objects are filed under the overlay and ordered by their file name",
		files: map[string]string{
			"add/kustomization.yaml": `
resources:
- 0000_50_demo_90-extra.yaml
- sub
configMapGenerator:
- name: generated
  namespace: demo
  literals: [a=b]
  options: {disableNameSuffixHash: true}
`,
			"add/0000_50_demo_90-extra.yaml": `
apiVersion: v1
kind: ServiceAccount
metadata: {name: extra, namespace: demo}
---
apiVersion: v1
kind: Secret
metadata: {name: extra, namespace: demo}
`,
			"add/sub/kustomization.yaml": "resources: [plain.yaml]\n",
			"add/sub/plain.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: demo}\n",
		},
		overlays: []string{"add"},
		objects: append(append([]string(nil), unchanged...),
			"overlays/add/0000_50_demo_90-extra.yaml#0 0000_50_demo_90-extra.yaml ServiceAccount/demo/extra",
			"overlays/add/0000_50_demo_90-extra.yaml#1 0000_50_demo_90-extra.yaml Secret/demo/extra",
			"overlays/add/sub/plain.yaml#0 plain.yaml ConfigMap/demo/plain",
			"overlays/add/configmap-generated.yaml#0 configmap-generated.yaml ConfigMap/demo/generated",
		),
		changes: []string{
			"add/kustomization.yaml added - -> overlays/add/0000_50_demo_90-extra.yaml#0",
			"add/kustomization.yaml added - -> overlays/add/0000_50_demo_90-extra.yaml#1",
			"add/kustomization.yaml added - -> overlays/add/sub/plain.yaml#0",
			"add/kustomization.yaml added - -> overlays/add/configmap-generated.yaml#0",
		},
		want: map[string]string{"overlays/add/sub/plain.yaml#0": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: demo}\n"},
		same: []int{0, 1, 2, 3},
	}, {
		name: "overlays run root first, each on the previous output",
		files: map[string]string{
			"root/kustomization.yaml": `
patches:
- target: {kind: Deployment}
  patch: '[{"op": "replace", "path": "/spec/replicas", "value": 1}]'
resources: [0000_50_demo_90-extra.yaml]
`,
			"root/0000_50_demo_90-extra.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: extra, namespace: demo}\n",
			"child/kustomization.yaml": `
patches:
- target: {kind: Deployment}
  patch: '[{"op": "replace", "path": "/spec/replicas", "value": 5}]'
- target: {kind: ServiceAccount}
  patch: '[{"op": "add", "path": "/automountServiceAccountToken", "value": false}]'
`,
		},
		overlays: []string{"root", "child"},
		objects: append(append([]string(nil), unchanged...),
			"overlays/root/0000_50_demo_90-extra.yaml#0 0000_50_demo_90-extra.yaml ServiceAccount/demo/extra"),
		changes: []string{
			"root/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#0 -> release-manifests/0000_50_demo_02-deployment.yaml#0",
			"root/kustomization.yaml added - -> overlays/root/0000_50_demo_90-extra.yaml#0",
			"child/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#0 -> release-manifests/0000_50_demo_02-deployment.yaml#0",
			"child/kustomization.yaml modified - -> overlays/root/0000_50_demo_90-extra.yaml#0",
		},
		want: map[string]string{
			"release-manifests/0000_50_demo_02-deployment.yaml#0": strings.Replace(deploy, "replicas: 2", "replicas: 5", 1),
			"overlays/root/0000_50_demo_90-extra.yaml#0":          "apiVersion: v1\nkind: ServiceAccount\nautomountServiceAccountToken: false\nmetadata: {name: extra, namespace: demo}\n",
		},
	}, {
		name: "transformer configuration, whose fieldSpecs paths are not files",
		files: map[string]string{
			"t/kustomization.yaml": "transformers: [labels.yaml]\n",
			"t/labels.yaml": `apiVersion: builtin
kind: LabelTransformer
metadata: {name: labels}
labels: {example.com/profile: dev}
fieldSpecs:
- path: metadata/labels
  create: true
  kind: ConfigMap
`,
		},
		overlays: []string{"t"},
		objects:  unchanged,
		changes: []string{
			"t/kustomization.yaml modified release-manifests/0000_50_demo_02-deployment.yaml#1 -> release-manifests/0000_50_demo_02-deployment.yaml#1",
			"t/kustomization.yaml modified release-manifests/0000_60_other_01-config.yaml#0 -> release-manifests/0000_60_other_01-config.yaml#0",
		},
		same: []int{0, 1},
	}, {
		name:     "an overlay that changes nothing",
		files:    map[string]string{"empty/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"},
		overlays: []string{"empty"},
		objects:  unchanged,
		same:     []int{0, 1, 2, 3},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs(t)
			res, err := overlay.Apply(context.Background(), in, find(t, mapFS(tc.files), tc.overlays...))
			if err != nil {
				t.Fatal(err)
			}
			objs, changes := summary(res)
			if diff := cmp.Diff(tc.objects, objs); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.changes, changes); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			for pos, want := range tc.want {
				var got *manifest.Manifest
				for _, m := range res.Objects {
					if m.Position() == pos {
						got = m
					}
				}
				if got == nil {
					t.Errorf("%s: not in the result", pos)
					continue
				}
				if diff := cmp.Diff(obj(t, want), got.Obj.Object); diff != "" {
					t.Errorf("%s (-want +got):\n%s", pos, diff)
				}
				if got.ID() != (manifest.ID{Group: got.GVK.Group, Kind: got.Obj.GetKind(), Namespace: got.Obj.GetNamespace(), Name: got.Obj.GetName()}) {
					t.Errorf("%s: GVK and object disagree", pos)
				}
			}
			for _, i := range tc.same {
				found := false
				for _, m := range in {
					found = found || m == res.Objects[i]
				}
				if !found {
					t.Errorf("object %d (%s) is a copy, want the unchanged input", i, res.Objects[i].Position())
				}
			}
			for _, m := range in {
				if _, ok := m.Obj.GetAnnotations()[overlay.IndexAnnotation]; ok {
					t.Errorf("%s: input object was changed", m.Position())
				}
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr []string // substrings, one per joined error
	}{{
		name: "resource outside the overlay",
		files: map[string]string{
			"o/kustomization.yaml":      "resources: [../shared]\n",
			"shared/kustomization.yaml": "resources: []\n",
		},
		wantErr: []string{`test/o/kustomization.yaml: resources[0] "../shared": refers outside the overlay directory o: an overlay may only read files under its own directory`},
	}, {
		name: "patch file outside the overlay, through a subdirectory",
		files: map[string]string{
			"o/kustomization.yaml": "patches:\n- path: sub/../../secret.yaml\n",
			"secret.yaml":          "x: y\n",
		},
		wantErr: []string{`test/o/kustomization.yaml: patches[0].path "sub/../../secret.yaml": refers outside the overlay directory o`},
	}, {
		name:    "absolute path",
		files:   map[string]string{"o/kustomization.yaml": "patchesStrategicMerge: [/etc/passwd]\n"},
		wantErr: []string{`test/o/kustomization.yaml: patchesStrategicMerge[0] "/etc/passwd": absolute paths are not allowed`},
	}, {
		name: "remote resources",
		files: map[string]string{"o/kustomization.yaml": `resources:
- https://example.com/deploy.yaml
- github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v1.0.6
- git@github.com:owner/repo.git
`},
		wantErr: []string{
			`test/o/kustomization.yaml: resources[0] "https://example.com/deploy.yaml": remote resources are not allowed`,
			`test/o/kustomization.yaml: resources[1] "github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v1.0.6": remote resources are not allowed`,
			`test/o/kustomization.yaml: resources[2] "git@github.com:owner/repo.git": remote resources are not allowed`,
		},
	}, {
		name:    "missing file",
		files:   map[string]string{"o/kustomization.yaml": "resources: [nope.yaml]\n"},
		wantErr: []string{`test/o/kustomization.yaml: resources[0] "nope.yaml": no such file or directory in the overlay`},
	}, {
		name: "nested kustomization reaching out",
		files: map[string]string{
			"o/kustomization.yaml":     "resources: [sub]\n",
			"o/sub/kustomization.yaml": "configMapGenerator:\n- name: x\n  files: [key=../../x.txt]\n",
		},
		wantErr: []string{`test/o/sub/kustomization.yaml: configMapGenerator[0].files[0] "../../x.txt": refers outside the overlay directory o`},
	}, {
		name: "transformer configuration with a remote path",
		files: map[string]string{
			"o/kustomization.yaml": "transformers: [t.yaml]\n",
			"o/t.yaml":             "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: t}\npath: https://example.com/p.yaml\n",
		},
		wantErr: []string{`test/o/kustomization.yaml: transformers[0] path "https://example.com/p.yaml": remote resources are not allowed`},
	}, {
		name:    "helm",
		files:   map[string]string{"o/kustomization.yaml": "helmCharts:\n- name: x\n  repo: https://example.com\n"},
		wantErr: []string{`test/o/kustomization.yaml: helm charts are not supported in overlays`},
	}, {
		name:    "component",
		files:   map[string]string{"o/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"},
		wantErr: []string{`test/o/kustomization.yaml: an overlay must be a Kustomization, not a Component`},
	}, {
		name: "reserved file name",
		files: map[string]string{
			"o/kustomization.yaml":          "resources: []\n",
			"o/.payload-apply-objects.yaml": "x: y\n",
		},
		wantErr: []string{`test/o/kustomization.yaml: .payload-apply-objects.yaml is reserved`},
	}, {
		name: "kustomize errors name the overlay",
		files: map[string]string{
			"o/kustomization.yaml": "patches:\n- path: p.yaml\n",
			"o/p.yaml":             "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: missing, namespace: demo}\nspec: {replicas: 1}\n",
		},
		wantErr: []string{`test/o/kustomization.yaml: kustomize build: `},
	}, {
		name:    "unknown field",
		files:   map[string]string{"o/kustomization.yaml": "namePrefx: x-\n"},
		wantErr: []string{`test/o/kustomization.yaml: parse: invalid Kustomization: json: unknown field "namePrefx"`},
	}, {
		name:    "git resource",
		files:   map[string]string{"o/kustomization.yaml": "resources: [\"git::https://example.com/repo.git//deploy?ref=main\"]\n"},
		wantErr: []string{`resources[0] "git::https://example.com/repo.git//deploy?ref=main": remote resources are not allowed`},
	}, {
		name:    "windows absolute path",
		files:   map[string]string{"o/kustomization.yaml": "patches: [{path: 'C:\\x.yaml'}]\n"},
		wantErr: []string{`patches[0].path "C:\\x.yaml": absolute paths are not allowed`},
	}, {
		name: "symbolic link leaving the overlay",
		files: map[string]string{
			"o/kustomization.yaml": "resources: [cm.yaml]\n",
			"o/cm.yaml":            "-> ../secret.yaml",
			"secret.yaml":          "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
		},
		wantErr: []string{`test/o/kustomization.yaml: copy the overlay: o/cm.yaml: not a regular file`},
	}, {
		name:    "alias bomb",
		files:   map[string]string{"o/kustomization.yaml": "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"},
		wantErr: []string{`test/o/kustomization.yaml: parse: invalid Kustomization: yaml: document contains excessive aliasing`},
	}, {
		name: "a patch that removes metadata.name",
		files: map[string]string{
			"o/kustomization.yaml": "patches:\n- target: {kind: ConfigMap, name: settings}\n  patch: '[{\"op\": \"remove\", \"path\": \"/metadata/name\"}]'\n",
		},
		wantErr: []string{"test/o/kustomization.yaml: kustomize build: a patch (PatchTransformer) removed metadata.name of ConfigMap/demo/settings (v1): every object needs a name; a patch may change it, not remove it"},
	}, {
		name: "an overlay must not forge the index annotation",
		files: map[string]string{
			"o/kustomization.yaml": "commonAnnotations: {overlay.payload-apply/index: \"0\"}\n",
		},
		wantErr: []string{`test/o/kustomization.yaml: `, `the overlay changed or copied the overlay.payload-apply/index annotation`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := overlay.Apply(context.Background(), inputs(t), find(t, mapFS(tc.files), "o"))
			if err == nil {
				t.Fatalf("no error, want %q", tc.wantErr)
			}
			lines := errorLines(err)
			if len(tc.wantErr) > 1 && len(lines) == 1 {
				for _, w := range tc.wantErr {
					if !strings.Contains(lines[0], w) {
						t.Errorf("got %s\nwant it to contain %s", lines[0], w)
					}
				}
				return
			}
			if len(lines) != len(tc.wantErr) {
				t.Fatalf("got %d errors %q, want %d", len(lines), lines, len(tc.wantErr))
			}
			for i := range lines {
				if !strings.Contains(lines[i], tc.wantErr[i]) {
					t.Errorf("error %d:\n got %s\nwant %s", i, lines[i], tc.wantErr[i])
				}
			}
		})
	}
}

func errorLines(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, errorLines(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

func TestFind(t *testing.T) {
	a := overlay.Source{FS: mapFS(map[string]string{"x/kustomization.yaml": "", "y/Kustomization": ""}), Label: "embedded:overlays/"}
	b := overlay.Source{FS: mapFS(map[string]string{"x/kustomization.yml": "", "z/kustomization.yaml": "", "two/kustomization.yaml": "", "two/kustomization.yml": ""}), Label: "/home/me/overlays/"}
	tests := []struct {
		name, dir string
		want      string
		wantErr   string
	}{
		{name: "embedded", dir: "y", want: "embedded:overlays/y/Kustomization"},
		{name: "user directory", dir: "z", want: "/home/me/overlays/z/kustomization.yaml"},
		{name: "in both", dir: "x", wantErr: `/home/me/overlays/x/kustomization.yml: overlay "n" is also defined in embedded:overlays/x/kustomization.yaml: rename one`},
		{name: "in neither", dir: "nope", wantErr: `overlay "n": no nope/kustomization.yaml in embedded:overlays or /home/me/overlays`},
		{name: "two kustomization files", dir: "two", wantErr: `/home/me/overlays/two: overlay "n": several kustomization files: kustomization.yaml, kustomization.yml`},
		{name: "not clean", dir: "../x", wantErr: `overlay "n": path "../x" is not a clean relative path`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := overlay.Find([]overlay.Source{a, b}, "n", tc.dir)
			got, gotErr := "", ""
			if err != nil {
				gotErr = err.Error()
			} else {
				got = o.File
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestList(t *testing.T) {
	src := overlay.Source{FS: mapFS(map[string]string{
		"a/kustomization.yaml":        "",
		"a/nested/kustomization.yaml": "",
		"b/c/kustomization.yaml":      "",
		"doc.go":                      "",
		"d/readme.md":                 "",
	}), Label: "x/"}
	got, err := overlay.List(src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b/c"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestApplyConcurrent: callers may run Apply from several goroutines; the
// builds are serialised and give the same result (run with -race).
func TestApplyConcurrent(t *testing.T) {
	fsys := mapFS(map[string]string{"o/kustomization.yaml": "patches:\n- target: {kind: Deployment}\n  patch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 1}]'\n"})
	ovs := find(t, fsys, "o")
	in := inputs(t)
	const n = 4
	got := make([][]string, n)
	errs := make([]error, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			res, err := overlay.Apply(context.Background(), in, ovs)
			if err != nil {
				errs[i] = err
				return
			}
			got[i], _ = summary(res)
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if diff := cmp.Diff(got[0], got[i]); diff != "" {
			t.Errorf("run %d (-run 0 +run %d):\n%s", i, i, diff)
		}
	}
}
