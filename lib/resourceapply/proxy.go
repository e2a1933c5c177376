package resourceapply

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// injectProxyAnnotation names the containers of a Deployment or DaemonSet
// (comma-separated) to which the CVO gives the cluster's proxy settings:
// HTTP_PROXY, HTTPS_PROXY and NO_PROXY from the status of the Proxy
// "cluster", appended to their env when the cluster has a proxy.
const injectProxyAnnotation = "config.openshift.io/inject-proxy"

var proxyGVK = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "Proxy"}

// proxySettings are the status of the cluster's Proxy "cluster".
type proxySettings struct{ http, https, no string }

func (p proxySettings) set() bool { return p.http != "" || p.https != "" || p.no != "" }

// proxyRead is the Proxy read of one run (NewRun starts another).
type proxyRead struct {
	once sync.Once
	p    proxySettings
	err  error
}

// withProxy returns required with the cluster's proxy settings in the
// containers its inject-proxy annotation names, as the CVO modifies a
// Deployment or DaemonSet before merging it; required itself when it has
// no such annotation, or the cluster no proxy. The Proxy is read once per
// run (a GET; none when no object asks for it). A container name the pod
// template lacks is an error, as for the CVO.
func (m *Manager) withProxy(ctx context.Context, required *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	names := required.GetAnnotations()[injectProxyAnnotation]
	gk := required.GroupVersionKind().GroupKind()
	if names == "" || (gk != deploymentGK && gk != daemonSetGK) {
		return required, nil
	}
	m.mu.Lock()
	pr := m.proxy
	m.mu.Unlock()
	pr.once.Do(func() { pr.p, pr.err = m.readProxy(ctx, opts) })
	if pr.err != nil || !pr.p.set() {
		return required, pr.err
	}
	out := required.DeepCopy()
	return out, injectProxy(out, names, pr.p)
}

// proxyFailed is the error of an object whose proxy settings could not be
// had: the read's (classified), or the annotation's (invalid).
func (m *Manager) proxyFailed(ctx context.Context, id manifest.ID, err error) error {
	if strings.HasPrefix(err.Error(), injectProxyAnnotation) {
		return &ApplyError{Object: id, Verb: "apply", Reason: ReasonInvalid, Err: err}
	}
	return m.fail(ctx, id, "get", fmt.Errorf("the cluster's Proxy: %w", err))
}

// readProxy reads the status of the Proxy "cluster"; none when the server
// has no such kind or object.
func (m *Manager) readProxy(ctx context.Context, opts ApplyOptions) (proxySettings, error) {
	mapping, err := m.mapping(proxyGVK)
	if meta.IsNoMatchError(err) {
		return proxySettings{}, nil
	}
	if err != nil {
		return proxySettings{}, err
	}
	live, err := m.get(ctx, m.resource(mapping, ""), "cluster", opts)
	if err != nil || live == nil {
		return proxySettings{}, err
	}
	var p proxySettings
	p.http, _, _ = unstructured.NestedString(live.Object, "status", "httpProxy")
	p.https, _, _ = unstructured.NestedString(live.Object, "status", "httpsProxy")
	p.no, _, _ = unstructured.NestedString(live.Object, "status", "noProxy")
	return p, nil
}

// injectProxy appends the proxy variables to the env of the containers
// (and init containers) named in names.
func injectProxy(obj *unstructured.Unstructured, names string, p proxySettings) error {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
	for _, name := range strings.Split(names, ",") {
		found := false
		for _, list := range []string{"containers", "initContainers"} {
			cs, _ := spec[list].([]any)
			for _, c := range cs {
				cm, ok := c.(map[string]any)
				if !ok || cm["name"] != name {
					continue
				}
				found = true
				env, _ := cm["env"].([]any)
				cm["env"] = append(env,
					map[string]any{"name": "HTTP_PROXY", "value": p.http},
					map[string]any{"name": "HTTPS_PROXY", "value": p.https},
					map[string]any{"name": "NO_PROXY", "value": p.no})
			}
		}
		if !found {
			return fmt.Errorf("%s: requested for container %q, which the pod template does not have", injectProxyAnnotation, name)
		}
	}
	return unstructured.SetNestedMap(obj.Object, spec, "spec", "template", "spec")
}
