package manifest

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// doc summarises a parsed manifest for comparisons.
type doc struct {
	Doc  int
	Line int
	ID   string
}

func summarize(ms []Manifest) []doc {
	var out []doc
	for i := range ms {
		out = append(out, doc{Doc: ms[i].Doc, Line: ms[i].Line, ID: ms[i].ID().String()})
	}
	return out
}

func TestParse(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: ns\n"
	}
	tests := []struct {
		name    string
		in      string
		want    []doc
		wantErr string
	}{
		{name: "single document", in: cm("a"), want: []doc{{0, 1, "ConfigMap/ns/a"}}},
		{name: "no trailing newline", in: strings.TrimSuffix(cm("a"), "\n"), want: []doc{{0, 1, "ConfigMap/ns/a"}}},
		{name: "utf-8 byte order mark", in: "\ufeff" + cm("a"), want: []doc{{0, 1, "ConfigMap/ns/a"}}},
		{name: "leading separator", in: "---\n" + cm("a"), want: []doc{{0, 2, "ConfigMap/ns/a"}}},
		{name: "comment preamble is no document", in: "# Copyright\n---\n" + cm("a"), want: []doc{{0, 3, "ConfigMap/ns/a"}}},
		{
			name: "empty, null and comment-only documents keep their index",
			in:   cm("a") + "---\n---\nnull\n---\n# only a comment\n---\n" + cm("b") + "---\n",
			want: []doc{{0, 1, "ConfigMap/ns/a"}, {4, 12, "ConfigMap/ns/b"}},
		},
		{name: "separator with a comment", in: cm("a") + "--- # next\n" + cm("b"), want: []doc{{0, 1, "ConfigMap/ns/a"}, {1, 7, "ConfigMap/ns/b"}}},
		{name: "document end marker", in: cm("a") + "...\n", want: []doc{{0, 1, "ConfigMap/ns/a"}}},
		{name: "json inside yaml", in: `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}`, want: []doc{{0, 1, "ConfigMap/ns/a"}}},
		{
			name: "json stream",
			in:   "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}",
			want: []doc{{0, 1, "ConfigMap/a"}, {1, 3, "ConfigMap/b"}},
		},
		{name: "equals sign as a scalar", in: cm("a") + "data:\n  op: =\n  list: [=, a]\n", want: []doc{{0, 1, "ConfigMap/ns/a"}}},
		{name: "repeated keys: last wins", in: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  name: last\n", want: []doc{{0, 1, "ConfigMap/last"}}},
		{name: "non-core group", in: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns1\n", want: []doc{{0, 1, "Deployment.apps/ns1/d"}}},
		{name: "missing kind", in: cm("a") + "---\napiVersion: v1\nmetadata:\n  name: b\n", want: []doc{{0, 1, "ConfigMap/ns/a"}}, wantErr: "f.yaml#1: kind is required"},
		{name: "missing name", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", wantErr: "f.yaml#0: metadata.name is required"},
		{name: "missing apiVersion", in: "kind: ConfigMap\nmetadata: {name: a}\n", wantErr: "f.yaml#0: apiVersion is required"},
		{name: "bad yaml reports the file line", in: cm("a") + "---\napiVersion: v1\nkind: [\n", want: []doc{{0, 1, "ConfigMap/ns/a"}}, wantErr: "f.yaml#1: yaml: line 8: did not find expected node content"},
		{name: "not an object", in: "- a\n- b\n", wantErr: "f.yaml#0: document is not an object"},
		{name: "invalid separator", in: cm("a") + "--- !foo\n" + cm("b"), wantErr: "f.yaml: line 6: invalid YAML document separator"},
		{name: "not utf-8", in: "apiVersion: v1\nkind: \xff\n", wantErr: "f.yaml: file is not valid UTF-8"},
		{name: "every bad document is reported", in: "kind: A\n---\nkind: B\n", wantErr: "f.yaml#0: apiVersion is required (a string)\nf.yaml#1: apiVersion is required"},
		{name: "empty file", in: "", want: nil},
		{name: "only comments", in: "# nothing\n# here\n", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := Parse("f.yaml", []byte(tc.in), ParseOptions{})
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, summarize(ms)); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
			for i := range ms {
				if ms[i].File != "f.yaml" || ms[i].OriginalFilename != "f.yaml" {
					t.Errorf("manifest %d: File %q OriginalFilename %q", i, ms[i].File, ms[i].OriginalFilename)
				}
			}
		})
	}
}

func TestParseKeepsValuesAsLibraryGo(t *testing.T) {
	ms, err := Parse("f.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  op: =\n  num: \"1\"\n  y: yes\n"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := ms[0].Obj.Object["data"]
	// YAML 1.1 as the CVO reads it: a bare "=" stays a string, "y" is true.
	want := map[string]any{"op": "=", "num": "1", "true": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

func TestParseErrorPosition(t *testing.T) {
	_, err := Parse("dir/f.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\nkind: B\n"), ParseOptions{})
	var pe *ParseError
	if !asParseError(err, &pe) {
		t.Fatalf("error %v is not a *ParseError", err)
	}
	if pe.File != "dir/f.yaml" || pe.Doc != 1 || pe.Line != 6 {
		t.Errorf("ParseError = %+v, want dir/f.yaml doc 1 line 6", pe)
	}
}

func asParseError(err error, target **ParseError) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if asParseError(e, target) {
				return true
			}
		}
		return false
	}
	pe, ok := err.(*ParseError)
	if ok {
		*target = pe
	}
	return ok
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"---\n---\nnull\n",
		`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}`,
		"\ufeffapiVersion: v1\nkind: A\nmetadata: {name: b}\ndata: {x: =}\n",
		"a: [\n",
		"--- !x\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, file := range realpayload.Sample(f, 40, 32<<10) {
		f.Add(file.Data)
	}
	for _, s := range []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: 7}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {x: 1}, labels: [y]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := Parse("fuzz.yaml", data, ParseOptions{})
		for i := range ms {
			if ms[i].Obj == nil || ms[i].GVK.Kind == "" || ms[i].Obj.GetName() == "" {
				t.Fatalf("manifest %d without kind or name: %+v", i, ms[i])
			}
			// What accessors would hide never comes through.
			if probs := silentProblems(ms[i].Obj.Object); len(probs) > 0 {
				t.Fatalf("manifest %d has %v", i, probs)
			}
		}
		_ = err
	})
}

// splitYAMLByLines is the first splitYAML: it reads line by line and copies
// each document. FuzzSplitYAML holds the slicing version to it.
func splitYAMLByLines(data []byte) ([]Document, error) {
	var docs []Document
	var buf bytes.Buffer
	line, docLine := 0, 1
	seenSeparator := false
	flush := func() {
		if seenSeparator || !isBlankYAML(buf.Bytes()) {
			docs = append(docs, Document{Index: len(docs), Line: docLine, Data: append([]byte(nil), buf.Bytes()...)})
		}
		buf.Reset()
	}
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		text, err := r.ReadBytes('\n')
		if len(text) > 0 {
			line++
			if bytes.HasPrefix(text, []byte("---")) {
				rest := strings.TrimSpace(string(text[3:]))
				if rest != "" && rest[0] != '#' {
					return nil, fmt.Errorf("line %d: invalid YAML document separator: %s", line, rest)
				}
				flush()
				seenSeparator = true
				docLine = line + 1
			} else {
				buf.Write(text)
			}
		}
		if err != nil {
			break
		}
	}
	if buf.Len() > 0 {
		flush()
	}
	return docs, nil
}

func FuzzSplitYAML(f *testing.F) {
	for _, s := range []string{
		"a: 1\n", "# c\n---\na: 1\n---\n---\nb\n", "---", "--- # x\na\n--- !x\n", "a\r\n---\r\nb", "\n\n---\n\n", "a: 1\n---\n",
	} {
		f.Add([]byte(s))
	}
	for _, file := range realpayload.Sample(f, 40, 32<<10) {
		f.Add(file.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := splitYAMLByLines(data)
		got, err := splitYAML(data)
		if fmt.Sprint(wantErr) != fmt.Sprint(err) {
			t.Fatalf("error %v, want %v", err, wantErr)
		}
		norm := func(ds []Document) []Document {
			for i := range ds {
				if len(ds[i].Data) == 0 {
					ds[i].Data = nil
				}
			}
			return ds
		}
		if diff := cmp.Diff(norm(want), norm(got)); diff != "" {
			t.Fatalf("documents (-by lines +sliced):\n%s", diff)
		}
	})
}
