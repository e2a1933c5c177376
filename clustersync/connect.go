package clustersync

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/redact"
	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/profiles"
)

// Cluster is a connection to one API server: the resourceapply.Manager the
// engine applies, reads and waits with, and the count of its requests by
// verb. It is safe for concurrent use.
type Cluster struct {
	// Config is the client configuration, with the request counter and
	// the warning handler installed.
	Config *rest.Config
	// Manager applies, reads and waits.
	Manager *resourceapply.Manager
	// Requests counts every request sent through Config, by verb.
	Requests *requests.Counter

	warnings *warnings
	// retryTimeout bounds the retries of the Cluster's own requests
	// (ConnectOptions.RetryTimeout; zero: the default).
	retryTimeout time.Duration
	// dyn is a dynamic client of Config for what the Manager does not do
	// (the record), made once.
	dynOnce sync.Once
	dyn     dynamic.Interface
	dynErr  error
}

// RetryOptions are how the Cluster's own requests retry their transient
// failures (ConnectOptions.RetryTimeout).
func (c *Cluster) RetryOptions() resourceapply.RetryOptions {
	opts := resourceapply.DefaultRetryOptions()
	if c.retryTimeout > 0 {
		opts.Timeout = c.retryTimeout
	}
	return opts
}

// dynamic returns a dynamic client of the Cluster's Config.
func (c *Cluster) dynamic() (dynamic.Interface, error) {
	c.dynOnce.Do(func() { c.dyn, c.dynErr = dynamic.NewForConfig(c.Config) })
	return c.dyn, c.dynErr
}

// ConnectOptions say how Connect talks to the server.
type ConnectOptions struct {
	// Strict fails Connect when the server cannot be reached at all (for a
	// command that only reads, so that every object does not retry and
	// fail on its own). Otherwise only a certificate that cannot be
	// verified and refused credentials fail it; other failures (a server
	// restarting) are left to the retries of the requests that follow.
	Strict bool
	// Sink receives the server's warnings (Warning events), each distinct
	// text once. Nil: they are dropped.
	Sink Sink
	// Secrets, when set, gets the credentials of the configuration (bearer
	// token, password, client key), so that nothing printed shows them.
	Secrets *redact.Values
	// Manager are the options of the Manager.
	Manager resourceapply.Options
	// RetryTimeout is how long the transient failures of the Cluster's own
	// requests (reading the profile, the record, the ClusterOperators;
	// writing the record) are retried; an apply's objects and steps take
	// ApplyOptions.RetryTimeout, which defaults to it. Zero:
	// resourceapply's default, two minutes.
	RetryTimeout time.Duration
}

// Connect makes a Cluster of cfg (which it copies) and asks the server its
// version (GET /version), the run's first request, so that a certificate
// that cannot be verified or credentials that are refused give one clear
// error before anything starts (see ConnectOptions.Strict). Answers of a
// server on this machine (localhost, a loopback address) are not
// compressed.
func Connect(ctx context.Context, cfg *rest.Config, opts ConnectOptions) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	if loopback(cfg.Host) {
		// gzip over loopback costs both ends CPU and saves nothing: an API
		// server on this machine (a bootstrap node's, a test's) shares the
		// cores with us. A kubeconfig's disable-compression: true turns
		// it off for any server, as for kubectl.
		cfg.DisableCompression = true
	}
	if opts.Secrets != nil {
		AddCredentials(opts.Secrets, cfg)
	}
	w := &warnings{seen: map[warningKey]bool{}, sink: newSerial(opts.Sink)}
	cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, w
	c := &Cluster{Config: cfg, Requests: &requests.Counter{}, warnings: w, retryTimeout: opts.RetryTimeout}
	c.Requests.Wrap(cfg)
	mgr, err := resourceapply.NewManager(cfg, opts.Manager)
	if err != nil {
		return nil, err
	}
	c.Manager = mgr
	if err := checkServer(cfg, opts.Strict); err != nil {
		return nil, ExplainConnection(err)
	}
	klog.FromContext(ctx).V(1).Info("Connected", "server", cfg.Host)
	return c, nil
}

// checkServer asks the server its version; see Connect.
func checkServer(cfg *rest.Config, strict bool) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if _, err = dc.ServerVersion(); err == nil {
		return nil
	}
	switch r := resourceapply.Classify(err); r {
	case resourceapply.ReasonCertificate, resourceapply.ReasonUnauthorized:
		return fmt.Errorf("connecting to the API server %s: %s: %w", cfg.Host, r.Text(), err)
	}
	if strict {
		return fmt.Errorf("cannot reach the cluster at %s: %w", cfg.Host, err)
	}
	return nil
}

// ExplainConnection adds what to do to an error that says the server's
// certificate could not be verified; other errors are returned as they are.
func ExplainConnection(err error) error {
	if err == nil || resourceapply.ReasonOf(err) != resourceapply.ReasonCertificate {
		return err
	}
	return fmt.Errorf("%w: the API server's certificate could not be verified with the certificate authority of the kubeconfig's cluster "+
		"(certificate-authority or certificate-authority-data); give the right one, or pass --insecure-skip-tls-verify to skip verification (insecure)", err)
}

// warnings forwards each distinct warning of the API server once per
// object, with the object the request was about (client-go's
// rest.WarningHandlerWithContext: the request's context names it, see
// resourceapply.WithObject).
type warnings struct {
	mu   sync.Mutex
	seen map[warningKey]bool
	sink *serial
}

type warningKey struct {
	text   string
	object manifest.ID
}

var _ rest.WarningHandlerWithContext = (*warnings)(nil)

// HandleWarningHeaderWithContext forwards a warning (code 299) the first
// time its text is seen for the request's object.
func (w *warnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	id, _ := resourceapply.ObjectOf(ctx)
	k := warningKey{text, id}
	w.mu.Lock()
	seen := w.seen[k]
	w.seen[k] = true
	w.mu.Unlock()
	if !seen {
		w.sink.emit(Warning{Text: text, Object: id})
	}
}

// ClusterProfile returns the data of the cluster's
// openshift-config/cluster-profile ConfigMap (its "profile" key names the
// profile), nil when there is none.
func (c *Cluster) ClusterProfile(ctx context.Context) (map[string]string, error) {
	cm, err := c.Manager.Get(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, profiles.ConfigMapNamespace, profiles.ConfigMapName, c.RetryOptions())
	if err != nil || cm == nil {
		return nil, err
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	klog.FromContext(ctx).V(1).Info("Cluster profile", "configMap", profiles.ConfigMapNamespace+"/"+profiles.ConfigMapName, "profile", data[profiles.ConfigMapKey])
	return data, nil
}
