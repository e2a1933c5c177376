package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/golden"
	"github.com/payload-apply/payload-apply/payload"
)

const (
	poExtra   = "testdata/platformoperators/extra"
	poCatalog = "testdata/platformoperators/catalog"
)

// pomLines returns the lines of render --list that belong to the platform
// operators manager or its PlatformOperators and BundleDeployments.
func pomLines(list string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Split(l, "\t")
		if len(f) == 7 && (f[1] == "cluster-platform-operators-manager" || f[4] == "PlatformOperator" || f[4] == "BundleDeployment") {
			out = append(out, l)
		}
	}
	return out
}

func TestPlatformOperatorsManagerOnlyInTechPreview(t *testing.T) {
	for _, fs := range []string{"Default", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD"} {
		t.Run(fs, func(t *testing.T) {
			out, errOut, code := runCLI(t, "render", "--list", "--feature-set", fs)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := pomLines(out); len(got) > 0 {
				t.Errorf("the manager is in the %s plan:\n%s", fs, strings.Join(got, "\n"))
			}
		})
	}
	t.Run("TechPreviewNoUpgrade", func(t *testing.T) {
		out, errOut, code := runCLI(t, "render", "--list", "--feature-set", "TechPreviewNoUpgrade")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got []string
		for _, l := range pomLines(out) {
			f := strings.Split(l, "\t")
			got = append(got, f[0]+" "+f[4]+" "+f[6])
		}
		want := []string{
			"50 Namespace openshift-platform-operators",
			"50 CustomResourceDefinition platformoperators.platform.openshift.io",
			"50 CustomResourceDefinition bundledeployments.core.rukpak.io",
			"50 ServiceAccount platform-operators-controller-manager",
			"50 ClusterRole platform-operators-manager-role",
			"50 ClusterRoleBinding platform-operators-manager-rolebinding",
			"50 ClusterRole platform-operators-proxy-role",
			"50 ClusterRoleBinding platform-operators-proxy-rolebinding",
			"50 Role platform-operators-leader-election-role",
			"50 RoleBinding platform-operators-leader-election-rolebinding",
			"50 Deployment platform-operators-controller-manager",
			"50 ClusterOperator platform-operators-aggregated",
			"50 ClusterOperator platform-operators-core",
		}
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("manager objects (-want +got):\n%s", diff)
		}
	})
}

func TestRenderPlatformOperators(t *testing.T) {
	args := []string{"render", "--feature-set", "TechPreviewNoUpgrade", "--extra-manifests", poExtra, "--catalog", poCatalog}
	t.Run("list", func(t *testing.T) {
		out, errOut, code := runCLI(t, append(args, "--list")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		golden.AssertTestdata(t, "list.tsv", strings.Join(pomLines(out), "\n")+"\n")
	})
	t.Run("yaml-v1alpha1", func(t *testing.T) {
		// A payload whose rukpak serves v1alpha1, as OpenShift 4.12's did.
		dir := t.TempDir()
		if err := os.CopyFS(dir, payload.Embedded()); err != nil {
			t.Fatal(err)
		}
		crd, err := os.ReadFile("../../components/platformoperators/testdata/crds/rukpak-v0.9.0-bundledeployments.crd.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "release-manifests", "0000_50_cluster-platform-operators-manager_00-rukpak-bundledeployments.crd.yaml"), crd, 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI(t, append(args, "--payload", dir, "--bundle-deployment-shape", "v1alpha1")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var docs []string
		for _, d := range strings.Split(out, "---\n") {
			if strings.Contains(d, "\nkind: BundleDeployment\n") {
				docs = append(docs, d)
			}
		}
		golden.AssertTestdata(t, "bundledeployments.yaml", strings.Join(docs, "---\n"))
	})
	t.Run("v1alpha1 with the embedded payload, whose rukpak serves v1alpha2", func(t *testing.T) {
		_, errOut, code := runCLI(t, append(args, "--bundle-deployment-shape", "v1alpha1")...)
		if code != 1 || !strings.Contains(errOut, "bundledeployments.core.rukpak.io: serves v1alpha2, not v1alpha1") {
			t.Errorf("exit %d, stderr:\n%s", code, errOut)
		}
	})
	t.Run("default feature set", func(t *testing.T) {
		_, errOut, code := runCLI(t, "render", "--extra-manifests", poExtra, "--catalog", poCatalog)
		if code != 1 || !strings.Contains(errOut, "extra/platformoperators.yaml#0: PlatformOperator.platform.openshift.io/cert-manager: platform operators need the TechPreviewNoUpgrade feature set") {
			t.Errorf("exit %d, stderr:\n%s", code, errOut)
		}
	})
	for name, extra := range map[string][]string{
		"bad shape":       {"--bundle-deployment-shape", "v3"},
		"missing catalog": {"--catalog", "testdata/platformoperators/nope"},
		"catalog is file": {"--catalog", poCatalog + "/index.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			_, errOut, code := runCLI(t, append(args, extra...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr:\n%s", code, errOut)
			}
		})
	}
}
