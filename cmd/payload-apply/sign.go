package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/signature"
	"github.com/payload-apply/payload-apply/lib/signature/store"
)

func signCommand() *command {
	return &command{
		name:  "sign",
		short: "Sign a release image: an atomic signature (the CVO's) and/or a cosign signature",
		usage: "IMAGE (--key FILE [--passphrase-file FILE] [--identity REF] (--signature-dir DIR | -o configmap) | --cosign-key FILE)...",
		long: `Signs a release image you publish, by its digest. IMAGE is a registry
reference (HOST/REPO:TAG, HOST/REPO@sha256:..., docker://...; a tag is
resolved to its digest) or a local OCI layout or image tarball.

--key FILE makes an atomic container signature, the kind the Cluster Version
Operator verifies: the simple signing JSON (type "atomic container
signature", the digest, the identity --identity, default the image reference
as given) in an OpenPGP signed message, signed with the OpenPGP secret key
in FILE (gpg --export-secret-keys --armor KEY; an RSA, DSA or ECDSA key, as
the CVO's verifier reads no EdDSA key), decrypted with the passphrase in
--passphrase-file when protected. The signature goes to
--signature-dir DIR, as DIR/sha256=<hex>/signature-N (the next free N; a
store the CVO and 'verify --signature-store' read: serve DIR over HTTP for
clusters), and/or with -o configmap to stdout as the ConfigMap the CVO reads
signatures from (openshift-config-managed, labelled
release.openshift.io/verification-signatures).

--cosign-key FILE makes a cosign signature of a registry image and pushes
it beside the image (the tag sha256-<hex>.sig), as 'cosign sign --key FILE
--tlog-upload=false' does: FILE is a cosign private key (cosign
generate-key-pair; its password from COSIGN_PASSWORD) or an unencrypted
PKCS #8, EC or RSA PEM key. Nothing goes to a transparency log; verify with
'payload-apply verify --verify-cosign-key' or 'cosign verify --key
cosign.pub --insecure-ignore-tlog'.

Exit codes: 0 signed; 1 signing or writing failed; 2 usage error, or IMAGE
could not be read or the registry refused.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &signOptions{}
			fs.StringVar(&o.key, "key", "", "OpenPGP secret key file for an atomic signature")
			fs.StringVar(&o.passphraseFile, "passphrase-file", "", "file holding the passphrase of --key")
			fs.StringVar(&o.identity, "identity", "", "the docker-reference the atomic signature names (default: IMAGE as given)")
			fs.StringVar(&o.dir, "signature-dir", "", "write the atomic signature into this signature store directory")
			o.output = addOutputFlag(fs, formatText, formatConfigMap)
			fs.Lookup("output").Usage = `"configmap": print the atomic signature as the CVO's signature ConfigMap (YAML) on stdout; "text": print nothing there`
			fs.StringVar(&o.cosignKey, "cosign-key", "", "cosign private key file for a cosign signature pushed beside the image")
			o.registry.addFlags(fs)
			return o
		},
	}
}

type signOptions struct {
	key, passphraseFile, identity, dir string
	output                             *outputFlag
	cosignKey                          string
	registry                           registryFlags

	src payloadSource
}

func (o *signOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) != 1 {
		return usageErrorf("want one IMAGE, got %d arguments", len(args))
	}
	if err := o.Validate(); err != nil {
		return err
	}
	src, err := o.registry.resolveImage(ctx, args[0])
	o.src = src
	return err
}

func (o *signOptions) Validate() error {
	switch {
	case o.key == "" && o.cosignKey == "":
		return usageErrorf("say how to sign: --key (atomic signature) or --cosign-key")
	case o.key != "" && o.dir == "" && o.output.value != formatConfigMap:
		return usageErrorf("say where the atomic signature goes: --signature-dir DIR or -o configmap")
	case o.key == "" && (o.dir != "" || o.output.value == formatConfigMap || o.passphraseFile != "" || o.identity != ""):
		return usageErrorf("--signature-dir, -o, --passphrase-file and --identity go with --key")
	}
	return nil
}

func (o *signOptions) Run(ctx context.Context, s IOStreams) error {
	if o.key != "" {
		if err := o.signAtomic(s); err != nil {
			return err
		}
	}
	if o.cosignKey != "" {
		return o.signCosign(ctx, s)
	}
	return nil
}

func (o *signOptions) signAtomic(s IOStreams) error {
	data, err := readFlagFile(o.key)
	if err != nil {
		return usageErrorf("--key: %v", err)
	}
	var pass []byte
	if o.passphraseFile != "" {
		if pass, err = readFlagFile(o.passphraseFile); err != nil {
			return usageErrorf("--passphrase-file: %v", err)
		}
		pass = []byte(strings.TrimRight(string(pass), "\r\n"))
	}
	key, err := signature.ReadSigningKey(data, pass)
	if err != nil {
		return usageErrorf("--key %s: %v", o.key, err)
	}
	identity := o.identity
	if identity == "" {
		identity = strings.TrimPrefix(o.src.Spec, "docker://")
	}
	now := time.Now()
	payload, err := signature.AtomicPayload(o.src.Digest, identity, "payload-apply "+version(), now)
	if err != nil {
		return err
	}
	sig, err := signature.SignAtomic(payload, key, now)
	if err != nil {
		return err
	}
	if o.dir != "" {
		p, err := store.Dir(o.dir).Add(o.src.Digest.String(), sig)
		if err != nil {
			return fmt.Errorf("--signature-dir: %w", err)
		}
		fmt.Fprintf(s.ErrOut, "signed %s (atomic, key %s): wrote %s\n", o.src.Digest, signature.Fingerprint(key.PrimaryKey), p)
	}
	if o.output.value == formatConfigMap {
		cm, err := store.ConfigMap(o.src.Digest.String(), [][]byte{sig})
		if err != nil {
			return err
		}
		out, err := yaml.Marshal(cm)
		if err != nil {
			return err
		}
		fmt.Fprint(s.Out, string(out))
	}
	return nil
}

func (o *signOptions) signCosign(ctx context.Context, s IOStreams) error {
	if o.src.Ref == nil {
		return usageErrorf("--cosign-key: cosign signatures are stored beside the image in its registry, and %s is not a registry reference", o.src.Spec)
	}
	data, err := readFlagFile(o.cosignKey)
	if err != nil {
		return usageErrorf("--cosign-key: %v", err)
	}
	key, err := signature.ReadCosignPrivateKey(data, []byte(os.Getenv("COSIGN_PASSWORD")))
	if err != nil {
		return usageErrorf("--cosign-key %s: %v", o.cosignKey, err)
	}
	repo := o.src.Ref.Context().Name()
	payload, err := signature.CosignPayload(repo, o.src.Digest, nil)
	if err != nil {
		return err
	}
	sig, err := signature.CosignSign(payload, key)
	if err != nil {
		return err
	}
	tag, err := o.registry.client().WriteCosignSignature(ctx, repo, o.src.Digest, signature.CosignSignature{Payload: payload, Signature: sig})
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	fmt.Fprintf(s.ErrOut, "signed %s (cosign): pushed %s\n", o.src.Digest, tag)
	return nil
}
