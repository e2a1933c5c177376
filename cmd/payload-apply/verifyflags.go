package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/pflag"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/signature"
	"github.com/payload-apply/payload-apply/lib/signature/store"
)

// verifyFlags are the verification policy flags of apply (and later
// upgrade and the operator) and verify.
type verifyFlags struct {
	keyrings        []string
	stores          []string
	cosignKeys      []string
	allowUnverified bool
}

func (v *verifyFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&v.keyrings, "verify-keyring", nil, "OpenPGP public keyring (gpg --export [--armor]) that must have signed the payload's digest (the CVO's atomic signatures); repeat: each must have signed")
	fs.StringArrayVar(&v.stores, "signature-store", nil, "where atomic signatures are: a directory or an http(s) URL laid out as sha256=<hex>/signature-N; repeat for more (with --kubeconfig the cluster's openshift-config-managed signature ConfigMaps are read too)")
	fs.StringArrayVar(&v.cosignKeys, "verify-cosign-key", nil, "cosign public key (cosign.pub) that must have signed the payload image; its signature is read beside the image in its registry (sha256-<hex>.sig); repeat: each must have signed")
	fs.BoolVar(&v.allowUnverified, "allow-unverified", false, "go on with a payload that is not verified, and say so (recorded as an accepted risk)")
}

// given reports whether a key was named.
func (v *verifyFlags) given() bool { return len(v.keyrings) > 0 || len(v.cosignKeys) > 0 }

// policy builds the verification policy for a payload from src. The
// policy is required (an unverified payload refused unless
// --allow-unverified) when keys are named or the payload comes from a
// registry; a local payload with no keys named goes on, unverified, as the
// CVO's own local payload does. cfg, when set, adds the cluster's signature
// ConfigMaps as a store.
func (v *verifyFlags) policy(reg *registryFlags, src payloadSource, cfg *rest.Config) (*signature.Policy, error) {
	p := &signature.Policy{
		Required:        v.given() || src.Kind == sourceRegistry,
		AllowUnverified: v.allowUnverified,
		Cosign:          reg.client(),
	}
	for _, f := range v.keyrings {
		data, err := readFlagFile(f)
		if err != nil {
			return nil, usageErrorf("--verify-keyring: %v", err)
		}
		keys, err := signature.ReadKeyring(data)
		if err != nil {
			return nil, usageErrorf("--verify-keyring %s: %v", f, err)
		}
		p.Keyrings = append(p.Keyrings, signature.Keyring{Name: f, Keys: keys})
	}
	for _, f := range v.cosignKeys {
		data, err := readFlagFile(f)
		if err != nil {
			return nil, usageErrorf("--verify-cosign-key: %v", err)
		}
		key, err := signature.ReadCosignPublicKey(data)
		if err != nil {
			return nil, usageErrorf("--verify-cosign-key %s: %v", f, err)
		}
		p.CosignKeys = append(p.CosignKeys, signature.CosignKey{Name: f, Key: key})
	}
	client := &http.Client{Transport: reg.client().Transport()}
	for _, s := range v.stores {
		st, err := store.Parse(s, client)
		if err != nil {
			return nil, usageErrorf("--signature-store: %v", err)
		}
		p.Stores = append(p.Stores, st)
	}
	if cfg != nil && len(p.Keyrings) > 0 {
		// The typed core client alone: the whole clientset would add 20 MB
		// to the binary.
		cs, err := corev1client.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		p.Stores = append(p.Stores, store.ConfigMaps(cs))
	}
	if len(p.Keyrings) > 0 && len(p.Stores) == 0 {
		return nil, usageErrorf("--verify-keyring needs a --signature-store (or --kubeconfig, whose signature ConfigMaps are read) to find atomic signatures in")
	}
	return p, nil
}

// subject is what a policy checks of a payload source.
func (src payloadSource) subject() signature.Subject {
	s := signature.Subject{Digest: src.Digest, Image: src.Spec}
	if src.Kind == sourceEmbedded {
		s.Image = "the built-in payload"
	}
	if src.Ref != nil {
		s.Repository = src.Ref.Context().Name()
		s.Image = src.Pinned()
	}
	return s
}

// check verifies the payload of src and says the outcome on stderr:
// verified, unverified and accepted (a warning), or refused (an error, exit
// 1, nothing done). A payload that is neither verified nor required goes on
// silently (at -v=1 it says so).
func (v *verifyFlags) check(ctx context.Context, s IOStreams, reg *registryFlags, src payloadSource, cfg *rest.Config) (signature.Result, error) {
	p, err := v.policy(reg, src, cfg)
	if err != nil {
		return signature.Result{}, err
	}
	r, err := p.Verify(ctx, src.subject())
	switch {
	case err != nil && ctx.Err() != nil:
		return r, &exitError{Code: exitInterrupted, Err: fmt.Errorf("verify: interrupted")}
	case err != nil:
		return r, fmt.Errorf("refusing %w", err)
	case r.Verified:
		fmt.Fprintln(s.ErrOut, r.String())
	case r.Accepted:
		fmt.Fprintf(s.ErrOut, "warning: %s\n", r)
	default:
		klog.FromContext(ctx).V(1).Info("Payload not verified (no policy required it)", "reason", r.Reason)
	}
	return r, nil
}
