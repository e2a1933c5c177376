package plan

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"

	"github.com/payload-apply/payload-apply/internal/race"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// renderAll is what render, render --list and render --explain print.
func renderAll(t *testing.T, p *Plan) string {
	t.Helper()
	var b bytes.Buffer
	for _, write := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return p.WriteYAML(b) },
		func(b *bytes.Buffer) error { return p.WriteList(b) },
		func(b *bytes.Buffer) error { return p.WriteExplain(b) },
	} {
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestCacheGivesTheSamePlans renders the real payload for every reference
// profile and feature set, once without a Cache, one after the other, and
// once all at the same time with one shared Cache: the outputs are the same.
func TestCacheGivesTheSamePlans(t *testing.T) {
	p, err := payload.Load(context.Background(), os.DirFS(realpayload.Dir(t)), payload.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type sel struct{ profile, featureSet string }
	var sels []sel
	for _, profile := range matrixProfiles {
		for _, fs := range manifest.KnownFeatureSets() {
			sels = append(sels, sel{profile, fs})
		}
	}
	want := make([]string, len(sels))
	for i, s := range sels {
		pl, err := Build(context.Background(), Options{Loaded: p, Profile: s.profile, FeatureSet: s.featureSet})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = renderAll(t, pl)
	}
	got := make([]string, len(sels))
	c := NewCache()
	var g errgroup.Group
	for i, s := range sels {
		g.Go(func() error {
			pl, err := Build(context.Background(), Options{Loaded: p, Cache: c, Profile: s.profile, FeatureSet: s.featureSet})
			if err != nil {
				return err
			}
			got[i] = renderAll(t, pl)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, s := range sels {
		if diff := cmp.Diff(want[i], got[i]); diff != "" {
			t.Errorf("%s/%s: with a shared Cache (-without +with):\n%s", s.profile, s.featureSet, diff)
		}
	}
}

// TestLeanGivesTheSamePlans: a plan whose payload was loaded for its
// selection only (Options.Lean) renders what a plan of the whole payload
// renders, for the embedded payload (every profile and feature set, and
// crc) and the real one (every profile, two feature sets; one selection
// under -race).
func TestLeanGivesTheSamePlans(t *testing.T) {
	type tc struct {
		name  string
		whole Options // the plan of the whole payload
		lean  Options // the same selection, loaded lean
	}
	var cases []tc
	for _, profile := range matrixProfiles {
		for _, fs := range manifest.KnownFeatureSets() {
			o := Options{Profile: profile, FeatureSet: fs}
			cases = append(cases, tc{"embedded/" + profile + "/" + fs, o, o})
		}
	}
	crc := crcOptions(t)
	cases = append(cases, tc{"embedded/crc", crc, crc})
	real := os.DirFS(realpayload.Dir(t))
	loaded, err := payload.Load(context.Background(), real, payload.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	featureSets := []string{"Default", "TechPreviewNoUpgrade"}
	profiles := matrixProfiles
	if race.Enabled {
		// A lean load of the real payload takes seconds under -race.
		featureSets, profiles = featureSets[:1], profiles[1:2]
	}
	for _, profile := range profiles {
		for _, fs := range featureSets {
			cases = append(cases, tc{"real/" + profile + "/" + fs,
				Options{Loaded: loaded, Profile: profile, FeatureSet: fs},
				Options{Payload: real, Profile: profile, FeatureSet: fs}})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole, err := Build(context.Background(), c.whole)
			if err != nil {
				t.Fatal(err)
			}
			lean := c.lean
			lean.Lean = true
			pl, err := Build(context.Background(), lean)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(renderAll(t, whole), renderAll(t, pl)); diff != "" {
				t.Errorf("lean plan differs (-whole +lean):\n%s", diff)
			}
			stripped := 0
			for _, e := range pl.Selection.Entries {
				if !e.Included && len(e.Manifest.Obj.Object) <= 3 {
					stripped++
				}
			}
			if stripped == 0 && len(pl.Selection.Included) < len(pl.Selection.Entries) {
				t.Error("no excluded object was stripped: Lean did nothing")
			}
		})
	}
}
