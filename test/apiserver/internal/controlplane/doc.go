// Package controlplane runs etcd, kube-apiserver and optionally
// kube-controller-manager as child processes on free ports of 127.0.0.1, for
// the end-to-end tests (through package apiserver) and for
// hack/test-apiserver.sh (through internal/launch).
//
// It owns everything in one directory: generated certificates and tokens
// (pki/), etcd data (etcd/), one log and one pid file per component, and the
// kubeconfigs. It finds no binaries itself: the caller passes the directory
// that hack/test-apiserver.sh build fills. It imports only the standard
// library, so that the script's launcher compiles quickly.
//
// May import: nothing.
package controlplane
