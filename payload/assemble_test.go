package payload_test

import (
	"context"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/payload"
)

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: ns\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n"

func refs(name string, tags ...string) string {
	var b strings.Builder
	b.WriteString("kind: ImageStream\napiVersion: image.openshift.io/v1\n")
	if name != "" {
		b.WriteString("metadata:\n  name: " + name + "\n")
	}
	b.WriteString("spec:\n  tags:\n")
	for _, t := range tags {
		n, spec, _ := strings.Cut(t, "=")
		b.WriteString("  - name: " + n + "\n    from:\n      kind: DockerImage\n      name: " + spec + "\n")
	}
	return b.String()
}

func dir(files ...string) fs.FS {
	m := fstest.MapFS{}
	for i := 0; i+1 < len(files); i += 2 {
		m[files[i]] = &fstest.MapFile{Data: []byte(files[i+1])}
	}
	return m
}

func releaseFiles(a *payload.Assembly) []string {
	var out []string
	for name := range a.Files {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func TestAssembleNaming(t *testing.T) {
	tests := []struct {
		name    string
		sources []payload.Source
		want    []string
		skipped []string
	}{
		{
			name: "files without 0000_ get the component prefix",
			sources: []payload.Source{{Path: "src/ingress", FS: dir(
				"deployment.yaml", cm,
				"0000_10_ingress_crd.yaml", cm,
				"README.md", "docs",
				"sub/ignored.yaml", cm,
			)}},
			want: []string{
				"release-manifests/0000_10_ingress_crd.yaml",
				"release-manifests/0000_50_ingress_deployment.yaml",
				"release-manifests/image-references",
				"release-manifests/release-metadata",
			},
			skipped: []string{
				"src/ingress/README.md: not a manifest (.yaml, .yml or .json)",
				"src/ingress/sub: directory (the CVO reads only the top level)",
			},
		},
		{
			name: "a clash gets _2 then _3, components in name order",
			sources: []payload.Source{
				{Path: "c", FS: dir("0000_10_x_crd.yaml", cm)},
				{Path: "a", FS: dir("0000_10_x_crd.yaml", cm)},
				{Path: "b", FS: dir("0000_10_x_crd.yaml", cm, "0000_10_x_crd_2.yaml", cm)},
			},
			want: []string{
				"release-manifests/0000_10_x_crd.yaml",   // a
				"release-manifests/0000_10_x_crd_2.yaml", // b
				"release-manifests/0000_10_x_crd_2_2.yaml",
				"release-manifests/0000_10_x_crd_3.yaml", // c
				"release-manifests/image-references",
				"release-manifests/release-metadata",
			},
		},
		{
			name: "NAME=DIR and image-references metadata.name name the component",
			sources: []payload.Source{
				{Path: "repo/manifests", FS: dir("a.yaml", cm), Component: "dns"},
				{Path: "other/manifests", FS: dir("a.yaml", cm, "image-references", refs("network"))},
			},
			want: []string{
				"release-manifests/0000_50_dns_a.yaml",
				"release-manifests/0000_50_network_a.yaml",
				"release-manifests/image-references",
				"release-manifests/release-metadata",
			},
		},
		{
			name: "a payload directory keeps its names and loses its release-metadata",
			sources: []payload.Source{
				{Path: "extracted", FS: dir(
					"manifests/0000_00_cvo_ns.yaml", cm,
					"manifests/cvo.image-references", "kept as is",
					"release-manifests/odd-name.yaml", cm,
					"release-manifests/0000_50_x_a.yaml", cm,
					"release-manifests/release-metadata", `{"kind":"cincinnati-metadata-v0","version":"1.0.0"}`,
					"release-manifests/image-references", refs("1.0.0", "cli=quay.io/o/cli:1"),
				)},
				{Path: "x", FS: dir("a.yaml", cm)},
			},
			want: []string{
				"manifests/0000_00_cvo_ns.yaml",
				"manifests/cvo.image-references",
				"release-manifests/0000_50_x_a.yaml",
				"release-manifests/0000_50_x_a_2.yaml",
				"release-manifests/image-references",
				"release-manifests/odd-name.yaml",
				"release-manifests/release-metadata",
			},
			skipped: []string{"extracted/release-manifests/release-metadata: replaced by the new release's metadata"},
		},
		{
			name: "CVO manifests are copied as they are",
			sources: []payload.Source{
				{Path: "install", FS: dir("0000_00_cvo_deployment.yaml", cm+"data:\n  image: {{.ReleaseImage}}\n", "image-references", refs("", "cvo=quay.io/o/cvo:1")), Kind: payload.SourceCVO},
			},
			want: []string{
				"manifests/0000_00_cvo_deployment.yaml",
				"release-manifests/image-references",
				"release-manifests/release-metadata",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := payload.Assemble(tc.sources, payload.AssembleOptions{Version: "4.22.0"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, releaseFiles(a)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, a.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			// The result loads, and its metadata agrees with itself.
			p, err := payload.Load(context.Background(), a.FS(), payload.LoadOptions{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if p.Release.Version != "4.22.0" || p.ImageStream.Name != "4.22.0" {
				t.Errorf("version %q, ImageStream %q, want 4.22.0", p.Release.Version, p.ImageStream.Name)
			}
		})
	}
}

func TestAssembleImageReferences(t *testing.T) {
	a, err := payload.Assemble([]payload.Source{
		{Path: "b", FS: dir("x.yaml", cm, "image-references", refs("", "cli=quay.io/o/cli:1", "b-op=quay.io/o/b:1"))},
		{Path: "a", FS: dir("x.yaml", cm, "image-references", refs("", "cli=quay.io/o/cli:1", "a-op=quay.io/o/a:1"))},
	}, payload.AssembleOptions{Version: "4.22.0-rc.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "kind": "ImageStream",
  "apiVersion": "image.openshift.io/v1",
  "metadata": {
    "name": "4.22.0-rc.1"
  },
  "spec": {
    "tags": [
      {
        "name": "a-op",
        "from": {
          "kind": "DockerImage",
          "name": "quay.io/o/a:1"
        }
      },
      {
        "name": "b-op",
        "from": {
          "kind": "DockerImage",
          "name": "quay.io/o/b:1"
        }
      },
      {
        "name": "cli",
        "from": {
          "kind": "DockerImage",
          "name": "quay.io/o/cli:1"
        }
      }
    ]
  }
}
`
	if diff := cmp.Diff(want, string(a.Files["release-manifests/image-references"])); diff != "" {
		t.Errorf("image-references (-want +got):\n%s", diff)
	}
	wantMeta := "{\n  \"kind\": \"cincinnati-metadata-v0\",\n  \"version\": \"4.22.0-rc.1\"\n}\n"
	if diff := cmp.Diff(wantMeta, string(a.Files["release-manifests/release-metadata"])); diff != "" {
		t.Errorf("release-metadata (-want +got):\n%s", diff)
	}
}

func TestAssembleErrors(t *testing.T) {
	tests := []struct {
		name    string
		sources []payload.Source
		version string
		want    []string // substrings of the error
	}{
		{
			name:    "version required",
			sources: []payload.Source{{Path: "a", FS: dir("x.yaml", cm)}},
			want:    []string{"release version: is required"},
		},
		{
			name:    "version not semver",
			sources: []payload.Source{{Path: "a", FS: dir("x.yaml", cm)}},
			version: "4.22",
			want:    []string{`release version "4.22": not semver`},
		},
		{
			name: "conflicting tags name both sources",
			sources: []payload.Source{
				{Path: "one", FS: dir("image-references", refs("", "cli=quay.io/o/cli:1"))},
				{Path: "two", FS: dir("image-references", refs("", "cli=quay.io/o/cli:2"))},
			},
			want: []string{`image-references: tag "cli": conflicting pull specs "quay.io/o/cli:1" from one/image-references and "quay.io/o/cli:2" from two/image-references`},
		},
		{
			name: "bad image-references",
			sources: []payload.Source{
				{Path: "one", FS: dir("image-references", "kind: ConfigMap\napiVersion: v1\n")},
			},
			want: []string{"one/image-references: is v1 ConfigMap, want image.openshift.io/v1 ImageStream"},
		},
		{
			name: "component given twice",
			sources: []payload.Source{
				{Path: "x/manifests", FS: dir("a.yaml", cm)},
				{Path: "y/manifests", FS: dir("b.yaml", cm)},
			},
			want: []string{`component "manifests": given by both x/manifests and y/manifests: name one of them with NAME=DIR`},
		},
		{
			name:    "component name the task graph cannot parse",
			sources: []payload.Source{{Path: "my_operator", FS: dir("a.yaml", cm)}},
			want:    []string{`my_operator: component name "my_operator" (from the directory's base name)`},
		},
		{
			name: "two CVO sources",
			sources: []payload.Source{
				{Path: "p", FS: dir("manifests/0000_00_cvo_a.yaml", cm, "release-manifests/0000_50_x_a.yaml", cm)},
				{Path: "install", FS: dir("0000_00_cvo_a.yaml", cm), Kind: payload.SourceCVO},
			},
			want: []string{"manifests/0000_00_cvo_a.yaml: given by both p/manifests/0000_00_cvo_a.yaml and install/0000_00_cvo_a.yaml"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			version := tc.version
			if version == "" && tc.name != "version required" {
				version = "4.22.0"
			}
			_, err := payload.Assemble(tc.sources, payload.AssembleOptions{Version: version})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
