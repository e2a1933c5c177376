package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/lib/safefs"
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
	k.rules = loadingRules()
	k.overrides = &clientcmd.ConfigOverrides{}
	fs.StringVar(&k.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "path to the kubeconfig file (default, as kubectl: the files $KUBECONFIG lists, else ~/.kube/config, else the in-cluster configuration)")
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
	st, err := os.Stat(k.rules.ExplicitPath)
	if err == nil {
		err = safefs.Check(k.rules.ExplicitPath, st, safefs.Regular)
	}
	if err != nil {
		return usageErrorf("--kubeconfig: %v", err)
	}
	return nil
}

// restConfig loads the client configuration exactly as kubectl does (the
// same clientcmd loader): --kubeconfig, else the files KUBECONFIG lists
// (merged), else ~/.kube/config; when these give no cluster, the
// in-cluster configuration of a pod. The other cluster flags (--context,
// --server, --token, ...) override it. With none
// of these the error says what to do (isNoConfig); a configuration that
// is wrong is a clusterError too (exit 2).
//
// TLS verification of the API server's certificate stays on unless
// --insecure-skip-tls-verify or the kubeconfig's cluster
// (insecure-skip-tls-verify: true) turns it off, as for kubectl; then a
// warning goes to stderr. The credentials it holds are added to the run's
// secrets, never to be printed.
func (k *kubeFlags) restConfig(ctx context.Context, s IOStreams) (*rest.Config, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, k.overrides)
	if err := clustersync.CheckKubeconfigFiles(k.rules, cc, k.overrides); err != nil {
		return nil, clusterError{err}
	}
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) && k.rules.ExplicitPath != "" {
		// The file was given: say what it lacks, not where else was looked.
		var contexts []string
		if raw, rerr := cc.RawConfig(); rerr == nil {
			for name := range raw.Contexts {
				contexts = append(contexts, name)
			}
		}
		sort.Strings(contexts)
		if len(contexts) == 0 {
			return nil, clusterError{fmt.Errorf("--kubeconfig %s names no cluster: it has no context (a cluster and a user to connect as)", k.rules.ExplicitPath)}
		}
		return nil, clusterError{fmt.Errorf("--kubeconfig %s names no cluster: it has no current-context and --context is not given (contexts: %s): pass --context NAME, or set one with 'kubectl config use-context NAME --kubeconfig %s'",
			k.rules.ExplicitPath, strings.Join(contexts, ", "), k.rules.ExplicitPath)}
	}
	if clientcmd.IsEmptyConfig(err) {
		return nil, clusterError{noConfigError{env: os.Getenv(clientcmd.RecommendedConfigPathEnvVar), home: homeKubeconfig()}}
	}
	if err != nil {
		return nil, clusterError{fmt.Errorf("kubeconfig: %w", err)}
	}
	clustersync.AddCredentials(secretsOf(ctx), cfg)
	if cfg.Insecure {
		fmt.Fprintf(s.ErrOut, "warning: TLS certificate verification of the API server %s is disabled (%s): the connection is not authenticated, and the credentials and payload sent over it may be read or changed by anyone in between\n",
			cfg.Host, k.insecureSource(cc))
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	cfg.UserAgent = "payload-apply/" + version()
	setHTTP2HealthCheck(cfg.Timeout, os.Getenv, os.Setenv)
	return cfg, nil
}

// insecureSource says what turned TLS verification off: the flag or the
// kubeconfig's cluster.
func (k *kubeFlags) insecureSource(cc clientcmd.ClientConfig) string {
	if k.overrides.ClusterInfo.InsecureSkipTLSVerify {
		return "--insecure-skip-tls-verify"
	}
	raw, err := cc.RawConfig()
	if err != nil {
		return "insecure-skip-tls-verify: true in the kubeconfig"
	}
	name := k.overrides.CurrentContext
	if name == "" {
		name = raw.CurrentContext
	}
	cluster := k.overrides.Context.Cluster
	if c, ok := raw.Contexts[name]; ok && cluster == "" {
		cluster = c.Cluster
	}
	return fmt.Sprintf("insecure-skip-tls-verify: true for cluster %q in the kubeconfig", cluster)
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

// homeKubeconfig is ~/.kube/config, for the HOME of now (clientcmd's
// RecommendedHomeFile is the HOME the process started with).
func homeKubeconfig() string {
	return filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
}

// loadingRules are kubectl's: the files KUBECONFIG lists, else
// ~/.kube/config. A missing file is no warning of client-go's own: the
// command says what it looked at when it finds nothing (noConfigError).
func loadingRules() *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		rules.Precedence = []string{homeKubeconfig()}
	}
	rules.WarnIfAllMissing = false
	return rules
}

// noConfigError says that no cluster is configured, and what was looked
// at, instead of client-go's "try setting KUBERNETES_MASTER".
type noConfigError struct {
	env  string // KUBECONFIG
	home string // ~/.kube/config
}

func (e noConfigError) Error() string {
	var looked []string
	switch _, err := os.Stat(e.home); {
	case e.env != "":
		looked = append(looked, fmt.Sprintf("KUBECONFIG=%s names no kubeconfig with a cluster", e.env))
	case err != nil:
		looked = append(looked, "KUBECONFIG is not set", e.home+" does not exist")
	default:
		looked = append(looked, "KUBECONFIG is not set", e.home+" names no current cluster")
	}
	looked = append(looked, "not in a pod")
	return fmt.Sprintf("no cluster configured (%s): pass --kubeconfig FILE (or --server URL), set KUBECONFIG, or write %s",
		strings.Join(looked, "; "), e.home)
}

// isNoConfig reports whether err says no cluster is configured at all.
func isNoConfig(err error) bool {
	var nc noConfigError
	return errors.As(err, &nc)
}

// checkReachable asks the server its version (GET /version) and returns a
// clusterError when no answer came at all (connection refused, no route,
// a name that does not resolve, a dial that timed out) or when the
// certificate or the credentials are refused: the command ends at once
// with exit code 2 instead of retrying every request for minutes. An
// answer with an error status (a server starting, 429, 5xx) is left to the
// retries of the requests that follow.
func checkReachable(cfg *rest.Config) (*apiversion.Info, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, clusterError{fmt.Errorf("client: %w", err)}
	}
	v, err := dc.ServerVersion()
	if err == nil {
		return v, nil
	}
	var status apierrors.APIStatus
	switch r := resourceapply.Classify(err); {
	case r == resourceapply.ReasonCertificate || r == resourceapply.ReasonUnauthorized:
		return nil, connectionError(cfg.Host, err)
	case errors.As(err, &status):
		return nil, nil
	}
	return nil, connectionError(cfg.Host, err)
}

// connectionError says that the server at host could not be reached, or
// refused the certificate or credentials, with what to do; exit code 2.
func connectionError(host string, err error) error {
	switch r := resourceapply.Classify(err); r {
	case resourceapply.ReasonCertificate, resourceapply.ReasonUnauthorized:
		return clusterError{clustersync.ExplainConnection(fmt.Errorf("connecting to the API server %s: %s: %w", host, r.Text(), err))}
	}
	// "Get "https://h/version?timeout=30s": dial tcp: ..." says less than
	// the network error alone.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return clusterError{fmt.Errorf("cannot reach the cluster at %s: %w", host, err)}
}

// clusterFailure marks an error of clustersync.Start as exit code 2 when
// it is about the way to the cluster (unreachable, certificate,
// credentials refused or lacking a permission), not the payload.
func clusterFailure(err error) error {
	if err == nil {
		return nil
	}
	switch resourceapply.ReasonOf(err) {
	case resourceapply.ReasonUnavailable, resourceapply.ReasonCertificate, resourceapply.ReasonUnauthorized, resourceapply.ReasonForbidden:
		return clusterError{err}
	}
	return err
}
