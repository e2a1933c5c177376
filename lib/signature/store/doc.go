// Package store reads and writes atomic signatures where the Cluster
// Version Operator looks for them, as library-go's store.Store values:
//
//   - Dir: a directory laid out as containers/image's lookaside stores and
//     the CVO's file store are, DIR/sha256=<hex>/signature-N, N from 1;
//     read through os.Root (nothing outside DIR is reached), each
//     signature bounded;
//   - HTTP: the same layout under an http(s) URL, read by library-go's
//     sigstore store with the caller's HTTP client (TLS policy, limits);
//   - ConfigMaps: the cluster's openshift-config-managed ConfigMaps
//     labelled release.openshift.io/verification-signatures, read by
//     library-go's configmap store, and ConfigMap, which writes signatures
//     in that shape (library-go's own GetSignaturesAsConfigmap).
//
// It imports library-go's pkg/verify packages, client-go's typed core
// client (for the ConfigMap store) and the standard library.
//
// May import: lib/safefs.
package store
