package operator

import (
	"context"
	"fmt"
	"sync"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// ClusterVersionName is the name of the cluster's record, the CVO's.
const ClusterVersionName = "version"

// watcher reads the managed cluster's ClusterVersion "version" and its
// ClusterOperators through informers (one watch each, no polling), once
// their CustomResourceDefinitions exist: before that (a cluster being
// installed) the ClusterVersion is read by GET. It tells the loop when the
// ClusterVersion's spec changes (changed), and the metrics when a
// ClusterOperator's conditions do.
type watcher struct {
	client rest.Interface
	disco  discovery.DiscoveryInterface

	mu      sync.Mutex
	started bool
	cv, co  cache.SharedIndexInformer

	// changed and updates get a value (without blocking) when the
	// ClusterVersion's generation changes: its spec was edited (the
	// passes' loop and the updates' loop).
	changed, updates chan struct{}
	// onOperator is called with each ClusterOperator update.
	onOperator func(old, cur *configv1.ClusterOperator)
}

// configClient returns a REST client of cfg for config.openshift.io/v1.
func configClient(cfg *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := configv1.Install(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &configv1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	cfg.ContentType = runtime.ContentTypeJSON
	return rest.RESTClientFor(cfg)
}

// newWatcher makes a watcher with a client of cfg for config.openshift.io/v1.
func newWatcher(cfg *rest.Config, onOperator func(old, cur *configv1.ClusterOperator)) (*watcher, error) {
	client, err := configClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("watch: client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("watch: discovery: %w", err)
	}
	return &watcher{client: client, disco: disco, changed: make(chan struct{}, 1), updates: make(chan struct{}, 1), onOperator: onOperator}, nil
}

// ensure starts the informers once the cluster serves ClusterVersions and
// ClusterOperators (one discovery request per call until then). They stop
// when ctx ends.
func (w *watcher) ensure(ctx context.Context) error {
	w.mu.Lock()
	started := w.started
	w.mu.Unlock()
	if started {
		return nil
	}
	res, err := w.disco.ServerResourcesForGroupVersion(configv1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("watch: discovery of %s: %w", configv1.GroupVersion, err)
	}
	served := map[string]bool{}
	for _, r := range res.APIResources {
		served[r.Name] = true
	}
	if !served["clusterversions"] || !served["clusteroperators"] {
		return nil
	}
	cv := cache.NewSharedIndexInformer(
		cache.NewListWatchFromClient(w.client, "clusterversions", metav1.NamespaceAll, fields.OneTermEqualSelector("metadata.name", ClusterVersionName)),
		&configv1.ClusterVersion{}, 0, cache.Indexers{})
	co := cache.NewSharedIndexInformer(
		cache.NewListWatchFromClient(w.client, "clusteroperators", metav1.NamespaceAll, fields.Everything()),
		&configv1.ClusterOperator{}, 0, cache.Indexers{})
	_, err = cv.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			// Made by someone after the watch began (the initial list
			// is what the pass read already).
			if !initial {
				w.notify()
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*configv1.ClusterVersion)
			c, ok2 := cur.(*configv1.ClusterVersion)
			if ok1 && ok2 && o.Generation != c.Generation {
				w.notify()
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	_, err = co.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*configv1.ClusterOperator)
			c, ok2 := cur.(*configv1.ClusterOperator)
			if ok1 && ok2 && w.onOperator != nil {
				w.onOperator(o, c)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	go cv.RunWithContext(ctx)
	go co.RunWithContext(ctx)
	w.mu.Lock()
	w.started, w.cv, w.co = true, cv, co
	w.mu.Unlock()
	return nil
}

func (w *watcher) notify() {
	for _, c := range []chan struct{}{w.changed, w.updates} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// synced returns the informers once both have listed, else nils.
func (w *watcher) synced() (cv, co cache.SharedIndexInformer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started || !w.cv.HasSynced() || !w.co.HasSynced() {
		return nil, nil
	}
	return w.cv, w.co
}

// clusterVersion returns the cluster's ClusterVersion "version", nil when
// it has none (or does not serve the kind yet): from the informer's cache
// once it has synced, else by GET. The object is a copy.
func (w *watcher) clusterVersion(ctx context.Context) (*configv1.ClusterVersion, error) {
	if cv, _ := w.synced(); cv != nil {
		obj, ok, err := cv.GetStore().GetByKey(ClusterVersionName)
		if err != nil || !ok {
			return nil, err
		}
		return obj.(*configv1.ClusterVersion).DeepCopy(), nil
	}
	out := &configv1.ClusterVersion{}
	err := w.client.Get().Resource("clusterversions").Name(ClusterVersionName).Do(ctx).Into(out)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ClusterVersion/%s: get: %w", ClusterVersionName, err)
	}
	return out, nil
}

// cached returns the ClusterVersion and the ClusterOperators the
// informers hold, for the metrics; ok is false before they have synced.
// The objects are the cache's own: not to be changed.
func (w *watcher) cached() (cv *configv1.ClusterVersion, cos []*configv1.ClusterOperator, ok bool) {
	cvi, coi := w.synced()
	if cvi == nil {
		return nil, nil, false
	}
	if obj, exists, _ := cvi.GetStore().GetByKey(ClusterVersionName); exists {
		cv = obj.(*configv1.ClusterVersion)
	}
	for _, obj := range coi.GetStore().List() {
		if co, isCO := obj.(*configv1.ClusterOperator); isCO {
			cos = append(cos, co)
		}
	}
	return cv, cos, true
}
