package hostile

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// AliasBomb returns the keys of a YAML alias bomb ("billion laughs"), one
// a line, each line starting with indent: levels keys "a", "b", …, the
// first an anchored list of nine strings, each other one a list of nine
// aliases of the one before, so that the last expands to 9^levels
// strings. levels is at most 26.
func AliasBomb(levels int, indent string) string {
	var b strings.Builder
	for i := range levels {
		key := string(rune('a' + i))
		item := `"lol"`
		if i > 0 {
			item = "*" + string(rune('a'+i-1))
		}
		fmt.Fprintf(&b, "%s%s: &%s [%s]\n", indent, key, key, strings.TrimSuffix(strings.Repeat(item+",", 9), ","))
	}
	return b.String()
}

// AliasBombConfigMap is a ConfigMap name in namespace whose data holds an
// alias bomb of eight levels (9^8 strings).
func AliasBombConfigMap(name, namespace string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + namespace + "}\ndata:\n" + AliasBomb(8, "  ")
}

// Nested returns inner wrapped in depth levels of open and close:
// Nested("[", "1", "]", 3) is "[[[1]]]".
func Nested(open, inner, close string, depth int) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
}

// Padded returns doc with a data key holding one string of n "x"s
// appended, to make a document or a file larger than a limit: the result
// is len(doc) + n + 12 bytes long.
func Padded(doc string, n int) string {
	return doc + "data: {x: " + strings.Repeat("x", n) + "}\n"
}

// FIFO, as a WriteTree value, makes a named pipe with no writer: opening it
// for reading blocks for good.
const FIFO = "\x00fifo"

// WriteTree writes files under dir: each key a slash-separated path
// relative to dir (it may climb out of dir with "../", to put something
// beside a payload), each value the file's content, "-> TARGET" for a
// symbolic link to TARGET, or FIFO for a named pipe. When several maps name
// the same path, the last one wins.
func WriteTree(t testing.TB, dir string, files ...map[string]string) {
	t.Helper()
	all := map[string]string{}
	for _, f := range files {
		maps.Copy(all, f)
	}
	for name, body := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "-> "); ok {
			err = os.Symlink(target, p)
		} else if body == FIFO {
			err = syscall.Mkfifo(p, 0o644)
		} else {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Entry is one entry of the layer Archive writes.
type Entry struct {
	// Name is the entry's path in the layer, as written (it may climb out
	// with "../").
	Name string
	// Body is the content of a regular file.
	Body string
	// Link is the target of a symbolic or hard link.
	Link string
	// Type is the tar type flag; zero means a regular file.
	Type byte
}

// Archive writes a docker-archive (docker save's format, tagged
// release:latest) of an image whose one layer holds entries,
// in order, and returns its path, in a new temporary directory.
func Archive(t testing.TB, entries ...Entry) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		typ := e.Type
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.Name, Typeflag: typ, Linkname: e.Link, Mode: 0o644}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(e.Body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("release:latest")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hostile.tar")
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		t.Fatal(err)
	}
	return path
}
