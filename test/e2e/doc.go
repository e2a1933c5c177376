// Package e2e holds black-box end-to-end tests of the payload-apply
// command against a real kube-apiserver and etcd (test/apiserver): the
// binary is built once and run as a user would run it. The tests are
// behind the e2e build tag; the real payload they read lives in the shared
// checkout beside the project (../shared/testdata/ocp-payload) and they
// skip without it (they fail under CI=true).
//
// May import: nothing.
package e2e
