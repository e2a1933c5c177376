package main

import (
	"strings"
	"testing"
)

func TestRBACCommand(t *testing.T) {
	out, errOut, code := runCLI(t, "rbac", "--name", "installer")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kind: ClusterRole", "name: installer", "- deployments", "- customresourcedefinitions", "- watch", "- escalate", "- clusteroperators"} {
		if !strings.Contains(out, want) {
			t.Errorf("rbac output lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := runCLI(t, "rbac", "--name", ""); code != exitUsage || !strings.Contains(errOut, "--name: want a name") {
		t.Errorf("empty --name: exit %d: %s", code, errOut)
	}
}
