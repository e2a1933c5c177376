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
