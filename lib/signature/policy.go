package signature

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/openshift/library-go/pkg/verify"
	"github.com/openshift/library-go/pkg/verify/store"
	"github.com/openshift/library-go/pkg/verify/store/serial"
	"golang.org/x/crypto/openpgp" //nolint:staticcheck // library-go's pkg/verify takes its key lists
)

// Scheme names a signature scheme.
type Scheme string

const (
	// SchemeAtomic is the CVO's: an atomic container signature in an
	// OpenPGP message, from signature stores.
	SchemeAtomic Scheme = "atomic"
	// SchemeCosign is sigstore/cosign's key-based signature beside the
	// image in its registry.
	SchemeCosign Scheme = "cosign"
)

// Subject is the image Verify checks.
type Subject struct {
	// Digest is the digest signatures name: the one the pull spec
	// resolves to (an image index's, for a multi-platform release).
	Digest v1.Hash
	// Repository is HOST/REPO of the registry the image is in, where cosign
	// signatures live; empty for an image that is not in a registry.
	Repository string
	// Image is the pull spec or file, for messages.
	Image string
}

// Policy is what makes a payload verified. The zero Policy verifies
// nothing and requires nothing. A Policy is safe for concurrent use once
// built.
type Policy struct {
	// Keyrings must each have signed the digest (atomic signatures, read
	// from Stores).
	Keyrings []Keyring
	// Stores are searched, in order, for atomic signatures.
	Stores []store.Store
	// CosignKeys must each have signed the digest (cosign signatures, read
	// from Cosign).
	CosignKeys []CosignKey
	// Cosign reads cosign signatures from the image's registry.
	Cosign CosignSource
	// Required makes Verify return an *UnverifiedError for a payload that
	// is not verified, unless AllowUnverified.
	Required bool
	// AllowUnverified lets an unverified payload go on: Verify returns no
	// error and the Result says Accepted, to be recorded as an accepted
	// risk.
	AllowUnverified bool
	// Now is the time keys and signatures are checked at; nil: time.Now.
	Now func() time.Time
}

// Enabled reports whether p names any key to verify with.
func (p *Policy) Enabled() bool { return len(p.Keyrings) > 0 || len(p.CosignKeys) > 0 }

// Verify checks s against the policy: every keyring must have an atomic
// signature of s.Digest in Stores, and every cosign key a cosign signature
// of it beside the image. It returns the Result whatever it is, and an
// *UnverifiedError when the payload is not verified, p.Required and not
// p.AllowUnverified. Store and registry failures count as missing
// signatures (the Result says what failed); the context ending is an
// error.
func (p *Policy) Verify(ctx context.Context, s Subject) (Result, error) {
	r := Result{Digest: s.Digest.String(), Image: s.Image, Required: p.Required}
	if s.Digest.Hex == "" {
		r.Digest = ""
	}
	switch {
	case !p.Enabled():
		r.Reason = "no verification policy: no keyring (--verify-keyring) or cosign key (--verify-cosign-key) to verify with"
	case s.Digest.Hex == "":
		r.Reason = s.Image + " is not an image: there is no digest a signature could name"
	default:
		now := time.Now
		if p.Now != nil {
			now = p.Now
		}
		if len(p.Keyrings) > 0 {
			r.Checks = append(r.Checks, p.verifyAtomic(ctx, s, now())...)
		}
		if len(p.CosignKeys) > 0 {
			r.Checks = append(r.Checks, p.verifyCosign(ctx, s)...)
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
		r.Verified = true
		var reasons []string
		for _, c := range r.Checks {
			if !c.Verified {
				r.Verified = false
				reasons = append(reasons, c.Reason)
			}
		}
		r.Reason = strings.Join(reasons, "; ")
	}
	if r.Verified {
		return r, nil
	}
	if p.AllowUnverified {
		r.Accepted = true
		return r, nil
	}
	if p.Required {
		return r, &UnverifiedError{Result: r}
	}
	return r, nil
}

// verifyAtomic runs library-go's verifier, as the CVO does, over the
// keyrings less their expired and revoked keys and subkeys, then says for
// each keyring who signed or why nothing did. Every store is read through
// checked: signatures are bounded before library-go reads them, and read
// once.
func (p *Policy) verifyAtomic(ctx context.Context, s Subject, now time.Time) []Check {
	verifiers := map[string]openpgp.EntityList{}
	for _, k := range p.Keyrings {
		verifiers[k.Name] = usable(k.Keys, now)
	}
	where := p.storesString()
	checks := make([]Check, len(p.Keyrings))
	for i, k := range p.Keyrings {
		checks[i] = Check{Scheme: SchemeAtomic, Key: k.Name, Source: where}
	}
	if len(p.Stores) == 0 {
		for i := range checks {
			checks[i].Reason = "no signature store to read atomic signatures from"
		}
		return checks
	}
	stores := make([]store.Store, len(p.Stores))
	for i, st := range p.Stores {
		stores[i] = &checked{Store: st}
	}
	digest := s.Digest.String()
	verr := verify.NewReleaseVerifier(verifiers, &serial.Store{Stores: stores}).Verify(ctx, digest)
	// Who signed, or why not: each signature the stores hold (read
	// already), judged for each keyring.
	sigs, notes := collect(ctx, stores, digest)
	all := true
	for i, k := range p.Keyrings {
		var reasons []string
		for _, sig := range sigs {
			signer, err := judgeAtomic(sig, k.Keys, now, digest)
			if err == nil {
				checks[i].Verified, checks[i].SignedBy = true, signer
				break
			}
			reasons = append(reasons, err.Error())
		}
		if checks[i].Verified {
			continue
		}
		all = false
		if len(sigs) == 0 && len(notes) == 0 {
			reasons = append(reasons, "no atomic signature in "+where)
		}
		reasons = append(reasons, notes...)
		if len(reasons) == 0 && verr != nil {
			reasons = append(reasons, verr.Error())
		}
		checks[i].Reason = fmt.Sprintf("keyring %s: %s", k.Name, strings.Join(dedupe(reasons), "; "))
	}
	switch {
	case verr == nil:
		for i := range checks {
			checks[i].Verified, checks[i].Reason = true, "" // library-go found every keyring's signature
		}
	case all:
		// Never verified against library-go's word.
		for i := range checks {
			checks[i].Verified, checks[i].Reason = false, fmt.Sprintf("keyring %s: %v", checks[i].Key, verr)
		}
	}
	return checks
}

func (p *Policy) storesString() string {
	var s []string
	for _, st := range p.Stores {
		s = append(s, st.String())
	}
	return strings.Join(s, ", ")
}

// collect reads the signatures of digest from stores (at most 10 from
// each, as library-go reads them) and notes the stores' failures.
func collect(ctx context.Context, stores []store.Store, digest string) ([][]byte, []string) {
	var sigs [][]byte
	var notes []string
	for _, st := range stores {
		n := 0
		err := st.Signatures(ctx, "", digest, func(ctx context.Context, sig []byte, err error) (bool, error) {
			if err != nil {
				if !errors.Is(err, store.ErrNotFound) {
					notes = append(notes, fmt.Sprintf("%s: %v", st, err))
				}
				return false, nil
			}
			sigs = append(sigs, sig)
			n++
			return n >= 10, nil
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			notes = append(notes, fmt.Sprintf("%s: %v", st, err))
		}
	}
	return sigs, notes
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// verifyCosign checks each cosign key against the signatures beside the
// image.
func (p *Policy) verifyCosign(ctx context.Context, s Subject) []Check {
	checks := make([]Check, len(p.CosignKeys))
	for i, k := range p.CosignKeys {
		checks[i] = Check{Scheme: SchemeCosign, Key: k.Name}
	}
	fail := func(reason string) []Check {
		for i := range checks {
			checks[i].Reason = fmt.Sprintf("cosign key %s: %s", checks[i].Key, reason)
		}
		return checks
	}
	if s.Repository == "" || p.Cosign == nil {
		return fail("cosign signatures live beside the image in its registry, and " + s.Image + " is not in one")
	}
	where := s.Repository + ":" + CosignTag(s.Digest)
	for i := range checks {
		checks[i].Source = where
	}
	sigs, err := p.Cosign.CosignSignatures(ctx, s.Repository, s.Digest)
	if err != nil {
		return fail(fmt.Sprintf("read %s: %v", where, err))
	}
	if len(sigs) == 0 {
		return fail("no cosign signature (no tag " + where + ")")
	}
	for i, k := range p.CosignKeys {
		var reasons []string
		for _, sig := range sigs {
			digest, _, err := verifyCosign(sig, k.Key)
			switch {
			case err != nil:
				reasons = append(reasons, err.Error())
			case digest != s.Digest.String():
				reasons = append(reasons, fmt.Sprintf("a signature by the key names %s, not this image", digest))
			default:
				checks[i].Verified, checks[i].SignedBy = true, k.KeyID()
			}
			if checks[i].Verified {
				break
			}
		}
		if !checks[i].Verified {
			checks[i].Reason = fmt.Sprintf("cosign key %s: %d signature(s) in %s, none by this key for this image: %s", k.Name, len(sigs), where, strings.Join(dedupe(reasons), "; "))
		}
	}
	return checks
}
