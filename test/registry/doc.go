// Package registry gives tests a real container registry: Debian's
// docker-registry (CNCF distribution, installed by hack/install-test-deps.sh)
// on a free port of 127.0.0.1, serving TLS with a certificate of a CA it
// generates, and requiring htpasswd (bcrypt) basic authentication.
//
// A test package starts one registry in TestMain with Run and reaches it
// with Shared; New starts one for a single test. The Registry gives the
// host, the CA (a file and an x509.CertPool), the user and password, and a
// containers-auth.json file holding them, which is what podman, skopeo and
// payload-apply read. Locally, when docker-registry is not installed, tests
// skip with the reason; with CI=true that is a failure. The process never
// outlives the test binary.
//
// The package imports the standard library and golang.org/x/crypto/bcrypt,
// nothing of payload-apply.
//
// May import: nothing.
package registry
