package payload

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payload-apply/payload-apply/internal/hostile"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// TestLoadHostile loads hostile payload directories, through os.DirFS and
// through an os.Root (as the command opens them): each is refused with an
// error naming the file and what is wrong, and nothing from outside the
// payload directory is loaded.
func TestLoadHostile(t *testing.T) {
	base := map[string]string{
		"release-manifests/release-metadata":   testMetadata,
		"release-manifests/image-references":   testImages,
		"release-manifests/0000_10_a_ok.yaml":  cmYAML("ok"),
		"../outside/0000_10_x_stolen.yaml":     cmYAML("stolen"),
		"../outside/release-manifests/x.yaml":  cmYAML("stolen"),
		"../outside/release-metadata":          testMetadata,
		"../outside/release-manifests/padding": "",
	}
	tests := []struct {
		name  string
		files map[string]string
		opts  LoadOptions
		want  string // in the DirFS error
		link  bool   // the error wraps ErrLinkEscapes
		limit bool   // the error wraps manifest.ErrLimit
	}{
		{name: "link to an absolute path", files: map[string]string{"release-manifests/0000_20_b_x.yaml": "-> /etc/passwd"},
			want: "release-manifests/0000_20_b_x.yaml: symbolic link leads outside the payload directory: release-manifests/0000_20_b_x.yaml -> /etc/passwd", link: true},
		{name: "link climbing out", files: map[string]string{"release-manifests/0000_20_b_x.yaml": "-> ../../outside/0000_10_x_stolen.yaml"},
			want: "release-manifests/0000_20_b_x.yaml: symbolic link leads outside the payload directory", link: true},
		{name: "link through a link", files: map[string]string{"release-manifests/0000_20_b_x.yaml": "-> hop.yml.txt", "release-manifests/hop.yml.txt": "-> ../../outside/0000_10_x_stolen.yaml"},
			want: "release-manifests/0000_20_b_x.yaml: symbolic link leads outside the payload directory: release-manifests/hop.yml.txt -> ../../outside", link: true},
		{name: "link loop", files: map[string]string{"release-manifests/0000_20_b_x.yaml": "-> 0000_20_b_y.yaml", "release-manifests/0000_20_b_y.yaml": "-> 0000_20_b_x.yaml"},
			want: "release-manifests/0000_20_b_x.yaml: more than 40 symbolic links to follow"},
		{name: "metadata linked out", files: map[string]string{"release-manifests/release-metadata": "-> ../../outside/release-metadata"},
			want: "release-manifests/release-metadata: symbolic link leads outside the payload directory", link: true},
		{name: "directory linked out", files: map[string]string{"manifests": "-> ../outside/release-manifests"},
			want: "manifests: symbolic link leads outside the payload directory: manifests -> ../outside/release-manifests", link: true},
		{name: "file above the size limit", files: map[string]string{"release-manifests/0000_20_b_big.yaml": hostile.Padded(cmYAML("big"), 2000)},
			opts: LoadOptions{Limits: manifest.Limits{MaxFileSize: 1000}}, want: "release-manifests/0000_20_b_big.yaml: file size 2168 bytes exceeds the limit of 1000", limit: true},
		{name: "payload above the size limit", files: map[string]string{"release-manifests/0000_20_b_x.yaml": cmYAML("x"), "release-manifests/0000_30_c_x.yaml": cmYAML("y")},
			opts: LoadOptions{MaxPayloadSize: 400}, want: "release-manifests/0000_30_c_x.yaml: payload size 463 bytes exceeds the limit of 400", limit: true},
		{name: "too many files", files: map[string]string{"release-manifests/0000_20_b_x.yaml": cmYAML("x"), "release-manifests/0000_30_c_x.yaml": cmYAML("y")},
			opts: LoadOptions{MaxFiles: 2}, want: ".: more than 2 files (the file count limit)", limit: true},
		{name: "template that multiplies out", files: map[string]string{"manifests/0000_00_cvo_x.yaml": cmYAML("t") + "data:\n" +
			`{{range .Images}}{{range $.Images}}{{range $.Images}}{{range $.Images}}{{range $.Images}}{{range $.Images}}{{range $.Images}}{{range $.Images}}  x: "` + strings.Repeat("y", 1000) + `"{{end}}{{end}}{{end}}{{end}}{{end}}{{end}}{{end}}{{end}}`,
			"release-manifests/image-references": strings.Replace(testImages, `"tags": [`, `"tags": [{"name": "i1", "from": {"kind": "DockerImage", "name": "q"}},
  {"name": "i2", "from": {"kind": "DockerImage", "name": "q"}}, {"name": "i3", "from": {"kind": "DockerImage", "name": "q"}},`, 1)},
			opts: LoadOptions{Limits: manifest.Limits{MaxFileSize: 2000}}, want: "manifests/0000_00_cvo_x.yaml: rendered file size", limit: true},
		{name: "release-metadata with data after the object", files: map[string]string{"release-manifests/release-metadata": testMetadata + "\n{}"},
			want: "release-manifests/release-metadata: not valid JSON: data after the object"},
		{name: "image-references with an unknown field", files: map[string]string{"release-manifests/image-references": strings.Replace(testImages, `"spec"`, `"spek": {}, "spec"`, 1)},
			want: `release-manifests/image-references: not an ImageStream: error unmarshaling JSON: while decoding JSON: json: unknown field "spek"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "payload")
			hostile.WriteTree(t, dir, base, tc.files)
			r, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, fsys := range []struct {
				name string
				fs   fs.FS
			}{{"DirFS", os.DirFS(dir)}, {"Root", r.FS()}} {
				p, err := Load(context.Background(), fsys.fs, tc.opts)
				if err == nil {
					t.Fatalf("%s: no error", fsys.name)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v\nwant %q", fsys.name, err, tc.want)
				}
				if got := errors.Is(err, ErrLinkEscapes); got != tc.link {
					t.Errorf("%s: errors.Is(err, ErrLinkEscapes) = %v, want %v", fsys.name, got, tc.link)
				}
				if got := errors.Is(err, manifest.ErrLimit); got != tc.limit {
					t.Errorf("%s: errors.Is(err, ErrLimit) = %v, want %v", fsys.name, got, tc.limit)
				}
				if p != nil {
					for _, m := range p.Manifests() {
						if m.Obj.GetName() == "stolen" {
							t.Errorf("%s: loaded %s from outside the payload", fsys.name, m)
						}
					}
				}
			}
		})
	}
}

// TestLoadFollowsLinksInside: links that stay in the payload directory
// are followed.
func TestLoadFollowsLinksInside(t *testing.T) {
	dir := t.TempDir()
	hostile.WriteTree(t, dir, map[string]string{
		"release-manifests/release-metadata": testMetadata,
		"release-manifests/image-references": testImages,
		"shared/0000_10_a_x.yaml":            cmYAML("linked"),
		"release-manifests/0000_10_a_x.yaml": "-> ../shared/0000_10_a_x.yaml",
		"release-manifests/0000_10_a_y.yaml": "-> ./sub/../0000_10_a_x.yaml",
		"release-manifests/sub/.placeholder": "",
	})
	p, err := Load(context.Background(), os.DirFS(dir), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Manifests()); n != 2 {
		t.Errorf("%d manifests, want the linked one twice", n)
	}
}
