package plan

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/payload"
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
			opts := StartPreload(context.Background(), base, true)
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
		if StartPreload(context.Background(), opts, true).Preload != nil {
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

// TestPreloadDigest: a plan whose Build took a preload has the payload's
// digest from it, the digest payload.Digest makes; a plan of bytes other
// than those the preload fingerprinted (a file changed in between) has
// the digest of the bytes as they are, not the preload's.
func TestPreloadDigest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		change  bool
		useFrom bool
	}{
		{"unchanged", false, true},
		{"a file changed after the preload", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyEmbedded(t)
			fsys := os.DirFS(dir)
			opts := StartPreload(ctx, Options{Payload: fsys, PlanCache: &plancache.Store{Dir: t.TempDir()}}, true)
			<-opts.Preload.digestDone
			before := opts.Preload.digest
			if opts.Preload.digestErr != nil || before == "" {
				t.Fatalf("preload digest %q, %v", before, opts.Preload.digestErr)
			}
			if tc.change {
				file := filepath.Join(dir, "release-manifests", "0000_50_cluster-ingress-operator_01-service-account.yaml")
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, append(data, "# changed\n"...), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Build(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if took := p.PlanCache.pre == opts.Preload; !took {
				t.Fatal("the Build did not take the preload")
			}
			got, err := p.PayloadDigest(ctx, fsys)
			if err != nil {
				t.Fatal(err)
			}
			want, err := payload.Digest(ctx, fsys)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("PayloadDigest %s, payload.Digest %s", got, want)
			}
			if fromPreload := got == before; fromPreload != tc.useFrom {
				t.Errorf("digest is the preload's: %v, want %v", fromPreload, tc.useFrom)
			}
		})
	}
}

// TestPreloadWithoutDigest: a preload not asked for the digest makes
// none, and the plan's digest is made as without a preload.
func TestPreloadWithoutDigest(t *testing.T) {
	ctx := context.Background()
	fsys := os.DirFS(copyEmbedded(t))
	opts := StartPreload(ctx, Options{Payload: fsys, PlanCache: &plancache.Store{Dir: t.TempDir()}}, false)
	<-opts.Preload.digestDone
	if opts.Preload.digest != "" || opts.Preload.digestErr != errNoDigest {
		t.Fatalf("preload digest %q, %v; want none", opts.Preload.digest, opts.Preload.digestErr)
	}
	p, err := Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.PayloadDigest(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := payload.Digest(ctx, fsys); got != want {
		t.Errorf("PayloadDigest %s, payload.Digest %s", got, want)
	}
}
