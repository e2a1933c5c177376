package controlplane

import (
	"slices"
	"testing"
)

func TestControllerNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", nil, nil},
		{"suffix added", []string{"namespace", "garbage-collector"}, []string{"namespace-controller", "garbage-collector-controller"}},
		{"suffix kept", []string{"replicaset-controller"}, []string{"replicaset-controller"}},
		{"comma list", []string{"namespace, deployment", ""}, []string{"namespace-controller", "deployment-controller"}},
		{"all and negation", []string{"*", "-ttl"}, []string{"*", "-ttl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := controllerNames(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("controllerNames(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEnsurePKIReuses(t *testing.T) {
	dir := t.TempDir()
	first, err := ensurePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	second, err := ensurePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	if string(first.caPEM) != string(second.caPEM) || first.adminToken != second.adminToken || first.kcmToken != second.kcmToken {
		t.Error("second ensurePKI did not reuse the first one's CA and tokens")
	}
	if first.adminToken == first.kcmToken {
		t.Error("admin and controller-manager tokens are equal")
	}
}
