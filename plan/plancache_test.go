package plan

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/payload"
)

// planOutput is what a plan gives a user: its YAML and its list.
func planOutput(t *testing.T, opts Options) (string, *CacheUse) {
	t.Helper()
	p, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteList(&b); err != nil {
		t.Fatal(err)
	}
	return b.String(), p.PlanCache
}

// copyEmbedded writes the embedded payload to a directory of its own.
func copyEmbedded(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "payload")
	if err := os.CopyFS(dir, payload.Embedded()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPlanCache: a warm plan is the cold plan, for the real payload and
// every selection of it; the entry is found by content, not by place.
func TestPlanCache(t *testing.T) {
	dir := realpayload.Dir(t)
	store := &plancache.Store{Dir: t.TempDir()}
	for _, opts := range []Options{
		{Lean: true},
		{Profile: "hypershift", Lean: true},
		{FeatureSet: "TechPreviewNoUpgrade"},
		{Profile: "single-node-developer", Capabilities: true, BaselineCapabilitySet: "None"},
	} {
		opts.Payload = os.DirFS(dir)
		want, use := planOutput(t, opts)
		if use != nil {
			t.Fatal("no PlanCache, yet used")
		}
		opts.PlanCache = store
		got, use := planOutput(t, opts)
		if got != want {
			t.Fatalf("%+v: a plan through the cache differs", opts)
		}
		got, warm := planOutput(t, opts)
		if got != want || !warm.Hit || warm.Err != nil || warm.Files < 600 {
			t.Fatalf("%+v: warm plan: hit %v, files %d, err %v, same %v", opts, warm.Hit, warm.Files, warm.Err, got == want)
		}
		if use.Key != warm.Key {
			t.Errorf("selection changed the key: the parse does not depend on it")
		}
	}
}

// TestPlanCacheInvalidation: whatever changes the plan changes a warm
// plan: the payload's bytes, the binary and the parse limits through the
// key; the selection, profiles, overlays and extra manifests because they
// are applied to the cached parse on every Build.
func TestPlanCacheInvalidation(t *testing.T) {
	dir := copyEmbedded(t)
	store := &plancache.Store{Dir: t.TempDir()}
	base := Options{Payload: os.DirFS(dir), PlanCache: store, Lean: true}
	cold, use := planOutput(t, base)
	if use.Hit || !use.Saved {
		t.Fatalf("first plan: %+v", use)
	}
	if _, use := planOutput(t, base); !use.Hit {
		t.Fatalf("second plan: %+v", use)
	}
	fresh := func(opts Options) string { opts.PlanCache = nil; s, _ := planOutput(t, opts); return s }

	// The payload's bytes: a changed, added and removed file.
	file := filepath.Join(dir, "release-manifests", "0000_50_cluster-ingress-operator_01-service-account.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct {
		name string
		do   func()
	}{
		{"changed file", func() {
			os.WriteFile(file, bytes.Replace(data, []byte("name: ingress-operator"), []byte("name: renamed-operator"), 1), 0o644)
		}},
		{"added file", func() {
			os.WriteFile(filepath.Join(dir, "release-manifests", "0000_99_added.yaml"), []byte(strings.Replace(string(data), "ingress-operator", "added", -1)), 0o644)
		}},
		{"removed file", func() { os.Remove(file) }},
	}
	prev := cold
	for _, e := range edits {
		e.do()
		got, use := planOutput(t, base)
		if use.Hit {
			t.Errorf("%s: hit the entry of other bytes", e.name)
		}
		if got == prev || got != fresh(base) {
			t.Errorf("%s: the warm plan is not the plan of the new bytes", e.name)
		}
		prev = got
	}
	os.WriteFile(file, data, 0o644)
	os.Remove(filepath.Join(dir, "release-manifests", "0000_99_added.yaml"))
	if got, use := planOutput(t, base); !use.Hit || got != cold {
		t.Errorf("the first bytes again: hit %v, same plan %v", use.Hit, got == cold)
	}

	// The binary and the parse limits.
	keyOf := func(opts Options) string { _, use := planOutput(t, opts); return use.Key }
	k0 := keyOf(base)
	saved := binaryID
	binaryID = func() string { return "another build" }
	k1 := keyOf(base)
	binaryID = saved
	if k0 == k1 {
		t.Error("another binary, the same key")
	}

	// The selection, profiles, overlays, extra manifests: warm plans are
	// the plans made without the cache.
	extra := t.TempDir()
	os.WriteFile(filepath.Join(extra, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: default\n"), 0o644)
	crc := crcOptions(t)
	outputs := map[string]string{}
	// crc's overlay, asking for another amount of memory.
	overlays := t.TempDir()
	if err := os.CopyFS(overlays, os.DirFS("testdata/crc/overlays")); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(overlays, "crc", "ingress-operator-memory.yaml")
	pdata, _ := os.ReadFile(patch)
	if err := os.WriteFile(patch, bytes.Replace(pdata, []byte("Mi"), []byte("0Mi"), -1), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]Options{
		"feature set":     {FeatureSet: "TechPreviewNoUpgrade"},
		"profile":         {Profile: "hypershift"},
		"capabilities":    {Capabilities: true, BaselineCapabilitySet: "None"},
		"exclude":         {ExcludeID: "none"},
		"profiles dir":    crc,
		"overlays dir":    {Profile: "crc", Profiles: crc.Profiles, ExtraOverlays: []overlay.Source{{FS: os.DirFS(overlays), Label: "o/"}}},
		"extra manifests": {ExtraManifests: os.DirFS(extra)},
	} {
		opts.Payload, opts.PlanCache, opts.Lean = base.Payload, store, true
		got, use := planOutput(t, opts)
		outputs[name] = got
		if !use.Hit {
			t.Errorf("%s: the parse was not reused", name)
		}
		if want := fresh(opts); got != want {
			t.Errorf("%s: the warm plan differs from the plan without the cache", name)
		} else if got == cold && name != "exclude" {
			t.Errorf("%s: changed nothing, a useless case", name)
		}
	}
	if outputs["overlays dir"] == outputs["profiles dir"] {
		t.Error("another overlay of crc changed nothing")
	}
}

// TestPlanCacheDamaged: a damaged entry is a miss, reported, and
// replaced; a form that does not decode is parsed again.
func TestPlanCacheDamaged(t *testing.T) {
	dir := copyEmbedded(t)
	store := &plancache.Store{Dir: t.TempDir()}
	opts := Options{Payload: os.DirFS(dir), PlanCache: store}
	want, use := planOutput(t, opts)
	entry := filepath.Join(store.Dir, use.Key+".entry")
	b, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	os.WriteFile(entry, b, 0o600)
	got, use := planOutput(t, opts)
	if got != want || use.Hit || use.Err == nil || !use.Saved {
		t.Errorf("damaged entry: same %v, %+v", got == want, use)
	}
	if got, use := planOutput(t, opts); got != want || !use.Hit {
		t.Errorf("after the damage: same %v, %+v", got == want, use)
	}

	// An entry whose CRC holds but whose form of a file does not decode
	// (a broken build under the right key): that file is parsed again and
	// the entry replaced.
	var key plancache.Key
	if _, err := hex.Decode(key[:], []byte(use.Key)); err != nil {
		t.Fatal(err)
	}
	path := "release-manifests/0000_50_cluster-ingress-operator_01-service-account.yaml"
	body := binary.AppendUvarint(nil, 1)
	body = binary.AppendUvarint(body, uint64(len(path)))
	body = append(body, path...)
	body = binary.AppendUvarint(body, 7)
	body = append(body, "garbage"...)
	if err := store.Put(key, body); err != nil {
		t.Fatal(err)
	}
	got, use = planOutput(t, opts)
	if got != want || !use.Hit || !use.Saved {
		t.Errorf("undecodable form: same %v, %+v", got == want, use)
	}
	if got, use := planOutput(t, opts); got != want || !use.Hit || use.Files < 30 {
		t.Errorf("after it: same %v, %+v", got == want, use)
	}
}

// TestPlanCacheConcurrent: plans of one payload built at once, cold, each
// with its own Store of one directory, all give the same plan and leave
// one whole entry.
func TestPlanCacheConcurrent(t *testing.T) {
	dir := copyEmbedded(t)
	cache := t.TempDir()
	want, _ := planOutput(t, Options{Payload: os.DirFS(dir)})
	var wg sync.WaitGroup
	got := make([]string, 6)
	for i := range got {
		wg.Go(func() {
			p, err := Build(context.Background(), Options{Payload: os.DirFS(dir), PlanCache: &plancache.Store{Dir: cache}})
			if err != nil {
				t.Error(err)
				return
			}
			var b bytes.Buffer
			p.WriteYAML(&b)
			p.WriteList(&b)
			got[i] = b.String()
		})
	}
	wg.Wait()
	for i := range got {
		if got[i] != want {
			t.Errorf("plan %d differs", i)
		}
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "*.entry"))
	if len(entries) != 1 {
		t.Errorf("cache holds %v, want one entry", entries)
	}
	if _, use := planOutput(t, Options{Payload: os.DirFS(dir), PlanCache: &plancache.Store{Dir: cache}}); !use.Hit {
		t.Error("no hit after concurrent writers")
	}
}

// TestPlanCacheChangedWhileRead: a parse is never stored under the key of
// other bytes, also when the fingerprint was taken ahead (StartPreload).
func TestPlanCacheChangedWhileRead(t *testing.T) {
	for _, preload := range []bool{false, true} {
		dir := copyEmbedded(t)
		store := &plancache.Store{Dir: t.TempDir()}
		fsys := os.DirFS(dir)
		lopts := payload.LoadOptions{}
		var pre *Preload
		var pc *planCache
		var use *CacheUse
		if preload {
			pre = StartPreload(context.Background(), Options{Payload: fsys, PlanCache: store}, true).Preload
			<-pre.digestDone
		} else {
			pc, use, _ = openPlanCache(context.Background(), store, fsys, &lopts, nil)
		}
		// A file changes after the fingerprint, before Load reads it.
		file := filepath.Join(dir, "release-manifests", "0000_50_cluster-ingress-operator_01-service-account.yaml")
		data, _ := os.ReadFile(file)
		os.WriteFile(file, append(data, []byte("# changed\n")...), 0o644)
		if preload {
			var err error
			if pc, use, err = openPlanCache(context.Background(), store, fsys, &lopts, pre); err != nil || use != pre.use {
				t.Fatalf("%v; took the preload: %v", err, use == pre.use)
			}
		}
		if _, err := payload.Load(context.Background(), fsys, lopts); err != nil {
			t.Fatal(err)
		}
		pc.save(use)
		if use.Saved || use.Err == nil || !strings.Contains(use.Err.Error(), "0000_50_cluster-ingress-operator_01-service-account.yaml") {
			t.Errorf("preload %v: %+v", preload, use)
		}
		// (A preload also stores the payload's digest, made of the
		// bytes it fingerprinted and keyed by them: not this entry.)
		if _, err := os.Stat(filepath.Join(store.Dir, use.Key+".entry")); !os.IsNotExist(err) {
			t.Errorf("preload %v: the parse stored (%v)", preload, err)
		}
	}
}
