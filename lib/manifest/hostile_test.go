package manifest

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payload-apply/payload-apply/internal/hostile"
	"github.com/payload-apply/payload-apply/lib/safefs"
)

// billionLaughs is the YAML alias bomb: nine levels of nine aliases expand
// to 9^9 strings.
var billionLaughs = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\n" + hostile.AliasBomb(9, "")

const okDoc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n"

func nested(open, close string, n int) string {
	return okDoc + "data: " + hostile.Nested(open, "1", close, n) + "\n"
}

// TestParseHostile feeds Parse hostile files: each is refused with an
// error naming the file and document and saying what is wrong, quickly and
// without exhausting memory; the good documents of the file still parse.
func TestParseHostile(t *testing.T) {
	small := Limits{MaxFileSize: 1 << 20, MaxDocumentSize: 4 << 10, MaxDepth: 16}
	tests := []struct {
		name   string
		data   string
		limits Limits
		want   string
		limit  bool // the error wraps ErrLimit
		good   int  // manifests still returned
	}{
		{name: "alias bomb", data: okDoc + "---\n" + billionLaughs, want: "f.yaml#1: yaml: document contains excessive aliasing", good: 1},
		{name: "alias bomb in JSON-looking YAML", data: "{" + strings.TrimSuffix(strings.ReplaceAll(hostile.AliasBomb(9, ""), "\n", ", "), ", ") + "}",
			want: "f.yaml#0: yaml: document contains excessive aliasing"},
		{name: "nested past go-yaml's depth", data: nested("[", "]", 10001), want: "f.yaml#0: yaml: line 4: exceeded max depth of 10000"},
		{name: "nested lists past the depth limit", data: nested("[", "]", 200), want: "f.yaml#0: nested more than 128 levels deep (the depth limit)", limit: true},
		{name: "nested maps past the depth limit", data: okDoc + "---\n" + nested("{a: ", "}", 200), want: "f.yaml#1: nested more than 128 levels deep (the depth limit)", limit: true, good: 1},
		{name: "nested JSON past the depth limit", data: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":` + hostile.Nested("[", "", "]", 500) + "}",
			want: "f.yaml#0: nested more than 128 levels deep (the depth limit)", limit: true},
		{name: "nested within a small limit", data: nested("[", "]", 14), limits: small, good: 1},
		{name: "nested past a small limit", data: nested("[", "]", 16), limits: small, want: "f.yaml#0: nested more than 16 levels deep", limit: true},
		{name: "document above the size limit", data: okDoc + "---\n" + hostile.Padded(okDoc, 5000), limits: small,
			want: "f.yaml#1: document size 5064 bytes exceeds the limit of 4096", limit: true, good: 1},
		{name: "file above the size limit", data: strings.Repeat(okDoc+"---\n", 300), limits: Limits{MaxFileSize: 10 << 10},
			want: "f.yaml: file size 16800 bytes exceeds the limit of 10240", limit: true},
		{name: "not UTF-8", data: okDoc + "data: {x: \"\xff\xfe\"}\n", want: "f.yaml: file is not valid UTF-8"},
		{name: "UTF-16", data: "\xff\xfea\x00p\x00i\x00", want: "f.yaml: file is not valid UTF-8"},
		{name: "NUL bytes", data: okDoc + "data: {x: \"\x00\"}\n", want: "f.yaml#0: yaml: control characters are not allowed"},
		{name: "namespace a number", data: okDoc + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: num, namespace: 7}\n",
			want: "f.yaml#1: ConfigMap/num: metadata.namespace: must be a string, not the number 7", good: 1},
		{name: "annotation a number", data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {include.release.openshift.io/x: \"true\", replicas: 3}\n",
			want: "f.yaml#0: ConfigMap/a: metadata.annotations[replicas]: must be a string, not the number 3 (quote it)"},
		{name: "annotation a boolean", data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {include.release.openshift.io/x: true}\n",
			want: "f.yaml#0: ConfigMap/a: metadata.annotations[include.release.openshift.io/x]: must be a string, not the boolean true (quote it)"},
		{name: "labels a list", data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: [a, b]\n",
			want: "f.yaml#0: ConfigMap/a: metadata.labels: must be a map of strings, not a list"},
		{name: "label a number and namespace a map", data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: {x: y}\n  labels: {tier: 1}\n",
			want: "f.yaml#0: ConfigMap/a: metadata.labels[tier]: must be a string, not the number 1 (quote it); metadata.namespace: must be a string, not a map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := Parse("f.yaml", []byte(tc.data), ParseOptions{Limits: tc.limits})
			if len(ms) != tc.good {
				t.Errorf("%d manifests, want %d", len(ms), tc.good)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant one starting %q", err, tc.want)
			}
			if got := errors.Is(err, ErrLimit); got != tc.limit {
				t.Errorf("errors.Is(err, ErrLimit) = %v, want %v", got, tc.limit)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "f.yaml" {
				t.Errorf("error is not a *ParseError naming the file: %#v", err)
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	var zero Limits
	if got := zero.withDefaults(); got != DefaultLimits() {
		t.Errorf("zero Limits = %+v, want the defaults %+v", got, DefaultLimits())
	}
	d := DefaultLimits()
	if d.MaxDocumentSize > int(d.MaxFileSize) || d.MaxDepth < 41 {
		t.Errorf("defaults %+v: a document limit above the file limit, or a depth the real payload (40) does not fit", d)
	}
}

// endlessFS serves one file, "fifo", that never ends and has no size.
type endlessFS struct{}

type endless struct{ info fs.FileInfo }

func (endlessFS) Open(name string) (fs.File, error) {
	switch name {
	case "fifo":
		return endless{fifoInfo{}}, nil
	case "growing":
		return endless{regularInfo{}}, nil
	}
	return nil, fs.ErrNotExist
}
func (e endless) Stat() (fs.FileInfo, error) { return e.info, nil }
func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
func (endless) Close() error { return nil }

type fifoInfo struct{ fs.FileInfo }

func (fifoInfo) Mode() fs.FileMode { return fs.ModeNamedPipe }

// regularInfo is a regular file that says it is empty (a file that grows
// while it is read).
type regularInfo struct{ fs.FileInfo }

func (regularInfo) Mode() fs.FileMode { return 0 }
func (regularInfo) Size() int64       { return 0 }

func TestReadFile(t *testing.T) {
	fsys := fstest.MapFS{"small": {Data: []byte("12345")}, "big": {Data: make([]byte, 100)}}
	tests := []struct {
		name string
		fsys fs.FS
		file string
		max  int64
		want string // error; "" for none
	}{
		{"within the limit", fsys, "small", 5, ""},
		{"above the limit, size known", fsys, "big", 99, "file size 100 bytes exceeds the limit of 99"},
		{"endless regular file, size unknown", endlessFS{}, "growing", 1000, "file size 1001 bytes exceeds the limit of 1000"},
		{"named pipe", endlessFS{}, "fifo", 1000, "not a regular file: a named pipe (FIFO)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadFile(tc.fsys, tc.file, tc.max)
			if tc.want == "" {
				if err != nil || len(data) != 5 {
					t.Fatalf("%d bytes, %v", len(data), err)
				}
				return
			}
			if err == nil || err.Error() != tc.want || !(errors.Is(err, ErrLimit) || errors.Is(err, safefs.ErrSpecialFile)) {
				t.Fatalf("error %v, want %q wrapping ErrLimit or safefs.ErrSpecialFile", err, tc.want)
			}
		})
	}
}
