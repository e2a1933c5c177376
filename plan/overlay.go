package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/overlays"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// EmbeddedOverlays is the overlay source compiled into the binary.
func EmbeddedOverlays() overlay.Source {
	return overlay.Source{FS: overlays.FS(), Label: overlays.Label}
}

// overlaySources returns the embedded overlays followed by opts.ExtraOverlays.
func overlaySources(opts Options) []overlay.Source {
	return append([]overlay.Source{EmbeddedOverlays()}, opts.ExtraOverlays...)
}

// findOverlays locates the overlays of a profile, root first. Errors name
// the profile file that lists a missing overlay.
func findOverlays(p *profiles.Profile, sources []overlay.Source) ([]*overlay.Overlay, error) {
	var out []*overlay.Overlay
	var errs []error
	for _, ref := range p.Overlays {
		o, err := overlay.Find(sources, ref.Name, ref.Path)
		if err != nil {
			errs = append(errs, &overlay.Error{File: ref.File, Err: fmt.Errorf("profile %s: %w", p.Name, err)})
			continue
		}
		out = append(out, o)
	}
	return out, errors.Join(errs...)
}

// applyOverlays runs the overlay stage over the included objects. With no
// overlays it returns them as they are.
func applyOverlays(ctx context.Context, c *overlay.Cache, included []*manifest.Manifest, ovs []*overlay.Overlay) (*overlay.Result, error) {
	if len(ovs) == 0 {
		return &overlay.Result{Objects: included}, nil
	}
	res, err := c.Apply(ctx, included, ovs)
	if err != nil {
		return nil, err
	}
	// An overlay that renames objects may make two of them the same.
	if err := payload.CheckDuplicates(res.Objects); err != nil {
		return nil, err
	}
	return res, nil
}

// overlayChecker builds the overlays of every selection Validate makes and
// reports each problem once. A selection already built for a profile is not
// built again.
type overlayChecker struct {
	cache   *overlay.Cache
	sources []overlay.Source
	built   map[string]bool
	seen    map[string]bool
}

func newOverlayChecker(opts Options) *overlayChecker {
	return &overlayChecker{cache: opts.Cache.overlayCache(), sources: overlaySources(opts), built: map[string]bool{}, seen: map[string]bool{}}
}

// check runs the overlay stage of r's profile over included.
func (c *overlayChecker) check(ctx context.Context, r *resolved, included []*manifest.Manifest) []manifest.Finding {
	if len(r.merged.Overlays) == 0 {
		return nil
	}
	var key strings.Builder
	key.WriteString(r.profile)
	for _, m := range included {
		key.WriteString("|" + m.Position())
	}
	if c.built[key.String()] {
		return nil
	}
	c.built[key.String()] = true
	ovs, err := findOverlays(r.merged, c.sources)
	if err == nil {
		_, err = applyOverlays(ctx, c.cache, included, ovs)
	}
	what := fmt.Sprintf("profile %s, feature set %s", r.profile, FeatureSetLabel(r.featureSet))
	var out []manifest.Finding
	for _, e := range flatten(err) {
		f := manifest.Finding{Doc: -1, Severity: manifest.SeverityError}
		var oe *overlay.Error
		var de *payload.DuplicateError
		switch {
		case errors.As(e, &oe):
			f.File, f.Message = oe.File, oe.Err.Error()
		case errors.As(e, &de):
			f.File, f.Doc, f.Message = de.Second.File, de.Second.Doc, fmt.Sprintf("after the overlays %s is also defined in %s", de.Second.ID(), de.First.Position())
		default:
			f.File, f.Message = r.merged.File, e.Error()
		}
		k := f.File + "|" + f.Message
		if c.seen[k] {
			continue
		}
		c.seen[k] = true
		f.Message = what + ": " + f.Message
		out = append(out, f)
	}
	return out
}

// unused warns about overlay directories that no profile of set applies.
func (c *overlayChecker) unused(set *profiles.Set) []manifest.Finding {
	used := map[string]bool{}
	for _, name := range set.Names() {
		if p, err := set.Profile(name); err == nil {
			for _, o := range p.Overlays {
				used[o.Path] = true
			}
		}
	}
	var out []manifest.Finding
	for _, src := range c.sources {
		dirs, err := overlay.List(src)
		if err != nil {
			out = append(out, manifest.Finding{File: strings.TrimSuffix(src.Label, "/"), Doc: -1, Severity: manifest.SeverityError, Message: err.Error()})
			continue
		}
		for _, d := range dirs {
			if used[d] {
				continue
			}
			o, err := overlay.Find([]overlay.Source{src}, d, d)
			if err != nil {
				out = append(out, manifest.Finding{File: src.Label + d, Doc: -1, Severity: manifest.SeverityError, Message: err.Error()})
				continue
			}
			out = append(out, manifest.Finding{File: o.File, Doc: -1, Severity: manifest.SeverityWarning, Message: "no profile applies this overlay"})
		}
	}
	return out
}

// flatten returns the errors joined in err, recursively.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
