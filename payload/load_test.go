package payload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/profiles"
)

const (
	testMetadata = `{"kind": "cincinnati-metadata-v0", "version": "4.22.0"}`
	testImages   = `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.22.0"},
  "spec": {"tags": [{"name": "op", "from": {"kind": "DockerImage", "name": "quay.io/x/op:1"}}]}}`
)

func cmYAML(name string, annotations ...string) string {
	s := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: ns\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
	for _, a := range annotations {
		s += "    " + a + "\n"
	}
	return s
}

func testFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for k, v := range files {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

func TestLoad(t *testing.T) {
	fsys := testFS(map[string]string{
		"release-manifests/release-metadata":         testMetadata,
		"release-manifests/image-references":         testImages,
		"release-manifests/0000_50_b_x.yaml":         cmYAML("b"),
		"release-manifests/0000_10_a_x.yml":          cmYAML("a"),
		"release-manifests/op.image-references":      "not a manifest",
		"release-manifests/README.md":                "not a manifest",
		"release-manifests/sub/0000_01_ignored.yaml": cmYAML("ignored"),
		"manifests/0000_00_cvo_deployment.yaml":      cmYAML("cvo") + "data:\n  image: \"{{.ReleaseImage}}\"\n  profile: \"{{.ClusterProfile}}\"\n  op: '{{index .Images \"op\"}}'\n",
		"manifests/0000_90_cvo_escaped.yaml":         cmYAML("escaped") + "data:\n  expr: '{{`{{ $labels.x }}`}}'\n",
	})
	p, err := Load(context.Background(), fsys, LoadOptions{ClusterProfile: "single-node-developer"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.Manifests() {
		got = append(got, m.Position())
	}
	want := []string{
		"manifests/0000_00_cvo_deployment.yaml#0",
		"manifests/0000_90_cvo_escaped.yaml#0",
		"release-manifests/0000_10_a_x.yml#0",
		"release-manifests/0000_50_b_x.yaml#0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
	data := p.Manifests()[0].Obj.Object["data"]
	wantData := map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.22.0", "profile": "single-node-developer", "op": "quay.io/x/op:1"}
	if diff := cmp.Diff(wantData, data); diff != "" {
		t.Errorf("templated data (-want +got):\n%s", diff)
	}
	if expr := p.Manifests()[1].Obj.Object["data"].(map[string]any)["expr"]; expr != "{{ $labels.x }}" {
		t.Errorf("escaped template = %q", expr)
	}
	// A template that does not render fails the load, as the CVO's render.
	fsys["manifests/0000_00_cvo_broken.yaml"] = &fstest.MapFile{Data: []byte(cmYAML("broken") + "data:\n  x: \"{{.NoSuchField}}\"\n")}
	if _, err := Load(context.Background(), fsys, LoadOptions{}); err == nil || !strings.Contains(err.Error(),
		"manifests/0000_00_cvo_broken.yaml: template did not render (the CVO fails its render on it): template: manifests/0000_00_cvo_broken.yaml:9:8: executing") {
		t.Errorf("broken template: %v, want an error naming the file", err)
	}
	if p.Release.Version != "4.22.0" || *p.Release.MajorVersion() != 4 {
		t.Errorf("release = %+v", p.Release)
	}

	q, err := p.WithProfile(context.Background(), "hypershift")
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Manifests()[0].Obj.Object["data"].(map[string]any)["profile"]; got != "hypershift" {
		t.Errorf("WithProfile: profile = %v", got)
	}
	if q.Files[len(q.Files)-1] != p.Files[len(p.Files)-1] {
		t.Errorf("WithProfile parsed release-manifests again")
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{name: "no payload directories", files: map[string]string{"x.yaml": "a: b"}, want: []string{"payload has neither manifests/ nor release-manifests/"}},
		{name: "missing metadata", files: map[string]string{"release-manifests/image-references": testImages},
			want: []string{"release-manifests/release-metadata: open release-manifests/release-metadata: file does not exist"}},
		{name: "bad metadata kind", files: map[string]string{"release-manifests/release-metadata": `{"kind": "x", "version": "4.1.0"}`, "release-manifests/image-references": strings.Replace(testImages, "4.22.0", "4.1.0", 1)},
			want: []string{`release-manifests/release-metadata: kind is "x", want cincinnati-metadata-v0`}},
		{name: "metadata version not semver", files: map[string]string{"release-manifests/release-metadata": `{"kind": "cincinnati-metadata-v0", "version": "4.22"}`, "release-manifests/image-references": testImages},
			want: []string{`release-manifests/release-metadata: version "4.22" is not semver`}},
		{name: "version mismatch", files: map[string]string{"release-manifests/release-metadata": strings.Replace(testMetadata, "4.22.0", "4.23.0", 1), "release-manifests/image-references": testImages},
			want: []string{`release-manifests/image-references: ImageStream name "4.22.0" differs from the version "4.23.0"`}},
		{name: "image-references not an ImageStream", files: map[string]string{"release-manifests/release-metadata": testMetadata, "release-manifests/image-references": `{"kind": "List", "apiVersion": "v1", "metadata": {"name": "4.22.0"}}`},
			want: []string{"release-manifests/image-references: is v1 List, want image.openshift.io/v1 ImageStream"}},
		{name: "tag without pull spec", files: map[string]string{"release-manifests/release-metadata": testMetadata, "release-manifests/image-references": strings.Replace(testImages, `"from": {"kind": "DockerImage", "name": "quay.io/x/op:1"}`, `"from": {"kind": "DockerImage"}`, 1)},
			want: []string{"release-manifests/image-references: spec.tags[0] (op): from.name (a pull spec) is required"}},
		{name: "every bad file", files: map[string]string{"release-manifests/release-metadata": testMetadata, "release-manifests/image-references": testImages,
			"release-manifests/0000_10_a_x.yaml": "kind: [", "release-manifests/0000_20_b_x.yaml": cmYAML("ok") + "---\nkind: ConfigMap\n"},
			want: []string{"release-manifests/0000_10_a_x.yaml#0: yaml: line 1", "release-manifests/0000_20_b_x.yaml#1: apiVersion is required"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), testFS(tc.files), LoadOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestSelectDuplicates(t *testing.T) {
	fsys := testFS(map[string]string{
		"release-manifests/release-metadata":     testMetadata,
		"release-manifests/image-references":     testImages,
		"release-manifests/0000_10_a_x.yaml":     cmYAML("same", "release.openshift.io/feature-set: Default"),
		"release-manifests/0000_10_a_y.yaml":     cmYAML("same", "release.openshift.io/feature-set: TechPreviewNoUpgrade"),
		"release-manifests/0000_20_b_dup.yaml":   cmYAML("dup"),
		"release-manifests/0000_20_b_dup-2.yaml": cmYAML("dup"),
	})
	p, err := Load(context.Background(), fsys, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := "Default"
	s, err := p.Select(&manifest.Selector{Profiles: []string{profiles.Default}, FeatureSet: &fs})
	var dup *DuplicateError
	if !errors.As(err, &dup) {
		t.Fatalf("error = %v, want a DuplicateError", err)
	}
	want := "release-manifests/0000_20_b_dup.yaml#0: ConfigMap/ns/dup is also defined in release-manifests/0000_20_b_dup-2.yaml#0 (both included)"
	if err.Error() != want {
		t.Errorf("error =\n%s\nwant\n%s", err, want)
	}
	if len(s.Included) != 3 || len(s.Entries) != 4 {
		t.Errorf("included %d of %d, want 3 of 4", len(s.Included), len(s.Entries))
	}
}

// TestWithProfileReusesFiles: WithProfile parses again only the manifests/
// files that render differently for the new profile, and gives what
// loading with that profile gives.
func TestWithProfileReusesFiles(t *testing.T) {
	fsys := testFS(map[string]string{
		"manifests/0000_00_cvo_a-plain.yaml":   cmYAML("plain"),
		"manifests/0000_00_cvo_b-image.yaml":   cmYAML("image", `image: "{{.ReleaseImage}}"`),
		"manifests/0000_00_cvo_c-profile.yaml": cmYAML("profile", `profile: "{{.ClusterProfile}}"`),
		"release-manifests/release-metadata":   testMetadata,
		"release-manifests/image-references":   testImages,
		"release-manifests/0000_50_b_x.yaml":   cmYAML("b"),
	})
	for _, keep := range []bool{false, true} {
		p, err := Load(context.Background(), fsys, LoadOptions{KeepData: keep})
		if err != nil {
			t.Fatal(err)
		}
		q, err := p.WithProfile(context.Background(), "single-node-developer")
		if err != nil {
			t.Fatal(err)
		}
		r, err := q.WithProfile(context.Background(), "hypershift")
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, true, false, true} {
			if got := p.Files[i] == q.Files[i]; got != want {
				t.Errorf("KeepData %v: %s shared: %v, want %v", keep, p.Files[i].Path, got, want)
			}
			if got := q.Files[i] == r.Files[i]; got != want {
				t.Errorf("KeepData %v: %s shared by the second WithProfile: %v, want %v", keep, q.Files[i].Path, got, want)
			}
		}
		fresh, err := Load(context.Background(), fsys, LoadOptions{ClusterProfile: "hypershift", KeepData: keep})
		if err != nil {
			t.Fatal(err)
		}
		summary := func(p *Payload) []string {
			var out []string
			for _, m := range p.Manifests() {
				out = append(out, m.String()+" "+m.Obj.GetAnnotations()["profile"]+" "+m.Obj.GetAnnotations()["image"])
			}
			return out
		}
		if diff := cmp.Diff(summary(fresh), summary(r)); diff != "" {
			t.Errorf("KeepData %v: WithProfile twice differs from Load (-load +WithProfile):\n%s", keep, diff)
		}
	}
}

// TestLoadOnly: a payload loaded for one selection keeps the objects it
// includes whole and only the metadata of the others, and serves no other
// selection.
func TestLoadOnly(t *testing.T) {
	fsys := testFS(map[string]string{
		"release-manifests/release-metadata": testMetadata,
		"release-manifests/image-references": testImages,
		"release-manifests/0000_50_b_x.yaml": cmYAML("in") + "data:\n  a: b\n---\n" + cmYAML("out", `release.openshift.io/feature-set: TechPreviewNoUpgrade`) + "data:\n  a: b\n",
	})
	set := "Default"
	sel := &manifest.Selector{Profiles: []string{profiles.Default}, FeatureSet: &set}
	p, err := Load(context.Background(), fsys, LoadOptions{Only: sel})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Select(&manifest.Selector{Profiles: []string{profiles.Default}, FeatureSet: &set})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range s.Entries {
		got = append(got, fmt.Sprintf("%s included=%v data=%v reason=%q", e.Manifest.ID(), e.Included, e.Manifest.Obj.Object["data"] != nil, e.Reason))
	}
	want := []string{
		`ConfigMap/ns/in included=true data=true reason=""`,
		`ConfigMap/ns/out included=false data=false reason="\"Default\" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	other := "TechPreviewNoUpgrade"
	if _, err := p.Select(&manifest.Selector{Profiles: []string{profiles.Default}, FeatureSet: &other}); err == nil {
		t.Error("Select with another selector: no error")
	}
	if _, err := p.WithProfile(context.Background(), "hypershift"); err == nil {
		t.Error("WithProfile: no error")
	}
}

func TestDigest(t *testing.T) {
	base := fstest.MapFS{
		"manifests/0000_00_a_x.yaml":         {Data: []byte("a: 1\n")},
		"release-manifests/0000_50_b_x.yaml": {Data: []byte("b: 1\n")},
		"release-manifests/release-metadata": {Data: []byte("{}")},
		"other/ignored.yaml":                 {Data: []byte("c: 1\n")},
	}
	d1, err := Digest(context.Background(), base)
	if err != nil || !strings.HasPrefix(d1, "sha256:") || len(d1) != len("sha256:")+64 {
		t.Fatalf("Digest = %q, %v", d1, err)
	}
	same := fstest.MapFS{}
	for k, v := range base {
		same[k] = v
	}
	same["other/ignored.yaml"] = &fstest.MapFile{Data: []byte("changed")}
	if d, _ := Digest(context.Background(), same); d != d1 {
		t.Errorf("a file outside the payload's directories changed the digest")
	}
	for name, change := range map[string]func(fstest.MapFS){
		"changed content": func(f fstest.MapFS) {
			f["release-manifests/0000_50_b_x.yaml"] = &fstest.MapFile{Data: []byte("b: 2\n")}
		},
		"renamed": func(f fstest.MapFS) {
			f["release-manifests/0000_51_b_x.yaml"] = f["release-manifests/0000_50_b_x.yaml"]
			delete(f, "release-manifests/0000_50_b_x.yaml")
		},
		"added":    func(f fstest.MapFS) { f["manifests/0000_00_a_y.yaml"] = &fstest.MapFile{Data: []byte("")} },
		"metadata": func(f fstest.MapFS) { f["release-manifests/release-metadata"] = &fstest.MapFile{Data: []byte("{ }")} },
	} {
		f := fstest.MapFS{}
		for k, v := range base {
			f[k] = v
		}
		change(f)
		if d, err := Digest(context.Background(), f); err != nil || d == d1 {
			t.Errorf("%s: digest %q, %v: want another one", name, d, err)
		}
	}
	if _, err := Digest(context.Background(), fstest.MapFS{"x.yaml": {}}); err == nil {
		t.Error("an empty payload has a digest")
	}
	if d, err := Digest(context.Background(), Embedded()); err != nil || d == "" {
		t.Errorf("embedded: %q, %v", d, err)
	}

	// The definition, with files that shrink and grow one after the other
	// (one buffer serves them all: nothing of one may reach the next).
	sized := fstest.MapFS{
		"manifests/0000_00_a_1.yaml":         {Data: []byte(strings.Repeat("long line\n", 300))},
		"manifests/0000_00_a_2.yaml":         {Data: []byte("short: 1\n")},
		"manifests/0000_00_a_3.yaml":         {Data: []byte{}},
		"release-manifests/0000_50_b_x.yaml": {Data: []byte(strings.Repeat("x", 5000))},
		"release-manifests/release-metadata": {Data: []byte("{}")},
	}
	h := sha256.New()
	for _, name := range []string{"manifests/0000_00_a_1.yaml", "manifests/0000_00_a_2.yaml", "manifests/0000_00_a_3.yaml",
		"release-manifests/0000_50_b_x.yaml", "release-manifests/release-metadata"} {
		fmt.Fprintf(h, "%s\n%d\n", name, len(sized[name].Data))
		h.Write(sized[name].Data)
	}
	if d, err := Digest(context.Background(), sized); err != nil || d != "sha256:"+hex.EncodeToString(h.Sum(nil)) {
		t.Errorf("Digest = %q, %v; want sha256:%x", d, err, h.Sum(nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Digest(ctx, sized); !errors.Is(err, context.Canceled) {
		t.Errorf("Digest after Ctrl-C: %v, want context.Canceled", err)
	}
}
