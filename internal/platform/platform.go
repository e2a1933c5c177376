// Package platform holds what the rest of OpenShift contributes to a
// cluster that the real payload needs and does not create itself: the
// CustomResourceDefinitions of kinds other operators define (monitoring's
// ServiceMonitor and PrometheusRule, the cloud credential operator's
// CredentialsRequest, StorageVersionMigration) and the namespaces other
// operators make. On a bare test API server the payload's objects of those
// kinds and in those namespaces fail every time without them; tests and
// benchmarks of a whole, converging install (the operator's) apply this
// first.
//
// It is for tests and hack/ only. It imports only the standard library.
//
// May import: nothing.
// Cluster I/O: none.
package platform

import (
	"fmt"
	"strings"
)

// crds are the kinds other operators define.
var crds = []struct{ group, kind, plural, version, scope string }{
	{"monitoring.coreos.com", "ServiceMonitor", "servicemonitors", "v1", "Namespaced"},
	{"monitoring.coreos.com", "PrometheusRule", "prometheusrules", "v1", "Namespaced"},
	{"cloudcredential.openshift.io", "CredentialsRequest", "credentialsrequests", "v1", "Namespaced"},
	{"migration.k8s.io", "StorageVersionMigration", "storageversionmigrations", "v1alpha1", "Cluster"},
}

// Namespaces are the namespaces other operators make that the real
// payload puts objects in.
var Namespaces = []string{"openshift", "openshift-apiserver", "openshift-authentication", "openshift-kube-apiserver",
	"openshift-kube-controller-manager", "openshift-kube-scheduler", "openshift-marketplace", "openshift-oauth-apiserver",
	"openshift-service-ca", "openshift-cloud-credential-operator"}

// YAML returns the objects as a multi-document YAML stream, for kubectl
// apply --server-side -f. The CustomResourceDefinitions accept any
// content (x-kubernetes-preserve-unknown-fields).
func YAML() string {
	var b strings.Builder
	for _, c := range crds {
		fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[3]s.%[1]s
  annotations: {api-approved.kubernetes.io: "https://github.com/kubernetes/enhancements/pull/1111"}
spec:
  group: %[1]s
  names: {kind: %[2]s, plural: %[3]s, listKind: %[2]sList, singular: %[5]s}
  scope: %[6]s
  versions:
  - name: %[4]s
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
`, c.group, c.kind, c.plural, c.version, strings.ToLower(c.kind), c.scope)
	}
	for _, ns := range Namespaces {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\n", ns)
	}
	return b.String()
}
