package signature

import (
	"bytes"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/crypto/openpgp"        //nolint:staticcheck // library-go's pkg/verify reads keys with it; the same library reads them here
	"golang.org/x/crypto/openpgp/packet" //nolint:staticcheck // see above
)

// AtomicType is the type of the simple signing payload the CVO accepts.
const AtomicType = "atomic container signature"

// maxSignatureSize bounds one signature, as library-go's HTTP store does.
const maxSignatureSize = 50 * 1024

// atomicPayload is containers/image's simple signing payload with only the
// fields library-go's verifier accepts (it refuses unknown fields).
type atomicPayload struct {
	Critical struct {
		Type  string `json:"type"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
	} `json:"critical"`
	Optional struct {
		Creator   string `json:"creator,omitempty"`
		Timestamp int64  `json:"timestamp,omitempty"`
	} `json:"optional"`
}

// AtomicPayload returns the JSON an atomic container signature signs:
// the image digest, the identity (the pull spec the release is published
// as, e.g. quay.io/org/release:4.22.0) and, optionally, who made it and
// when.
func AtomicPayload(digest v1.Hash, identity, creator string, at time.Time) ([]byte, error) {
	if digest.Hex == "" || identity == "" {
		return nil, errors.New("atomic signature: a digest and an identity are required")
	}
	var p atomicPayload
	p.Critical.Type = AtomicType
	p.Critical.Image.DockerManifestDigest = digest.String()
	p.Critical.Identity.DockerReference = identity
	p.Optional.Creator = creator
	if !at.IsZero() {
		p.Optional.Timestamp = at.Unix()
	}
	return json.Marshal(p)
}

// parseAtomicPayload reads a signed payload's digest and identity.
func parseAtomicPayload(data []byte) (digest, identity string, err error) {
	var p atomicPayload
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return "", "", fmt.Errorf("not an atomic container signature: %w", err)
	}
	if p.Critical.Type != AtomicType {
		return "", "", fmt.Errorf("signature of type %q, want %q", p.Critical.Type, AtomicType)
	}
	return p.Critical.Image.DockerManifestDigest, p.Critical.Identity.DockerReference, nil
}

// SignAtomic signs payload with key into a binary OpenPGP signed message
// (one-pass signature, literal data, signature), the form gpg --sign
// writes and the CVO reads. key must hold its decrypted private key.
func SignAtomic(payload []byte, key *openpgp.Entity, now time.Time) ([]byte, error) {
	var out bytes.Buffer
	cfg := &packet.Config{Time: func() time.Time { return now }, DefaultHash: crypto.SHA256}
	w, err := openpgp.Sign(&out, withHashPreference(key), nil, cfg)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if _, err := w.Write(payload); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return out.Bytes(), nil
}

// withHashPreference returns key, or a copy whose identities prefer
// SHA-256 when they state no preference: the OpenPGP library would
// otherwise insist on RIPEMD-160, which it does not have.
func withHashPreference(key *openpgp.Entity) *openpgp.Entity {
	needs := false
	for _, id := range key.Identities {
		if id.SelfSignature != nil && len(id.SelfSignature.PreferredHash) == 0 {
			needs = true
		}
	}
	if !needs {
		return key
	}
	c := *key
	c.Identities = map[string]*openpgp.Identity{}
	for n, id := range key.Identities {
		idc := *id
		if id.SelfSignature != nil && len(id.SelfSignature.PreferredHash) == 0 {
			sig := *id.SelfSignature
			sig.PreferredHash = []uint8{8} // SHA-256 (RFC 4880, 9.4)
			idc.SelfSignature = &sig
		}
		c.Identities[n] = &idc
	}
	return &c
}

// errEdDSA explains the keys the CVO's OpenPGP library cannot read.
const errEdDSA = "the CVO's OpenPGP library (golang.org/x/crypto/openpgp) reads RSA, DSA and ECDSA keys, not EdDSA ones: make the key with 'gpg --quick-gen-key NAME rsa4096 sign'"

// ReadKeyring reads OpenPGP public keys, ASCII-armored or binary (gpg
// --export [--armor]), as library-go does.
func ReadKeyring(data []byte) (openpgp.EntityList, error) {
	el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data))
	if err != nil {
		var err2 error
		if el, err2 = openpgp.ReadKeyRing(bytes.NewReader(data)); err2 != nil {
			if strings.Contains(err.Error()+err2.Error(), "public key type") {
				return nil, fmt.Errorf("no usable key: %s", errEdDSA)
			}
			return nil, fmt.Errorf("not an OpenPGP keyring: %v", err)
		}
	}
	if len(el) == 0 {
		return nil, errors.New("no key in the keyring")
	}
	return el, nil
}

// ReadSigningKey reads one OpenPGP secret key (gpg --export-secret-keys
// [--armor] KEY) and decrypts it with passphrase when it is protected.
func ReadSigningKey(data, passphrase []byte) (*openpgp.Entity, error) {
	el, err := ReadKeyring(data)
	if err != nil {
		return nil, err
	}
	var keys openpgp.EntityList
	for _, e := range el {
		if e.PrivateKey != nil {
			keys = append(keys, e)
		}
	}
	if len(keys) != 1 {
		return nil, fmt.Errorf("want one secret key, found %d (export one with gpg --export-secret-keys --armor KEY)", len(keys))
	}
	e := keys[0]
	for _, k := range append([]*packet.PrivateKey{e.PrivateKey}, subkeyPrivates(e)...) {
		if k.Encrypted {
			if len(passphrase) == 0 {
				return nil, errors.New("the secret key is protected: give its passphrase")
			}
			if err := k.Decrypt(passphrase); err != nil {
				return nil, fmt.Errorf("decrypt the secret key: %w", err)
			}
		}
	}
	return e, nil
}

func subkeyPrivates(e *openpgp.Entity) []*packet.PrivateKey {
	var out []*packet.PrivateKey
	for _, s := range e.Subkeys {
		if s.PrivateKey != nil {
			out = append(out, s.PrivateKey)
		}
	}
	return out
}

// Keyring is a named set of OpenPGP public keys. Each keyring of a Policy
// must have signed a payload (as each verifier-public-key-* of the CVO's
// verification ConfigMap must).
type Keyring struct {
	// Name names the keyring in results and messages (its file).
	Name string
	Keys openpgp.EntityList
}

// Fingerprint prints an OpenPGP key's fingerprint as gpg does.
func Fingerprint(k *packet.PublicKey) string {
	return strings.ToUpper(fmt.Sprintf("%x", k.Fingerprint))
}

// describe names an entity: its fingerprint and user ids.
func describe(e *openpgp.Entity) string {
	var ids []string
	for id := range e.Identities {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return Fingerprint(e.PrimaryKey)
	}
	return Fingerprint(e.PrimaryKey) + " (" + strings.Join(ids, ", ") + ")"
}

// keyProblem says why an entity may not verify signatures at now: revoked,
// or its primary key expired. Empty: usable.
func keyProblem(e *openpgp.Entity, now time.Time) string {
	if len(e.Revocations) > 0 {
		return "revoked"
	}
	for _, id := range e.Identities {
		if s := id.SelfSignature; s != nil && s.KeyExpired(now) {
			return "expired on " + s.CreationTime.Add(time.Duration(*s.KeyLifetimeSecs)*time.Second).UTC().Format(time.RFC3339)
		}
	}
	return ""
}

// usable returns the keys of el usable at now: without revoked and
// expired keys, and without revoked and expired subkeys.
func usable(el openpgp.EntityList, now time.Time) openpgp.EntityList {
	var out openpgp.EntityList
	for _, e := range el {
		if keyProblem(e, now) != "" {
			continue
		}
		c := *e
		c.Subkeys = nil
		for _, s := range e.Subkeys {
			if subkeyRevoked(s.Sig) || s.Sig != nil && s.Sig.KeyExpired(now) {
				continue
			}
			c.Subkeys = append(c.Subkeys, s)
		}
		out = append(out, &c)
	}
	return out
}

// judgeAtomic reads one signature message (checked by checkMessage
// first) against keys, usable or not, and returns who signed it when it is
// a valid signature, at now, by a usable key of keys naming digest; else an
// error saying what is wrong: not signed, by a key keys lacks, by a
// revoked or expired key or subkey, or one not for signing, tampered,
// expired, or naming another image.
func judgeAtomic(sig []byte, keys openpgp.EntityList, now time.Time, digest string) (signer string, err error) {
	md, err := openpgp.ReadMessage(bytes.NewReader(sig), keys, nil, nil)
	if err != nil {
		return "", fmt.Errorf("not an OpenPGP message: %w", err)
	}
	if !md.IsSigned {
		return "", errors.New("not signed")
	}
	content, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, maxSignatureSize))
	if err != nil {
		return "", fmt.Errorf("read the message: %w", err)
	}
	if md.SignedBy == nil {
		return "", unusableSigner(keys, md.SignedByKeyId, now)
	}
	who := describeKey(md.SignedBy)
	if md.SignatureError != nil {
		return "", fmt.Errorf("signature by %s does not verify (tampered?): %v", who, md.SignatureError)
	}
	if p := keyProblem(md.SignedBy.Entity, now); p != "" {
		return "", fmt.Errorf("signed by %s, whose key is %s", who, p)
	}
	if subkeyRevoked(md.SignedBy.SelfSignature) && md.SignedBy.PublicKey != md.SignedBy.Entity.PrimaryKey {
		return "", fmt.Errorf("signed by %s, which is revoked%s", who, revocationReason(md.SignedBy.SelfSignature))
	}
	if s := md.SignedBy.SelfSignature; md.SignedBy.PublicKey != md.SignedBy.Entity.PrimaryKey && s != nil && s.KeyExpired(now) {
		return "", fmt.Errorf("signed by %s, which expired on %s", who, s.CreationTime.Add(time.Duration(*s.KeyLifetimeSecs)*time.Second).UTC().Format(time.RFC3339))
	}
	if s := md.Signature; s != nil && s.SigLifetimeSecs != nil && *s.SigLifetimeSecs != 0 {
		if end := s.CreationTime.Add(time.Duration(*s.SigLifetimeSecs) * time.Second); now.After(end) {
			return "", fmt.Errorf("the signature by %s, made on %s, expired on %s", who, s.CreationTime.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339))
		}
	}
	named, _, err := parseAtomicPayload(content)
	if err != nil {
		return "", err
	}
	if named != digest {
		return "", fmt.Errorf("a signature by %s names %s, not this image", who, named)
	}
	return describe(md.SignedBy.Entity), nil
}

// unusableSigner says why the key that made a signature is no signer the
// OpenPGP library accepts: keys lack it, or it (or its subkey) is revoked,
// or not for signing.
func unusableSigner(keys openpgp.EntityList, id uint64, now time.Time) error {
	found := keys.KeysById(id)
	if len(found) == 0 {
		return fmt.Errorf("signed by unknown key %016X (not in this keyring)", id)
	}
	k := found[0]
	who := describeKey(&k)
	switch {
	case len(k.Entity.Revocations) > 0:
		return fmt.Errorf("signed by %s, whose key is revoked%s", who, revocationReason(k.Entity.Revocations[0]))
	case subkeyRevoked(k.SelfSignature):
		return fmt.Errorf("signed by %s, which is revoked%s", who, revocationReason(k.SelfSignature))
	}
	return fmt.Errorf("signed by %s, a key not marked for signing", who)
}

// subkeyRevoked reports whether a subkey's signature is its revocation.
func subkeyRevoked(s *packet.Signature) bool {
	return s != nil && (s.RevocationReason != nil || s.SigType == packet.SigTypeSubkeyRevocation)
}

func revocationReason(s *packet.Signature) string {
	if s == nil || s.RevocationReasonText == "" {
		return ""
	}
	return fmt.Sprintf(" (%q)", s.RevocationReasonText)
}

// describeKey names the key that signed: its entity, and the subkey when
// a subkey signed.
func describeKey(k *openpgp.Key) string {
	if k.PublicKey == nil || k.PublicKey == k.Entity.PrimaryKey {
		return describe(k.Entity)
	}
	return "subkey " + Fingerprint(k.PublicKey) + " of " + describe(k.Entity)
}
