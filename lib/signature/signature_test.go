package signature_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	lgstore "github.com/openshift/library-go/pkg/verify/store"
	"github.com/openshift/library-go/pkg/verify/store/memory"
	"golang.org/x/crypto/openpgp"        //nolint:staticcheck // the library the CVO verifies with
	"golang.org/x/crypto/openpgp/packet" //nolint:staticcheck // see above

	"github.com/payload-apply/payload-apply/lib/signature"
)

var (
	digestA = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	digestB = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}
	now     = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
)

// newKey returns an RSA OpenPGP key made at created, expiring after
// lifetime (0: never).
func newKey(t *testing.T, name string, created time.Time, lifetime time.Duration) *openpgp.Entity {
	t.Helper()
	cfg := &packet.Config{RSABits: 2048, Time: func() time.Time { return created }}
	e, err := openpgp.NewEntity(name, "", name+"@example.com", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if lifetime > 0 {
		secs := uint32(lifetime / time.Second)
		for _, id := range e.Identities {
			id.SelfSignature.KeyLifetimeSecs = &secs
			if err := id.SelfSignature.SignUserId(id.UserId.Id, e.PrimaryKey, e.PrivateKey, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

// public returns e's public key as a keyring reads it back.
func public(t *testing.T, e *openpgp.Entity) openpgp.EntityList {
	t.Helper()
	var b bytes.Buffer
	if err := e.Serialize(&b); err != nil {
		t.Fatal(err)
	}
	el, err := signature.ReadKeyring(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return el
}

func atomicSig(t *testing.T, key *openpgp.Entity, digest v1.Hash, at time.Time) []byte {
	t.Helper()
	payload, err := signature.AtomicPayload(digest, "quay.io/example/release:4.22.0", "test", at)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signature.SignAtomic(payload, key, at)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// storeOf is a library-go memory store holding sigs for digest.
func storeOf(digest v1.Hash, sigs ...[]byte) lgstore.Store {
	return &memory.Store{Data: map[string][][]byte{digest.String(): sigs}}
}

func TestVerifyAtomic(t *testing.T) {
	release := newKey(t, "release", now.Add(-time.Hour), 0)
	other := newKey(t, "other", now.Add(-time.Hour), 0)
	expired := newKey(t, "expired", now.Add(-72*time.Hour), 24*time.Hour)
	expiredSig := atomicSig(t, expired, digestA, now.Add(-48*time.Hour))
	good := atomicSig(t, release, digestA, now)
	tampered := append([]byte{}, good...)
	tampered[len(tampered)-40] ^= 0xff

	tests := []struct {
		name     string
		keyring  openpgp.EntityList
		store    lgstore.Store
		verified bool
		reason   string
	}{
		{"signed by the keyring's key", public(t, release), storeOf(digestA, good), true, ""},
		{"a second signature after a bad one", public(t, release), storeOf(digestA, atomicSig(t, other, digestA, now), good), true, ""},
		{"wrong key", public(t, release), storeOf(digestA, atomicSig(t, other, digestA, now)), false, "signed by unknown key"},
		{"signature for another digest", public(t, release), storeOf(digestA, atomicSig(t, release, digestB, now)), false, "names " + digestB.String() + ", not this image"},
		{"missing signature", public(t, release), storeOf(digestB, good), false, "no atomic signature in"},
		{"tampered signature", public(t, release), storeOf(digestA, tampered), false, "release"},
		{"expired key", public(t, expired), storeOf(digestA, expiredSig), false, "expired on " + now.Add(-48*time.Hour).Format(time.RFC3339)},
		{"revoked key", revoked(public(t, release)), storeOf(digestA, good), false, ", whose key is revoked (\"key compromised\")"},
		{"a message that expands to a gibibyte", public(t, release), storeOf(digestA, readFile(t, "testdata/bzip2-bomb.sig"), good), true, ""},
		{"only a message that expands", public(t, release), storeOf(digestA, readFile(t, "testdata/bzip2-bomb.sig")), false,
			"a compressed packet expands to more than 51200 bytes, more than any signature holds: refused before it is read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &signature.Policy{
				Keyrings: []signature.Keyring{{Name: "release.gpg", Keys: tt.keyring}},
				Stores:   []lgstore.Store{tt.store},
				Required: true,
				Now:      func() time.Time { return now },
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			r, err := p.Verify(context.Background(), signature.Subject{Digest: digestA, Image: "quay.io/example/release@" + digestA.String()})
			runtime.ReadMemStats(&after)
			if took, grew := time.Since(start), after.TotalAlloc-before.TotalAlloc; took > 5*time.Second || grew > 64<<20 {
				t.Errorf("took %s and %d MiB", took, grew>>20)
			}
			if r.Verified != tt.verified {
				t.Fatalf("verified %v, want %v: %s", r.Verified, tt.verified, r)
			}
			if tt.verified {
				if err != nil || !strings.Contains(r.String(), signature.Fingerprint(release.PrimaryKey)) {
					t.Errorf("err %v, result %s: want the signer's fingerprint", err, r)
				}
				return
			}
			var ue *signature.UnverifiedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want an UnverifiedError", err)
			}
			if msg := err.Error(); !strings.Contains(msg, digestA.String()) || !strings.Contains(msg, tt.reason) {
				t.Errorf("error %q: want the digest and %q", msg, tt.reason)
			}
			t.Logf("%v", err)
		})
	}
}

// revoked marks the keys of el revoked, as a key revocation signature
// read with them would.
func revoked(el openpgp.EntityList) openpgp.EntityList {
	for _, e := range el {
		e.Revocations = append(e.Revocations, &packet.Signature{SigType: packet.SigTypeKeyRevocation, RevocationReasonText: "key compromised"})
	}
	return el
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestVerifyTwoKeyrings: with two keyrings, the one that signed is named
// as verified and the other as failing, never the reverse.
func TestVerifyTwoKeyrings(t *testing.T) {
	release := newKey(t, "release", now.Add(-time.Hour), 0)
	other := newKey(t, "other", now.Add(-time.Hour), 0)
	p := &signature.Policy{
		Keyrings: []signature.Keyring{{Name: "release.gpg", Keys: public(t, release)}, {Name: "other.gpg", Keys: public(t, other)}},
		Stores:   []lgstore.Store{storeOf(digestA, atomicSig(t, release, digestA, now))},
		Now:      func() time.Time { return now },
	}
	r, _ := p.Verify(context.Background(), signature.Subject{Digest: digestA, Image: "x"})
	if r.Verified || !r.Checks[0].Verified || r.Checks[1].Verified {
		t.Fatalf("result %s: want release.gpg verified, other.gpg not", r)
	}
	if strings.Contains(r.Reason, "release.gpg") || !strings.Contains(r.Reason, "keyring other.gpg: signed by unknown key") {
		t.Errorf("reason %q: want other.gpg named, not release.gpg", r.Reason)
	}
}

// failing is a store every request of which fails, counting them.
type failing struct{ requests int }

func (f *failing) Signatures(ctx context.Context, _, _ string, fn lgstore.Callback) error {
	for range 9 {
		f.requests++
		if done, err := fn(ctx, nil, errors.New("GET signature-N: 30 bytes in the last 15s, below the minimum rate")); done || err != nil {
			return err
		}
	}
	return nil
}
func (f *failing) String() string { return "failing" }

// TestVerifyAsksAFailingStoreOnce: a store that fails a request is asked
// for nothing more, in the verification and in the look at why it failed.
func TestVerifyAsksAFailingStoreOnce(t *testing.T) {
	f := &failing{}
	p := &signature.Policy{Keyrings: []signature.Keyring{{Name: "release.gpg", Keys: public(t, newKey(t, "release", now, 0))}}, Stores: []lgstore.Store{f}}
	r, _ := p.Verify(context.Background(), signature.Subject{Digest: digestA, Image: "x"})
	if f.requests != 1 || !strings.Contains(r.Reason, "failing: GET signature-N: 30 bytes") {
		t.Errorf("%d requests, reason %q: want one, naming the failure", f.requests, r.Reason)
	}
}

// source is a cosign signature source in memory.
type source map[string][]signature.CosignSignature

func (s source) CosignSignatures(_ context.Context, repo string, digest v1.Hash) ([]signature.CosignSignature, error) {
	return s[repo+":"+signature.CosignTag(digest)], nil
}
func (s source) String() string { return "memory" }

func cosignSig(t *testing.T, key *ecdsa.PrivateKey, repo string, digest v1.Hash) signature.CosignSignature {
	t.Helper()
	payload, err := signature.CosignPayload(repo, digest, nil)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signature.CosignSign(payload, key)
	if err != nil {
		t.Fatal(err)
	}
	return signature.CosignSignature{Payload: payload, Signature: sig}
}

func TestVerifyCosign(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const repo = "registry.example/release"
	tag := repo + ":" + signature.CosignTag(digestA)
	tampered := cosignSig(t, key, repo, digestA)
	tampered.Payload = bytes.Replace(tampered.Payload, []byte(digestA.Hex[:8]), []byte(digestB.Hex[:8]), 1)
	tests := []struct {
		name     string
		src      source
		verified bool
		reason   string
	}{
		{"signed", source{tag: {cosignSig(t, key, repo, digestA)}}, true, ""},
		{"wrong key", source{tag: {cosignSig(t, other, repo, digestA)}}, false, "does not verify with the key"},
		{"another digest's signature under this tag", source{tag: {cosignSig(t, key, repo, digestB)}}, false, "names " + digestB.String()},
		{"missing", source{}, false, "no cosign signature (no tag " + tag + ")"},
		{"tampered payload", source{tag: {tampered}}, false, "does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &signature.Policy{CosignKeys: []signature.CosignKey{{Name: "cosign.pub", Key: &key.PublicKey}}, Cosign: tt.src, Required: true}
			r, err := p.Verify(context.Background(), signature.Subject{Digest: digestA, Repository: repo, Image: repo + "@" + digestA.String()})
			if r.Verified != tt.verified {
				t.Fatalf("verified %v, want %v: %s", r.Verified, tt.verified, r)
			}
			if !tt.verified && (err == nil || !strings.Contains(err.Error(), digestA.String()) || !strings.Contains(err.Error(), tt.reason)) {
				t.Errorf("error %v: want the digest and %q", err, tt.reason)
			}
		})
	}
}

func TestPolicyOutcomes(t *testing.T) {
	ctx := context.Background()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	keys := []signature.CosignKey{{Name: "k", Key: &key.PublicKey}}
	subject := signature.Subject{Digest: digestA, Repository: "r.example/x", Image: "r.example/x@" + digestA.String()}
	tests := []struct {
		name     string
		policy   signature.Policy
		subject  signature.Subject
		err      bool
		accepted bool
		reason   string
	}{
		{"no policy, not required: goes on unverified", signature.Policy{}, subject, false, false, "no verification policy"},
		{"no policy, required: refused", signature.Policy{Required: true}, subject, true, false, "no verification policy"},
		{"required, allowed unverified: accepted", signature.Policy{Required: true, AllowUnverified: true, CosignKeys: keys, Cosign: source{}}, subject, false, true, "no cosign signature"},
		{"a directory cannot be verified", signature.Policy{Required: true, CosignKeys: keys, Cosign: source{}}, signature.Subject{Image: "./payload"}, true, false, "./payload is not an image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.policy.Verify(ctx, tt.subject)
			if (err != nil) != tt.err || r.Accepted != tt.accepted || r.Verified || !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("Verify = %+v, %v; want error %v, accepted %v, reason %q", r, err, tt.err, tt.accepted, tt.reason)
			}
			if tt.accepted && !strings.Contains(r.AcceptedRisk("4.22.0"), "cannot be verified") {
				t.Errorf("AcceptedRisk = %q", r.AcceptedRisk("4.22.0"))
			}
		})
	}
}

func TestCosignKeys(t *testing.T) {
	priv, err := os.ReadFile("testdata/cosign.key")
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := os.ReadFile("testdata/cosign.pub")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.ReadCosignPrivateKey(priv, []byte("wrong")); err == nil || !strings.Contains(err.Error(), "wrong password") {
		t.Errorf("wrong password: err = %v", err)
	}
	signer, err := signature.ReadCosignPrivateKey(priv, []byte("test-password"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signature.ReadCosignPublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := signature.CosignPayload("r.example/x", digestA, nil)
	sig, err := signature.CosignSign(payload, signer)
	if err != nil {
		t.Fatal(err)
	}
	p := &signature.Policy{CosignKeys: []signature.CosignKey{{Name: "cosign.pub", Key: pub}}, Required: true,
		Cosign: source{"r.example/x:" + signature.CosignTag(digestA): {{Payload: payload, Signature: sig}}}}
	if r, err := p.Verify(context.Background(), signature.Subject{Digest: digestA, Repository: "r.example/x"}); err != nil || !r.Verified {
		t.Errorf("a signature by cosign's own key pair: %s, %v", r, err)
	}
}
