package manifest_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/internal/genpayload"
	"github.com/payload-apply/payload-apply/internal/race"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

func sameYAML(t *testing.T, where string, obj map[string]any) {
	t.Helper()
	want, wantErr := yaml.Marshal(obj)
	got, err := manifest.MarshalYAML(obj)
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("%s: MarshalYAML differs from sigs.k8s.io/yaml (%v, %v):\n%s\nwant:\n%s", where, err, wantErr, got, want)
	}
}

// TestMarshalYAMLMatches: every object of the real payload and of a
// generated one (not under -race), and the decode cases, encode as
// sigs.k8s.io/yaml does.
func TestMarshalYAMLMatches(t *testing.T) {
	p, err := payload.Load(context.Background(), os.DirFS(realpayload.Dir(t)), payload.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Manifests() {
		sameYAML(t, m.String(), m.Obj.Object)
	}
	if !race.Enabled {
		for _, f := range genpayload.Generate(genpayload.Options{Seed: 1, Scale: 1}) {
			ms, _ := manifest.Parse(f.Path, f.Data, manifest.ParseOptions{})
			for _, m := range ms {
				sameYAML(t, m.String(), m.Obj.Object)
			}
		}
	}
	for _, tc := range decodeCases {
		if m, err := manifest.DecodeSlow(manifest.Document{Data: []byte(tc.in)}); err == nil && m != nil {
			sameYAML(t, tc.name, m.Obj.Object)
		}
	}
	for name, s := range map[string]string{"DEL": "a\x7f", "C1": "\u0080", "NEL": "a\u0085b", "BOM": "\ufeff", "U+FFFE": "\ufffe",
		"line separator": "a\u2028b", "controls": "\x01\t\n", "html": "<&>", "long key": strings.Repeat("k", 2000)} {
		sameYAML(t, name, map[string]any{"v": s, s: "k"})
	}
	sameYAML(t, "Go types", map[string]any{"a": 1, "b": []string{"x"}, "c": 1.5, "d": int32(3), "e": map[string]string{"k": "v"}})
}

// FuzzMarshalYAML: any object the decoder makes encodes as
// sigs.k8s.io/yaml does.
func FuzzMarshalYAML(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.in))
	}
	for _, file := range realpayload.Sample(f, 40, 32<<10) {
		f.Add(file.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, _ := manifest.Parse("fuzz.yaml", data, manifest.ParseOptions{})
		for _, m := range ms {
			sameYAML(t, "fuzz", m.Obj.Object)
		}
	})
}
