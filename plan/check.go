package plan

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/payload-apply/payload-apply/lib/apicheck"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/parallel"
	"github.com/payload-apply/payload-apply/lib/plancache"
)

// CheckObjects checks objects as the API server would check them when
// they arrive (lib/apicheck): the built-in kinds against their types, the
// kinds a CustomResourceDefinition among objs defines against its schema,
// and every object's apiVersion, kind, name, namespace, labels and
// annotations. It returns a finding per problem, at the object's file and
// document, errors and warnings; cache (nil: none) shares compiled schemas
// between calls. ctx ending stops it between objects. The objects are
// checked on every core (the Checker is safe for concurrent use); the
// findings come in the objects' order.
func CheckObjects(ctx context.Context, objs []*manifest.Manifest, cache *apicheck.Cache) ([]manifest.Finding, error) {
	c := apicheck.NewChecker(objs, cache)
	per := make([][]manifest.Finding, len(objs))
	err := parallel.Each(ctx, len(objs), 0, func() func(int) {
		return func(i int) { per[i] = c.Findings(objs[i]) }
	})
	if err != nil {
		return nil, err
	}
	var out []manifest.Finding
	for _, f := range per {
		out = append(out, f...)
	}
	return out, nil
}

// Check is CheckObjects over the plan's objects: what apply sends. The
// findings are kept: checking the same plan again returns them. A plan
// built with a plan cache (Options.PlanCache) keeps them there too, under
// the key of its objects' content (Digests) and the binary: the next
// command that plans the same objects (a no-op apply again, the
// operator's next process) reads them instead of checking.
func (p *Plan) Check(ctx context.Context) ([]manifest.Finding, error) {
	p.checkMu.Lock()
	defer p.checkMu.Unlock()
	if p.isDone {
		return p.checked, nil
	}
	key, keyed := p.checkKey()
	if keyed {
		if findings, ok := loadFindings(p.store, key); ok {
			p.checked, p.isDone, p.checkHit = findings, true, true
			return findings, nil
		}
	}
	var cache *apicheck.Cache
	if p.cache != nil {
		cache = p.cache.schemas
	}
	findings, err := CheckObjects(ctx, p.Objects, cache)
	if err == nil {
		p.checked, p.isDone = findings, true
		if keyed {
			saveFindings(p.store, key, findings)
		}
	}
	return findings, err
}

// checkFormat changes when what a findings entry holds changes meaning.
const checkFormat = "payload-apply plan cache: findings v1"

// checkKey is the key of the plan's findings in its store; false when the
// plan has no store or its content has no digest.
func (p *Plan) checkKey() (plancache.Key, bool) {
	if p.store == nil {
		return plancache.Key{}, false
	}
	d := p.Digests()
	if !d.ContentOK {
		return plancache.Key{}, false
	}
	return plancache.NewKey(checkFormat, binaryID(), hex.EncodeToString(d.Content[:])), true
}

// loadFindings reads the findings stored under key: false when there are
// none, or they do not decode (then they are checked again, and stored
// again).
func loadFindings(s *plancache.Store, key plancache.Key) ([]manifest.Finding, bool) {
	body, err := s.Get(key)
	if err != nil || body == nil {
		return nil, false
	}
	var findings []manifest.Finding
	if err := json.Unmarshal(body, &findings); err != nil {
		return nil, false
	}
	for _, f := range findings {
		if f.Severity != manifest.SeverityError && f.Severity != manifest.SeverityWarning {
			return nil, false
		}
	}
	if len(findings) == 0 {
		findings = nil // as CheckObjects returns none
	}
	return findings, true
}

// saveFindings stores findings under key; a store that cannot take them
// costs the next command a check, nothing else.
func saveFindings(s *plancache.Store, key plancache.Key, findings []manifest.Finding) {
	if findings == nil {
		findings = []manifest.Finding{}
	}
	body, err := json.Marshal(findings)
	if err != nil {
		return
	}
	_ = s.Put(key, body)
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
