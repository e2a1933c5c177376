package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// leaseConfig returns the client configuration of the Lease's cluster and
// says which it is.
func (o *operatorOptions) leaseConfig(managed *rest.Config) (*rest.Config, string, error) {
	if o.leaseKubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", o.leaseKubeconfig)
		if err != nil {
			return nil, "", usageErrorf("--lease-kubeconfig: %v", err)
		}
		return cfg, cfg.Host, nil
	}
	if cfg, err := rest.InClusterConfig(); err == nil {
		return cfg, "in-cluster " + cfg.Host, nil
	}
	return managed, "the managed cluster", nil
}

// serviceAccountNamespace is the file that names a pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// podNamespace is the Lease's default namespace: $POD_NAMESPACE, else the
// pod's namespace, else kube-system.
func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return "kube-system"
}

// replicaIdentity is the default identity: $POD_NAME, else the host name
// and a random suffix (a replica restarted on the same host is another
// candidate).
func replicaIdentity() string {
	if n := os.Getenv("POD_NAME"); n != "" {
		return n
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "payload-apply"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}
