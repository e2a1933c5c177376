package hostile

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestAliasBomb(t *testing.T) {
	want := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
`
	if got := AliasBomb(3, ""); got != want {
		t.Errorf("AliasBomb(3, \"\") =\n%s\nwant\n%s", got, want)
	}
	cm := AliasBombConfigMap("lol", "ns")
	if !strings.HasPrefix(cm, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol, namespace: ns}\ndata:\n  a: &a [") ||
		!strings.HasSuffix(cm, "  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n") {
		t.Errorf("AliasBombConfigMap:\n%s", cm)
	}
}

func TestNestedAndPadded(t *testing.T) {
	if got := Nested("{a: ", "1", "}", 2); got != "{a: {a: 1}}" {
		t.Errorf("Nested = %q", got)
	}
	doc := "kind: ConfigMap\n"
	if got := Padded(doc, 3); got != doc+"data: {x: xxx}\n" || len(got) != len(doc)+3+12 {
		t.Errorf("Padded = %q", got)
	}
}

func TestWriteTree(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "payload")
	WriteTree(t, dir, map[string]string{"a/f": "one", "l": "-> a/f", "../beside": "x"}, map[string]string{"a/f": "two"})
	if b, err := os.ReadFile(filepath.Join(dir, "a/f")); err != nil || string(b) != "two" {
		t.Errorf("a/f: %q, %v; want the last map's content", b, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "l")); err != nil || target != "a/f" {
		t.Errorf("l: link to %q, %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(root, "beside")); err != nil {
		t.Errorf("../beside: %v", err)
	}
}

func TestArchive(t *testing.T) {
	p := Archive(t, Entry{Name: "release-manifests/x.yaml", Body: "kind: X\n"},
		Entry{Name: "release-manifests/l.yaml", Type: tar.TypeSymlink, Link: "/etc/passwd"})
	img, err := tarball.ImageFromPath(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		got = append(got, h.Name+" "+string(h.Typeflag)+" "+h.Linkname)
	}
	want := "release-manifests/x.yaml 0 |release-manifests/l.yaml 2 /etc/passwd"
	if strings.Join(got, "|") != want {
		t.Errorf("entries %q, want %q", got, want)
	}
}
