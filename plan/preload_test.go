package plan

import (
	"context"
	"os"
	"testing"

	"github.com/payload-apply/payload-apply/lib/plancache"
)

// TestPreload: a Build after StartPreload is the Build without it, cold
// and warm, and takes the preload's fingerprint and entry; a preload
// serves one Build, and one made for another payload or store none.
func TestPreload(t *testing.T) {
	dir := copyEmbedded(t)
	store := &plancache.Store{Dir: t.TempDir()}
	base := Options{Payload: os.DirFS(dir), PlanCache: store}
	want, cold := planOutput(t, base)
	for _, tc := range []struct {
		name string
		edit func(Options) Options
		used bool
	}{
		{"same payload", func(o Options) Options { return o }, true},
		{"the payload changed after", func(o Options) Options { o.Payload = os.DirFS(copyEmbedded(t)); return o }, false},
		{"the store changed after", func(o Options) Options { o.PlanCache = &plancache.Store{Dir: t.TempDir()}; return o }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := StartPreload(context.Background(), base)
			if opts.Preload == nil {
				t.Fatal("nothing preloaded")
			}
			<-opts.Preload.done
			pre := opts.Preload.use
			opts = tc.edit(opts)
			got, use := planOutput(t, opts)
			if got != want {
				t.Fatal("the plan differs from one made without a preload")
			}
			if use == nil || use.Key != cold.Key || use.Err != nil {
				t.Fatalf("cache use %+v, want the key %s", use, cold.Key)
			}
			if took := use == pre; took != tc.used {
				t.Errorf("the Build took the preload: %v, want %v", took, tc.used)
			}
			if !tc.used {
				return
			}
			// Used once: a second Build with the same options
			// fingerprints by itself.
			if _, again := planOutput(t, opts); again == pre || !again.Hit {
				t.Errorf("second Build: took the used preload %v, hit %v", again == pre, again.Hit)
			}
		})
	}
}

// TestPreloadNotStarted: nothing to preload without a plan cache, with a
// parse cache of the caller's or a loaded payload.
func TestPreloadNotStarted(t *testing.T) {
	store := &plancache.Store{Dir: t.TempDir()}
	loaded, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]Options{
		"no plan cache": {},
		"loaded":        {PlanCache: store, Loaded: loaded.Payload},
	} {
		if StartPreload(context.Background(), opts).Preload != nil {
			t.Errorf("%s: preloaded", name)
		}
	}
}

// TestPreloadInterrupted: a Build waiting for a preload ends with its own
// context.
func TestPreloadInterrupted(t *testing.T) {
	store := &plancache.Store{Dir: t.TempDir()}
	opts := Options{Payload: os.DirFS(copyEmbedded(t)), PlanCache: store}
	pre := &Preload{store: store, fsys: opts.Payload, done: make(chan struct{})} // never done
	opts.Preload = pre
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, opts); err == nil {
		t.Fatal("Build waited for a preload past its context")
	}
}
