package plan

import (
	"context"
	"errors"

	"github.com/payload-apply/payload-apply/lib/apicheck"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// CheckObjects checks objects as the API server would check them when
// they arrive (lib/apicheck): the built-in kinds against their types, the
// kinds a CustomResourceDefinition among objs defines against its schema,
// and every object's apiVersion, kind, name, namespace, labels and
// annotations. It returns a finding per problem, at the object's file and
// document, errors and warnings; cache (nil: none) shares compiled schemas
// between calls. ctx ending stops it between objects.
func CheckObjects(ctx context.Context, objs []*manifest.Manifest, cache *apicheck.Cache) ([]manifest.Finding, error) {
	c := apicheck.NewChecker(objs, cache)
	var out []manifest.Finding
	for _, m := range objs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, c.Findings(m)...)
	}
	return out, nil
}

// Check is CheckObjects over the plan's objects: what apply sends. The
// findings are kept: checking the same plan again returns them.
func (p *Plan) Check(ctx context.Context) ([]manifest.Finding, error) {
	p.checkMu.Lock()
	defer p.checkMu.Unlock()
	if p.isDone {
		return p.checked, nil
	}
	var cache *apicheck.Cache
	if p.cache != nil {
		cache = p.cache.schemas
	}
	findings, err := CheckObjects(ctx, p.Objects, cache)
	if err == nil {
		p.checked, p.isDone = findings, true
	}
	return findings, err
}

// CheckErrors returns the error findings as errors (each a
// *manifest.ParseError naming the file and document), joined; nil when
// there is none.
func CheckErrors(findings []manifest.Finding) error {
	var errs []error
	for _, f := range findings {
		if f.Severity == manifest.SeverityError {
			errs = append(errs, &manifest.ParseError{File: f.File, Doc: f.Doc, Err: errors.New(f.Message)})
		}
	}
	return errors.Join(errs...)
}
