// Package realpayload locates the real OpenShift payload that tests and
// benchmarks read: the shared checkout's testdata/ocp-payload, beside the
// module (see ../shared/testdata/ocp-payload/README.md).
//
// It is for tests only: import it from _test.go files, never from the
// command or the libraries. It imports only the standard library.
//
// May import: nothing.
// Cluster I/O: none.
package realpayload
