package platformoperators

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func loadTestdataCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := LoadCatalog(testdataFS("catalog"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadCatalog(t *testing.T) {
	c := loadTestdataCatalog(t)
	type summary struct {
		Default  string
		Channels []string
		Bundles  map[string][]string // bundle -> channels
	}
	got := map[string]summary{}
	for name, p := range c.Packages {
		s := summary{Default: p.DefaultChannel, Bundles: map[string][]string{}}
		for _, ch := range p.Channels {
			s.Channels = append(s.Channels, ch.Name)
		}
		for _, b := range p.Bundles {
			s.Bundles[b.Name] = b.Channels
		}
		got[name] = s
	}
	want := map[string]summary{
		"openshift-cert-manager-operator": {Default: "stable-v1", Channels: []string{"stable-v1"}, Bundles: map[string][]string{
			"cert-manager-operator.v1.6.0": {"stable-v1"},
			"cert-manager-operator.v1.7.1": {"stable-v1"},
			"cert-manager-operator.v1.8.0": {"stable-v1"},
		}},
		"local-storage-operator": {Default: "stable", Channels: []string{"stable"}, Bundles: map[string][]string{
			"local-storage-operator.v4.22.0": {"stable"},
			"local-storage-operator.v4.22.1": {"stable"},
			"local-storage-operator.v4.23.0": {"stable"},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog (-want +got):\n%s", diff)
	}
	b := c.Packages["local-storage-operator"].Bundles[0]
	if b.Source != "local-storage/catalog.json#2" || !strings.HasPrefix(b.Image, "registry.example.com/lso/") {
		t.Errorf("bundle %s: source %s image %s", b.Name, b.Source, b.Image)
	}
}

func TestLoadCatalogErrors(t *testing.T) {
	pkg := "schema: olm.package\nname: p\n"
	cases := []struct {
		name  string
		files map[string]string
		want  []string // one per line of the error
	}{
		{
			name:  "yaml and json streams, other schemas and files skipped",
			files: map[string]string{"a.yaml": pkg + "---\nschema: olm.deprecations\npackage: p\n---\n# only a comment\n", "b.json": `{"schema":"olm.channel","name":"s","package":"p","entries":[{"name":"p.v1"}]} {"schema":"olm.bundle","name":"p.v1","package":"p"}`, "README.md": "not a catalog", ".hidden/x.yaml": "broken: ["},
		},
		{
			name:  "missing schema and names",
			files: map[string]string{"a.yaml": pkg + "---\nname: x\n---\nschema: olm.bundle\nname: b\n---\nschema: olm.package\n"},
			want:  []string{"a.yaml#1: schema is required", "a.yaml#2: olm.bundle: name and package are required", "a.yaml#3: olm.package: name is required"},
		},
		{
			name:  "undecodable documents",
			files: map[string]string{"a.yaml": pkg + "---\n- a list\n---\nkey: [unclosed\n"},
			want:  []string{"a.yaml#1: not a catalog document: json: cannot unmarshal array into Go value of type platformoperators.blob", "a.yaml#2: yaml: line 1: did not find expected ',' or ']'"},
		},
		{
			name:  "unknown package, duplicates, dangling entries",
			files: map[string]string{"a.yaml": pkg + "---\nschema: olm.package\nname: p\n---\nschema: olm.bundle\nname: q.v1\npackage: q\n---\nschema: olm.bundle\nname: p.v1\npackage: p\n---\nschema: olm.bundle\nname: p.v1\npackage: p\n---\nschema: olm.channel\nname: s\npackage: p\nentries:\n- name: p.v1\n- name: p.v2\n---\nschema: olm.channel\nname: s\npackage: p\n---\nschema: olm.channel\nname: t\npackage: q\n"},
			want: []string{
				`a.yaml#1: olm.package "p": already defined at a.yaml#0`,
				`a.yaml#2: olm.bundle "q.v1": package "q" has no olm.package document`,
				`a.yaml#4: olm.bundle "p.v1" of package "p": already defined at a.yaml#3`,
				`a.yaml#5: olm.channel "s": entry "p.v2": package "p" has no such olm.bundle`,
				`a.yaml#6: olm.channel "s" of package "p": already defined at a.yaml#5`,
				`a.yaml#7: olm.channel "t": package "q" has no olm.package document`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			_, err := LoadCatalog(fsys)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
