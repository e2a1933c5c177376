package signature

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/crypto/nacl/secretbox"
	"golang.org/x/crypto/scrypt"
)

// CosignType is the type of cosign's simple signing payload.
const CosignType = "cosign container image signature"

// Cosign's media type and annotation for a signature layer.
const (
	CosignPayloadMediaType    = "application/vnd.dev.cosign.simplesigning.v1+json"
	CosignSignatureAnnotation = "dev.cosignproject.cosign/signature"
)

// CosignTag is the tag cosign stores digest's signatures under:
// "sha256-<hex>.sig".
func CosignTag(digest v1.Hash) string {
	return digest.Algorithm + "-" + digest.Hex + ".sig"
}

// CosignSignature is one signature layer of a .sig image.
type CosignSignature struct {
	// Payload is the signed JSON (the layer's content).
	Payload []byte
	// Signature is the base64 signature of Payload (the layer's
	// dev.cosignproject.cosign/signature annotation).
	Signature string
}

// CosignSource finds the cosign signatures stored for an image.
type CosignSource interface {
	// CosignSignatures returns the signatures under repository's
	// CosignTag(digest); none (and no error) when there is no such tag.
	CosignSignatures(ctx context.Context, repository string, digest v1.Hash) ([]CosignSignature, error)
	// String says where signatures are read from.
	String() string
}

type cosignPayload struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// CosignPayload returns the payload cosign signs for the image at digest in
// repository (HOST/REPO, no tag), with optional annotations.
func CosignPayload(repository string, digest v1.Hash, annotations map[string]any) ([]byte, error) {
	if repository == "" || digest.Hex == "" {
		return nil, errors.New("cosign payload: a repository and a digest are required")
	}
	var p cosignPayload
	p.Critical.Identity.DockerReference = repository
	p.Critical.Image.DockerManifestDigest = digest.String()
	p.Critical.Type = CosignType
	p.Optional = annotations
	return json.Marshal(p)
}

// CosignSign signs payload as cosign does with key: ECDSA and RSA
// (PKCS #1 v1.5) over SHA-256, Ed25519 over the payload. It returns the
// base64 signature.
func CosignSign(payload []byte, key crypto.Signer) (string, error) {
	var sig []byte
	var err error
	switch key.Public().(type) {
	case ed25519.PublicKey:
		sig, err = key.Sign(rand.Reader, payload, crypto.Hash(0))
	case *ecdsa.PublicKey, *rsa.PublicKey:
		sum := sha256.Sum256(payload)
		sig, err = key.Sign(rand.Reader, sum[:], crypto.SHA256)
	default:
		return "", fmt.Errorf("cosign sign: key type %T: want ECDSA, RSA or Ed25519", key.Public())
	}
	if err != nil {
		return "", fmt.Errorf("cosign sign: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// verifyCosign checks one signature with key and returns the digest and
// identity its payload names.
func verifyCosign(s CosignSignature, key crypto.PublicKey) (digest, identity string, err error) {
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s.Signature))
	if err != nil {
		return "", "", fmt.Errorf("signature is not base64: %w", err)
	}
	sum := sha256.Sum256(s.Payload)
	ok := false
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(k, sum[:], sig)
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) == nil
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, s.Payload, sig)
	default:
		return "", "", fmt.Errorf("key type %T: want ECDSA, RSA or Ed25519", key)
	}
	if !ok {
		return "", "", errors.New("signature does not verify with the key (another key, or tampered)")
	}
	var p cosignPayload
	if err := json.Unmarshal(s.Payload, &p); err != nil {
		return "", "", fmt.Errorf("payload is not JSON: %w", err)
	}
	if p.Critical.Type != CosignType {
		return "", "", fmt.Errorf("payload of type %q, want %q", p.Critical.Type, CosignType)
	}
	return p.Critical.Image.DockerManifestDigest, p.Critical.Identity.DockerReference, nil
}

// CosignKey is a public key cosign signatures are checked with.
type CosignKey struct {
	// Name names the key in results (its file).
	Name string
	Key  crypto.PublicKey
}

// KeyID is "sha256:<hex>" of the key's PKIX DER, to tell keys apart.
func (k CosignKey) KeyID() string {
	der, err := x509.MarshalPKIXPublicKey(k.Key)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return fmt.Sprintf("sha256:%x", sum[:8])
}

// ReadCosignPublicKey reads a PEM public key as cosign writes it
// (cosign.pub: "PUBLIC KEY", PKIX).
func ReadCosignPublicKey(data []byte) (crypto.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM public key (cosign.pub)")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", block.Type, err)
	}
	switch key.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
		return key, nil
	}
	return nil, fmt.Errorf("key type %T: want ECDSA, RSA or Ed25519", key)
}

// Cosign's encrypted private key PEM types.
const (
	sigstorePrivateKeyType = "ENCRYPTED SIGSTORE PRIVATE KEY"
	cosignPrivateKeyType   = "ENCRYPTED COSIGN PRIVATE KEY"
)

// ReadCosignPrivateKey reads a private key: cosign's encrypted key
// (cosign generate-key-pair: scrypt and NaCl secretbox over PKCS #8,
// decrypted with password) or an unencrypted PKCS #8, EC or RSA PEM key.
func ReadCosignPrivateKey(data, password []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM private key")
	}
	der := block.Bytes
	var key any
	var err error
	switch block.Type {
	case sigstorePrivateKeyType, cosignPrivateKeyType:
		if der, err = decryptCosignKey(der, password); err != nil {
			return nil, err
		}
		key, err = x509.ParsePKCS8PrivateKey(der)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(der)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(der)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(der)
	default:
		return nil, fmt.Errorf("PEM type %q: want a cosign key or a PKCS #8, EC or RSA private key", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", block.Type, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key type %T cannot sign", key)
	}
	return s, nil
}

// encryptedKey is go-securesystemslib's encrypted format, which cosign
// uses for its private keys.
type encryptedKey struct {
	KDF struct {
		Name   string `json:"name"`
		Params struct {
			N int `json:"N"`
			R int `json:"r"`
			P int `json:"p"`
		} `json:"params"`
		Salt []byte `json:"salt"`
	} `json:"kdf"`
	Cipher struct {
		Name  string `json:"name"`
		Nonce []byte `json:"nonce"`
	} `json:"cipher"`
	Ciphertext []byte `json:"ciphertext"`
}

func decryptCosignKey(data, password []byte) ([]byte, error) {
	var k encryptedKey
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("encrypted cosign key: %w", err)
	}
	if k.KDF.Name != "scrypt" || k.Cipher.Name != "nacl/secretbox" {
		return nil, fmt.Errorf("encrypted cosign key: kdf %q, cipher %q: want scrypt and nacl/secretbox", k.KDF.Name, k.Cipher.Name)
	}
	// The parameters cosign writes (legacy, standard, OWASP); others are
	// refused, so a doctored file cannot make the derivation take forever.
	switch p := k.KDF.Params; {
	case (p.N == 1<<15 || p.N == 1<<16 || p.N == 1<<17) && p.R == 8 && p.P == 1:
	default:
		return nil, fmt.Errorf("encrypted cosign key: scrypt parameters N=%d r=%d p=%d not supported", p.N, p.R, p.P)
	}
	if len(k.Cipher.Nonce) != 24 {
		return nil, errors.New("encrypted cosign key: nonce is not 24 bytes")
	}
	key, err := scrypt.Key(password, k.KDF.Salt, k.KDF.Params.N, k.KDF.Params.R, k.KDF.Params.P, 32)
	if err != nil {
		return nil, fmt.Errorf("encrypted cosign key: %w", err)
	}
	var nonce [24]byte
	var box [32]byte
	copy(nonce[:], k.Cipher.Nonce)
	copy(box[:], key)
	out, ok := secretbox.Open(nil, k.Ciphertext, &nonce, &box)
	if !ok {
		return nil, errors.New("encrypted cosign key: wrong password (COSIGN_PASSWORD)")
	}
	return out, nil
}
