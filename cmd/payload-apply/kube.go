package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

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

// defaultRequestTimeout bounds each request (--request-timeout). The server
// gives up on a request after 60 s (its --request-timeout) and queues one
// for at most a quarter of that under priority and fairness; a request of
// ours normally takes milliseconds.
const defaultRequestTimeout = "30s"

// kubeFlags are the kubeconfig flags, as clientcmd defines them:
// --kubeconfig plus the overrides (--context, --server, --token, ...).
type kubeFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides

	fs    *pflag.FlagSet
	names map[string]bool // the flags addFlags bound
}

func (k *kubeFlags) addFlags(fs *pflag.FlagSet) {
	before := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
	defer func() {
		k.fs, k.names = fs, map[string]bool{}
		fs.VisitAll(func(f *pflag.Flag) {
			if !before[f.Name] {
				k.names[f.Name] = true
			}
		})
	}()
	k.rules = clientcmd.NewDefaultClientConfigLoadingRules()
	k.overrides = &clientcmd.ConfigOverrides{}
	fs.StringVar(&k.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	// Objects name their own namespaces.
	names.ContextOverrideFlags.Namespace = clientcmd.FlagInfo{}
	// A request on a connection that stalls would otherwise wait forever
	// (or until HTTP/2 health checks notice, 45 s): give up and retry.
	names.Timeout.Default = defaultRequestTimeout
	names.Timeout.Description = "give up on a single request after this long and retry it (0: never); no request of an apply takes long"
	clientcmd.BindOverrideFlags(k.overrides, fs, names)
	for _, hidden := range []string{"username", "password"} {
		_ = fs.MarkHidden(hidden)
	}
}

// given returns the kubeconfig flags set on the command line, as
// "--name", in the order the flag set sorts them.
func (k *kubeFlags) given() []string {
	var out []string
	k.fs.Visit(func(f *pflag.Flag) {
		if k.names[f.Name] {
			out = append(out, "--"+f.Name)
		}
	})
	return out
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
	setHTTP2HealthCheck(cfg.Timeout, os.Getenv, os.Setenv)
	return cfg, nil
}

// The environment variables of client-go's HTTP/2 health check: a
// connection that received nothing for HTTP2_READ_IDLE_TIMEOUT_SECONDS is
// pinged, and closed when the ping is not answered within
// HTTP2_PING_TIMEOUT_SECONDS (defaults 30 and 15).
const (
	envHTTP2ReadIdle = "HTTP2_READ_IDLE_TIMEOUT_SECONDS"
	envHTTP2Ping     = "HTTP2_PING_TIMEOUT_SECONDS"
)

// setHTTP2HealthCheck makes client-go give up a stalled HTTP/2 connection
// within about one request timeout, unless the environment says otherwise:
// all requests share one connection, and requests that time out on it do
// not close it; until the health check does, retries go to the same dead
// connection (45 s by default).
func setHTTP2HealthCheck(requestTimeout time.Duration, getenv func(string) string, setenv func(string, string) error) {
	if requestTimeout <= 0 {
		return
	}
	secs := max(1, int(requestTimeout/time.Second)/2)
	for _, name := range []string{envHTTP2ReadIdle, envHTTP2Ping} {
		if getenv(name) == "" {
			_ = setenv(name, strconv.Itoa(secs))
		}
	}
}

// requestCounter counts the requests a client sends, by kind.
type requestCounter struct {
	reads, writes atomic.Int64
}

// wrap installs the counter on cfg's transport.
func (c *requestCounter) wrap(cfg *rest.Config) {
	prev := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if prev != nil {
			rt = prev(rt)
		}
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				c.reads.Add(1)
			default:
				c.writes.Add(1)
			}
			return rt.RoundTrip(req)
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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
