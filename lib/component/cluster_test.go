package component

import (
	"strings"
	"testing"
)

func TestParseClusterConfigErrors(t *testing.T) {
	infra := "apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata: {name: cluster}\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"a list where a string belongs", infra + "status: {controlPlaneTopology: [SingleReplica]}\n",
			"cc.yaml#0: Infrastructure.config.openshift.io/cluster: status.controlPlaneTopology: want a string, not a list"},
		{"an object where a string belongs", infra + "status: {platformStatus: {type: {x: 1}}}\n",
			"status.platformStatus.type: want a string, not an object"},
		{"a field the type lacks", infra + "status: {controlPlaneTopolgy: SingleReplica}\n", `unknown field "status.controlPlaneTopolgy"`},
		{"another name", "apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata: {name: x}\n", `must be named "cluster"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseClusterConfig("cc.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestParseClusterConfigClusterVersion: the ClusterVersion "version" is
// read (its overrides exclude objects from the plan); another name is an
// error naming the file and document.
func TestParseClusterConfigClusterVersion(t *testing.T) {
	const infra = "apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata: {name: cluster}\n---\n"
	c, err := ParseClusterConfig("cc.yaml", []byte(infra+`apiVersion: config.openshift.io/v1
kind: ClusterVersion
metadata: {name: version}
spec:
  clusterID: 6d1f3e6a-0000-4000-8000-000000000000
  overrides: [{kind: Deployment, group: apps, namespace: ns, name: op, unmanaged: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.ClusterVersion.Spec.Overrides; len(o) != 1 || !o[0].Unmanaged || o[0].Name != "op" {
		t.Errorf("overrides %+v", o)
	}
	_, err = ParseClusterConfig("cc.yaml", []byte(infra+"apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nmetadata: {name: other}\n"))
	if err == nil || !strings.Contains(err.Error(), `cc.yaml#1: ClusterVersion.config.openshift.io/other: want config.openshift.io/v1 ClusterVersion named "version"`) {
		t.Errorf("err = %v", err)
	}
}
