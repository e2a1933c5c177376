package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

// Client rate limits for bulk apply: a payload is hundreds of objects, each
// at most a read and a write; applying the real payload to a fresh server
// peaks at about 300 requests per second, and the server's priority and
// fairness limits protect it. At 100 QPS the client would be the
// bottleneck (docs/benchmarks.md).
const (
	clientQPS   = 500
	clientBurst = 1000
)

// kubeFlags are the kubeconfig flags, as clientcmd defines them:
// --kubeconfig plus the overrides (--context, --server, --token, ...).
type kubeFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
}

func (k *kubeFlags) addFlags(fs *pflag.FlagSet) {
	k.rules = clientcmd.NewDefaultClientConfigLoadingRules()
	k.overrides = &clientcmd.ConfigOverrides{}
	fs.StringVar(&k.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	// Objects name their own namespaces.
	names.ContextOverrideFlags.Namespace = clientcmd.FlagInfo{}
	clientcmd.BindOverrideFlags(k.overrides, fs, names)
	for _, hidden := range []string{"username", "password"} {
		_ = fs.MarkHidden(hidden)
	}
}

// validate checks that a kubeconfig named on the command line exists.
func (k *kubeFlags) validate() error {
	if k.rules.ExplicitPath == "" {
		return nil
	}
	if _, err := os.Stat(k.rules.ExplicitPath); err != nil {
		return usageErrorf("--kubeconfig: %v", err)
	}
	return nil
}

// restConfig loads the client configuration. TLS verification stays on
// unless --insecure-skip-tls-verify says otherwise.
func (k *kubeFlags) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, k.overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	cfg.UserAgent = "payload-apply/" + version()
	return cfg, nil
}

// The ConfigMap a cluster names its profile in: openshift-config/cluster-profile,
// key "profile".
const (
	clusterProfileNamespace = "openshift-config"
	clusterProfileName      = "cluster-profile"
	clusterProfileKey       = "profile"
)

// clusterProfile returns the profile the cluster's
// openshift-config/cluster-profile ConfigMap names, "" when there is none.
func clusterProfile(ctx context.Context, mgr *resourceapply.Manager) (map[string]string, error) {
	cm, err := mgr.Get(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, clusterProfileNamespace, clusterProfileName, resourceapply.DefaultRetryOptions())
	if err != nil || cm == nil {
		return nil, err
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	klog.FromContext(ctx).V(1).Info("Cluster profile", "configMap", clusterProfileNamespace+"/"+clusterProfileName, "profile", data[clusterProfileKey])
	return data, nil
}
