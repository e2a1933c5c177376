package nodetuning_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/plan"
)

// TestHookErrors: bad input fails the plan, every problem on a line of its
// own naming the file, the document, the object and the field.
func TestHookErrors(t *testing.T) {
	cases := []struct {
		name   string
		hosted bool
		files  map[string]string
		want   []string
	}{
		{
			name: "overlap",
			files: map[string]string{"pp.yaml": `apiVersion: performance.openshift.io/v2
kind: PerformanceProfile
metadata: {name: manual}
spec:
  cpu: {reserved: "0-1", isolated: "1-3"}
  nodeSelector: {node-role.kubernetes.io/worker-cnf: ""}
`},
			want: []string{`component nodetuning: extra/pp.yaml#0: PerformanceProfile/manual: spec.cpu.isolated "1-3" overlaps spec.cpu.reserved "0-1"`},
		},
		{
			name: "every bad profile of every file",
			files: map[string]string{
				"a.yaml": `apiVersion: performance.openshift.io/v2
kind: PerformanceProfile
metadata: {name: a}
spec:
  cpu: {reserved: "0", isolated: "1", offlined: "x"}
  nodeSelector: {node-role.kubernetes.io/a: ""}
---
apiVersion: performance.openshift.io/v2
kind: PerformanceProfile
metadata: {name: b}
spec:
  cpu: {reserved: "0", isolated: "1", unknown: true}
  nodeSelector: {node-role.kubernetes.io/b: ""}
`,
				"c.yaml": `apiVersion: performance.openshift.io/v2
kind: PerformanceProfile
metadata: {name: c}
spec:
  cpu: {reserved: "0", isolated: "1"}
  nodeSelector: {role: c}
  numa: {topologyPolicy: spread}
`,
			},
			want: []string{
				`component nodetuning: extra/a.yaml#0: PerformanceProfile/a: spec.cpu.offlined "x" is not a CPU list such as "0-3,8": "x": "x" is not a CPU id (a decimal number)`,
				`extra/a.yaml#1: PerformanceProfile/b: strict decoding error: unknown field "spec.cpu.unknown"`,
				`extra/c.yaml#0: PerformanceProfile/c: spec.nodeSelector: label "role" is not <domain>/<role>, to default spec.machineConfigLabel and spec.machineConfigPoolSelector`,
				`extra/c.yaml#0: PerformanceProfile/c: spec.numa.topologyPolicy "spread" is not one of none, best-effort, restricted, single-numa-node`,
			},
		},
		{
			name:   "hosted source ConfigMaps",
			hosted: true,
			files: map[string]string{
				"no-annotation.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: no-annotation
  namespace: hcp
  labels: {hypershift.openshift.io/performanceprofile-config: "true"}
data:
  tuning: |
    apiVersion: performance.openshift.io/v2
    kind: PerformanceProfile
    metadata: {name: a}
    spec:
      cpu: {reserved: "0", isolated: "1"}
      nodeSelector: {node-role.kubernetes.io/a: ""}
`,
				"two-keys.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: two-keys
  namespace: hcp
  labels: {hypershift.openshift.io/performanceprofile-config: "true", hypershift.openshift.io/nodePool: other}
  annotations: {hypershift.openshift.io/nodePool: clusters/pool}
data:
  tuned: "x"
  config: "y"
`,
				"invalid.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: invalid
  namespace: hcp
  labels: {hypershift.openshift.io/performanceprofile-config: "true"}
  annotations: {hypershift.openshift.io/nodePool: clusters/pool}
data:
  config: |
    apiVersion: performance.openshift.io/v2
    kind: PerformanceProfile
    metadata: {name: b}
    spec:
      cpu: {reserved: "0-3", isolated: "3"}
      nodeSelector: {node-role.kubernetes.io/b: ""}
`,
				"not-a-profile.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: not-a-profile
  namespace: hcp
  labels: {hypershift.openshift.io/performanceprofile-config: "true"}
  annotations: {hypershift.openshift.io/nodePool: pool}
data:
  tuned: |
    apiVersion: tuned.openshift.io/v1
    kind: Tuned
    metadata: {name: t}
`,
			},
			want: []string{
				`component nodetuning: extra/invalid.yaml#0: ConfigMap/hcp/invalid: data.config: PerformanceProfile/b: spec.cpu.isolated "3" overlaps spec.cpu.reserved "0-3"`,
				`extra/no-annotation.yaml#0: ConfigMap/hcp/no-annotation: metadata.annotations["hypershift.openshift.io/nodePool"]: required (the NodePool as namespace/name)`,
				`extra/not-a-profile.yaml#0: ConfigMap/hcp/not-a-profile: data.tuned: is tuned.openshift.io/v1 Tuned, want performance.openshift.io/v2 PerformanceProfile`,
				`extra/two-keys.yaml#0: ConfigMap/hcp/two-keys: metadata.labels["hypershift.openshift.io/nodePool"] "other": disagrees with the annotation "clusters/pool"`,
				`extra/two-keys.yaml#0: ConfigMap/hcp/two-keys: data: holds tuned and config: want exactly one of them`,
			},
		},
		{
			name:   "two sources render one RuntimeClass",
			hosted: true,
			files: map[string]string{
				"a.yaml": hostedSource("a", "ns1", "dup"),
				"b.yaml": hostedSource("b", "ns2", "dup"),
			},
			want: []string{`component nodetuning: extra/b.yaml#0: ConfigMap/ns2/b: would write RuntimeClass/performance-dup, which ConfigMap/ns1/a (extra/a.yaml#0) writes too`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			opts := plan.Options{ExtraManifests: fsys}
			if tc.hosted {
				opts.Profile = "hypershift"
			}
			_, err := plan.Build(context.Background(), opts)
			if err == nil {
				t.Fatal("plan.Build succeeded")
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// hostedSource is a source ConfigMap holding a valid profile.
func hostedSource(name, namespace, profile string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata:
  name: ` + name + `
  namespace: ` + namespace + `
  labels: {hypershift.openshift.io/performanceprofile-config: "true", hypershift.openshift.io/nodePool: pool}
  annotations: {hypershift.openshift.io/nodePool: clusters/pool}
data:
  tuning: |
    apiVersion: performance.openshift.io/v2
    kind: PerformanceProfile
    metadata: {name: ` + profile + `}
    spec:
      cpu: {reserved: "0", isolated: "1-3"}
      nodeSelector: {node-role.kubernetes.io/worker-cnf: ""}
`
}

func TestNamingSetting(t *testing.T) {
	_, err := nodetuning.Hook{Naming: "legacy"}.Render(context.Background(), &component.Input{})
	if want := `hypershift naming "legacy": want seed or upstream`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// TestClusterConfigPartitioning: --cluster-config's cpuPartitioning is
// checked where the cluster facts are read.
func TestClusterConfigPartitioning(t *testing.T) {
	doc := "apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata: {name: cluster}\nstatus: {cpuPartitioning: %s}\n"
	for value, want := range map[string]string{
		"AllNodes":   "",
		"None":       "",
		"Everywhere": `cc.yaml: Infrastructure/cluster: status.cpuPartitioning "Everywhere": want None or AllNodes`,
	} {
		_, err := component.ParseClusterConfig("cc.yaml", []byte(fmt.Sprintf(doc, value)))
		if (want == "") != (err == nil) || err != nil && err.Error() != want {
			t.Errorf("%s: err %v, want %q", value, err, want)
		}
	}
}
