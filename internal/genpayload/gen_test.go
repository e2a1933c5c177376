package genpayload_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payload-apply/payload-apply/internal/genpayload"
	"github.com/payload-apply/payload-apply/internal/race"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func mapFS(files []genpayload.File) fstest.MapFS {
	m := fstest.MapFS{}
	for _, f := range files {
		m[f.Path] = &fstest.MapFile{Data: f.Data}
	}
	return m
}

func TestGenerateIsDeterministic(t *testing.T) {
	a := genpayload.Generate(genpayload.Options{Seed: 7, Scale: 1})
	b := genpayload.Generate(genpayload.Options{Seed: 7, Scale: 1})
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("%s differs between two runs", a[i].Path)
		}
	}
	c := genpayload.Generate(genpayload.Options{Seed: 8, Scale: 1})
	if len(c) == len(a) && bytes.Equal(c[len(c)/2].Data, a[len(a)/2].Data) {
		t.Errorf("seeds 7 and 8 give the same payload")
	}
}

// TestScaleContainsSmaller: scale 2 holds scale 1's manifest files
// unchanged (replica 0), and about twice the bytes.
func TestScaleContainsSmaller(t *testing.T) {
	one := genpayload.Generate(genpayload.Options{Seed: 3, Scale: 1})
	two := mapFS(genpayload.Generate(genpayload.Options{Seed: 3, Scale: 2}))
	var b1, b2 int
	for _, f := range one {
		b1 += len(f.Data)
		if path.Base(f.Path) == "release-metadata" || path.Base(f.Path) == "image-references" {
			continue
		}
		if g, ok := two[f.Path]; !ok || !bytes.Equal(g.Data, f.Data) {
			t.Fatalf("%s: not in the scale-2 payload as it is in scale 1", f.Path)
		}
	}
	for _, f := range two {
		b2 += len(f.Data)
	}
	if r := float64(b2) / float64(b1); r < 1.6 || r > 2.4 {
		t.Errorf("scale 2 has %.2f times the bytes of scale 1", r)
	}
}

// shape summarises a payload the way shape.go describes it.
type shape struct {
	files, objects, bytes int
	crdBytes, crds        int
	variantFiles          int
	multiDocFiles         int
	levels                map[int]int
	included              map[string]int // "profile/feature set" -> objects
}

func measure(t *testing.T, fsys fs.FS) shape {
	t.Helper()
	p, err := payload.Load(context.Background(), fsys, payload.LoadOptions{KeepData: true})
	if err != nil {
		t.Fatal(err)
	}
	s := shape{levels: map[int]int{}, included: map[string]int{}}
	for _, f := range p.Files {
		s.files++
		s.bytes += len(f.Data)
		s.objects += len(f.Manifests)
		if len(f.Manifests) > 1 {
			s.multiDocFiles++
		}
		docs, _ := manifest.SplitDocuments(f.Data)
		for _, m := range f.Manifests {
			if m.GVK.Kind == "CustomResourceDefinition" {
				s.crdBytes += len(docs[m.Doc].Data)
				s.crds++
				if _, ok := m.Obj.GetAnnotations()[manifest.FeatureSetAnnotation]; ok {
					s.variantFiles++
				}
			}
		}
		if l, _, ok := payload.ParseFileName(f.Path); ok && strings.HasPrefix(f.Path, payload.ReleaseManifestDir) {
			s.levels[l]++
		}
	}
	for _, prof := range []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"} {
		for _, fset := range manifest.KnownFeatureSets() {
			pl, err := plan.Build(context.Background(), plan.Options{Loaded: p, Profile: prof, FeatureSet: fset, SkipOverlays: true})
			if err != nil {
				t.Fatalf("%s/%s: %v", prof, fset, err)
			}
			s.included[prof+"/"+fset] = len(pl.Selection.Included)
		}
	}
	return s
}

func within(t *testing.T, what string, got, want, tolerance float64) {
	t.Helper()
	t.Logf("%-40s generated %8.3f real %8.3f", what, got, want)
	if got < want*(1-tolerance) || got > want*(1+tolerance) {
		t.Errorf("%s: generated %.3f, real %.3f (tolerance %.0f%%)", what, got, want, tolerance*100)
	}
}

// TestShapeLikeRealPayload compares a generated payload of scale 1 with the
// real one: sizes, the CRD share, variants, multi-document files, run
// levels, and what each profile and feature set selects.
func TestShapeLikeRealPayload(t *testing.T) {
	real := measure(t, os.DirFS(realpayload.Dir(t)))
	seeds := []uint64{1, 2}
	if race.Enabled {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			gen := measure(t, mapFS(genpayload.Generate(genpayload.Options{Seed: seed, Scale: 1})))
			within(t, "files", float64(gen.files), float64(real.files), 0.05)
			within(t, "objects", float64(gen.objects), float64(real.objects), 0.15)
			within(t, "bytes", float64(gen.bytes), float64(real.bytes), 0.2)
			within(t, "CRD share of bytes", float64(gen.crdBytes)/float64(gen.bytes), float64(real.crdBytes)/float64(real.bytes), 0.1)
			within(t, "mean CRD size", float64(gen.crdBytes)/float64(gen.crds), float64(real.crdBytes)/float64(real.crds), 0.2)
			within(t, "CRD variant files", float64(gen.variantFiles), float64(real.variantFiles), 0.35)
			within(t, "multi-document files", float64(gen.multiDocFiles), float64(real.multiDocFiles), 0.35)
			var levels []int
			for l := range real.levels {
				levels = append(levels, l)
			}
			sort.Ints(levels)
			for _, l := range levels {
				if real.levels[l] >= 50 {
					within(t, fmt.Sprintf("files at run level %d", l), float64(gen.levels[l]), float64(real.levels[l]), 0.6)
				}
			}
			for sel, n := range real.included {
				within(t, "selected share "+sel, float64(gen.included[sel])/float64(gen.objects), float64(n)/float64(real.objects), 0.25)
			}
		})
	}
}

// TestGeneratedPayloadValidates: validate finds no errors at scale 1 and 2
// (1 only under -race).
func TestGeneratedPayloadValidates(t *testing.T) {
	scales := []int{1, 2}
	if race.Enabled {
		scales = scales[:1]
	}
	for _, scale := range scales {
		t.Run(fmt.Sprint("scale ", scale), func(t *testing.T) {
			findings, err := plan.Validate(context.Background(), plan.Options{Payload: mapFS(genpayload.Generate(genpayload.Options{Seed: 1, Scale: scale}))}, plan.ValidateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				if f.Severity == manifest.SeverityError {
					t.Errorf("%s", f)
				}
			}
		})
	}
}

// TestWriteReplacesAnOlderPayload: written over an older payload (another
// seed, and a file of its own), the directory holds exactly the new one;
// what is beside the payload directories is left alone.
func TestWriteReplacesAnOlderPayload(t *testing.T) {
	dir := t.TempDir()
	if _, _, stale, err := genpayload.Write(dir, genpayload.Options{Seed: 7, Scale: 1}); err != nil || stale != 0 {
		t.Fatalf("first write: %d stale, %v", stale, err)
	}
	extra := []string{"manifests/0000_99_old_extra.yaml", "release-manifests/0000_99_old_extra.yaml"}
	for _, p := range append(extra, "README") {
		if err := os.WriteFile(dir+"/"+p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := map[string]bool{}
	for _, f := range genpayload.Generate(genpayload.Options{Seed: 7, Scale: 1}) {
		old[f.Path] = true
	}
	opts := genpayload.Options{Seed: 8, Scale: 1}
	files, _, stale, err := genpayload.Write(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	gen := genpayload.Generate(opts)
	wantStale := len(extra)
	for p := range old {
		if !slices.ContainsFunc(gen, func(f genpayload.File) bool { return f.Path == p }) {
			wantStale++
		}
	}
	if files != len(gen) || stale != wantStale {
		t.Errorf("wrote %d files, removed %d; want %d and %d", files, stale, len(gen), wantStale)
	}
	var got []string
	for _, sub := range []string{"manifests", "release-manifests"} {
		entries, err := os.ReadDir(dir + "/" + sub)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			got = append(got, sub+"/"+e.Name())
		}
	}
	var want []string
	for _, f := range gen {
		want = append(want, f.Path)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("the directory holds %d payload files, the payload %d", len(got), len(want))
	}
	if data, err := os.ReadFile(dir + "/README"); err != nil || string(data) != "old" {
		t.Errorf("README beside the payload: %q, %v", data, err)
	}
}
