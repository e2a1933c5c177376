// Package apiserver gives end-to-end tests a real Kubernetes control plane:
// etcd, kube-apiserver and, on request, kube-controller-manager, built from
// the Go module proxy by hack/test-apiserver.sh into _output/bin and run on
// free ports of 127.0.0.1 with generated certificates and a static admin
// token.
//
// A test package starts one server in TestMain with Run and reaches it with
// Shared; a test that needs its own server (other flags or controllers)
// calls New. Start, Stop, Kill and Restart are there for fault injection:
// Restart brings kube-apiserver or etcd back on the same port with the same
// certificates and data.
//
// Locally, when the server cannot be built or started, tests skip with the
// reason; with CI=true that is a failure. The processes never outlive the
// test binary.
//
// The package owns the processes and the directory they use; it imports the
// standard library, client-go's rest package and its internal controlplane
// package, and nothing of payload-apply itself.
//
// May import: test/apiserver/internal/....
package apiserver
