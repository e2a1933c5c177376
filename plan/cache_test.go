package plan

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"

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
	p, err := payload.Load(os.DirFS(realpayload.Dir(t)), payload.LoadOptions{})
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
		pl, err := Build(Options{Loaded: p, Profile: s.profile, FeatureSet: s.featureSet})
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
			pl, err := Build(Options{Loaded: p, Cache: c, Profile: s.profile, FeatureSet: s.featureSet})
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
