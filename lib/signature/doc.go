// Package signature signs release payload images and verifies their
// signatures, in the two schemes release engineers use:
//
//   - the Cluster Version Operator's: an "atomic container signature"
//     (containers/image's simple signing JSON naming the manifest digest)
//     in an OpenPGP signed message, looked up by digest in signature stores
//     (a directory or HTTP store laid out sha256=<hex>/signature-N, and
//     ConfigMaps in openshift-config-managed labelled
//     release.openshift.io/verification-signatures: see package store) and
//     verified against keyrings with library-go's pkg/verify, exactly as
//     the CVO does; keys and subkeys that have expired or are revoked are
//     removed from the keyrings first (the CVO's verifier does not look at
//     key expiry); every signature a store gives is walked first, its
//     compressed packets expanded to 50 KiB at most, so that no message
//     that expands reaches library-go's verifier, which reads it whole; a
//     store that fails a request is asked for nothing more in a lookup,
//     and what was read is read once; what a keyring lacks is said for
//     each keyring (unknown, revoked or expired key or subkey, expired
//     signature, another image);
//   - sigstore/cosign's key-based signatures: a "cosign container image
//     signature" JSON payload signed with an ECDSA, RSA or Ed25519 key and
//     stored beside the image in its registry, under the tag
//     sha256-<hex>.sig; verified offline with the public key, with no
//     transparency log (cosign verify --insecure-ignore-tlog).
//
// Policy combines them: the keyrings and cosign keys that must have signed,
// the stores and the cosign signature source to read, and whether an
// unverified payload may go on (AllowUnverified). Verify returns a Result
// (verified or not, by which keys and schemes, the digest and the reason)
// that apply, upgrade and the operator act on and record: Result.Verified
// is the ClusterVersion history's "verified" and Result.AcceptedRisk its
// "acceptedRisks" when a payload went on unverified.
//
// The package does no network or file I/O of its own: stores and the
// cosign source are interfaces. It imports library-go's pkg/verify (and
// its store interface), golang.org/x/crypto (OpenPGP, as library-go does;
// scrypt and secretbox for cosign's encrypted keys),
// go-containerregistry's v1 types and the standard library. No sigstore
// module: key-based offline verification needs none of it.
//
// May import: nothing.
package signature
