package resourceapply

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// DefaultFieldManager is the server-side apply field manager the Manager
// uses unless told otherwise.
const DefaultFieldManager = "payload-apply"

// Options configure a Manager. The zero value is usable: field manager
// DefaultFieldManager.
type Options struct {
	// FieldManager names the manager of the fields this Manager applies.
	// Empty: DefaultFieldManager.
	FieldManager string
}

// Manager applies objects to one cluster, deletes them and waits for them.
// Its methods are safe for concurrent use. It keeps little state about
// objects: what it needs to map kinds (which kinds are expected, their
// CustomResourceDefinition being part of the apply), in a dry run which
// namespaces and kinds the run would have created, and the lists it reads
// objects from (see ExpectObjects), each for a few seconds and each listed
// object for one read.
type Manager struct {
	client       dynamic.Interface
	mapper       *cachedMapper
	scheme       *runtime.Scheme
	fieldManager string

	mu sync.Mutex
	// crdGen counts CustomResourceDefinitions that became established
	// through this Manager; mapperGen is crdGen at the mapper's last reset.
	crdGen, mapperGen uint64
	// lastReset is when the mapper was last reset by refresh.
	lastReset time.Time
	// expected are kinds a CustomResourceDefinition of this apply defines.
	expected map[schema.GroupKind]bool
	// expectedNamespaces are namespaces this apply creates.
	expectedNamespaces map[string]bool
	// refreshed are kinds with no match for which the mapper was refreshed
	// once already.
	refreshed map[schema.GroupKind]bool
	// dryRunKinds and dryRunNamespaces are what a dry run would have
	// created: their objects are skipped instead of failing.
	dryRunKinds      map[schema.GroupKind]bool
	dryRunNamespaces map[string]bool
	// namespaces are namespaces seen to exist; true for those this
	// Manager created (they started empty).
	namespaces map[string]bool
	// appliedInCreated are the objects applied in namespaces this Manager
	// created, which it no longer assumes to be missing.
	appliedInCreated map[manifest.ID]bool
	// createdKinds are kinds whose CustomResourceDefinition this Manager
	// created.
	createdKinds map[schema.GroupKind]bool
	// failedKinds are kinds whose CustomResourceDefinition this Manager
	// failed to apply (or to see Established), with the failure: their
	// objects stop waiting for the kind.
	failedKinds map[schema.GroupKind]error
	// planned are the objects of the apply by kind (ExpectObjects), lists
	// the lists read for them, tooBig resources too many to list across
	// namespaces.
	planned map[schema.GroupVersionKind]*plannedKind
	lists   map[listKey]*listEntry
	tooBig  map[schema.GroupVersionResource]bool
	// overLists are lists that held too much: not read again in this run.
	overLists map[listKey]bool
	// listMin and listMaxBytes are listMin and listMaxBytes but in tests;
	// lister reads lists.
	listMin      int
	listMaxBytes int64
	lister       lister
	// health follows whether the server answers (nil: not followed).
	health *health
	// crdWatch watches a CustomResourceDefinition being established
	// (nil: through the dynamic client).
	crdWatch crdWatcher
	// estab is closed, and replaced, when a CustomResourceDefinition
	// became established (established); nil until asked for.
	estab chan struct{}
	// proxy is the cluster's Proxy as this run read it (withProxy).
	proxy *proxyRead
}

// NewManager returns a Manager for the cluster cfg points at. It shares one
// HTTP client between its dynamic client and the discovery behind its
// RESTMapper; the caller sets cfg's QPS, Burst and Timeout (per request).
// Requests the server sheds (429 or 503 with Retry-After) are retried by
// client-go after that delay plus a random part of it, so that a burst of
// them does not come back at the same instant.
func NewManager(cfg *rest.Config, opts Options) (*Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(newSpreadRetryAfter)
	h := newHealth()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &healthRoundTripper{rt: rt, h: h} })
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	client, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	// The client lists go through, as the dynamic client's is made.
	listCfg := dynamic.ConfigFor(cfg)
	listCfg.GroupVersion, listCfg.APIPath = nil, ""
	rc, err := rest.UnversionedRESTClientForConfigAndClient(listCfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	m := New(client, mapper, opts)
	m.lister = restLister(rc, func() int64 { return m.listMaxBytes })
	m.crdWatch = slimCRDWatcher(rc)
	m.health = h
	return m, nil
}

// New returns a Manager using client and mapper, and client for lists too.
// The mapper is reset when a kind has no match and a
// CustomResourceDefinition this Manager applied became established since
// the last reset, and while an expected kind has no match yet.
func New(client dynamic.Interface, mapper meta.ResettableRESTMapper, opts Options) *Manager {
	fm := opts.FieldManager
	if fm == "" {
		fm = DefaultFieldManager
	}
	// The scheme is built from generated registrations and cannot fail in
	// practice; without it objects are applied exactly as given.
	scheme, _ := newTypedScheme()
	return &Manager{
		scheme:             scheme,
		client:             client,
		mapper:             newCachedMapper(mapper),
		fieldManager:       fm,
		expected:           map[schema.GroupKind]bool{},
		expectedNamespaces: map[string]bool{},
		refreshed:          map[schema.GroupKind]bool{},
		dryRunKinds:        map[schema.GroupKind]bool{},
		dryRunNamespaces:   map[string]bool{},
		namespaces:         map[string]bool{},
		appliedInCreated:   map[manifest.ID]bool{},
		failedKinds:        map[schema.GroupKind]error{},
		createdKinds:       map[schema.GroupKind]bool{},
		planned:            map[schema.GroupVersionKind]*plannedKind{},
		lists:              map[listKey]*listEntry{},
		tooBig:             map[schema.GroupVersionResource]bool{},
		overLists:          map[listKey]bool{},
		listMin:            listMin,
		listMaxBytes:       listMaxBytes,
		lister:             dynamicLister(client),
		proxy:              &proxyRead{},
	}
}

// FieldManager returns the field manager the Manager applies with.
func (m *Manager) FieldManager() string { return m.fieldManager }

// ExpectKinds says that CustomResourceDefinitions for these kinds are part
// of the apply: an object of such a kind that has no API yet is retried
// (ApplyOptions.TypeWait) instead of failing as ReasonResourceTypeMissing.
// Applying a CustomResourceDefinition expects its kind by itself.
func (m *Manager) ExpectKinds(gks ...schema.GroupKind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, gk := range gks {
		m.expected[gk] = true
	}
}

// ExpectNamespaces says that these namespaces are part of the apply: an
// object in such a namespace that does not exist yet waits for it
// (ApplyOptions.TypeWait) instead of failing as ReasonNamespaceMissing.
func (m *Manager) ExpectNamespaces(names ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range names {
		m.expectedNamespaces[n] = true
	}
}

func (m *Manager) isExpectedNamespace(ns string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.expectedNamespaces[ns]
}

func (m *Manager) isExpected(gk schema.GroupKind) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.expected[gk]
}

// crdEstablished notes that the CustomResourceDefinition crd became
// established: its kinds are mapped from it (crdMappings, cachedMapper.learn), or when they
// cannot be, the next mapping refreshes discovery. Objects waiting for a
// kind are woken (established).
func (m *Manager) crdEstablished(crd *unstructured.Unstructured) {
	learned := m.mapper.learn(crdMappings(crd))
	m.mu.Lock()
	if !learned {
		m.crdGen++
	}
	if m.estab != nil {
		close(m.estab)
		m.estab = nil
	}
	m.mu.Unlock()
}

// established returns a channel closed when a CustomResourceDefinition
// next becomes established.
func (m *Manager) established() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.estab == nil {
		m.estab = make(chan struct{})
	}
	return m.estab
}

// mapping returns the REST mapping of gvk. A kind the mapper does not know
// is looked up again after a reset when a CustomResourceDefinition became
// established since the last one: kinds it knows need no new discovery,
// and one reset serves every CRD established before it.
func (m *Manager) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapping, err := m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil || !meta.IsNoMatchError(err) {
		return mapping, err
	}
	m.mu.Lock()
	stale := m.mapperGen != m.crdGen
	if stale {
		m.mapper.Reset()
		m.mapperGen = m.crdGen
	}
	m.mu.Unlock()
	if !stale {
		return nil, err
	}
	return m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// refresh resets the mapper, at most every 100 ms however many objects
// wait for a kind.
func (m *Manager) refresh() { m.refreshEvery(100 * time.Millisecond) }

// expectedKindRefresh is how often objects waiting for a kind whose
// CustomResourceDefinition is part of the apply have discovery read again:
// they are woken with the kind mapped when the CRD is established, and
// discovery is only the fallback.
const expectedKindRefresh = time.Second

// refreshEvery resets the mapper unless it was reset by a refresh less
// than every ago.
func (m *Manager) refreshEvery(every time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.lastReset) < every {
		return
	}
	m.mapper.Reset()
	m.mapperGen = m.crdGen
	m.lastReset = time.Now()
}

// refreshOnce resets the mapper the first time gk has no match, in case the
// kind appeared after discovery was read. It reports whether the kind is
// worth looking up again. seen is the mapper's resets before the lookup
// that missed: when discovery was read again since (another kind's
// refresh, a CustomResourceDefinition established), the next lookup uses
// it without another reset. Discovery read within freshDiscovery is not
// read again: a kind missing from it is missing (a no-op apply of a
// payload with four kinds the server lacks read discovery four times
// more in 0.4 s before; the operator's next pass, or the next run, sees a
// kind that appeared since).
func (m *Manager) refreshOnce(gk schema.GroupKind, seen uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refreshed[gk] {
		return false
	}
	m.refreshed[gk] = true
	if m.mapper.resets() != seen {
		return true
	}
	if age := m.mapper.readSince(); age > 0 && age < freshDiscovery {
		return false
	}
	m.mapper.Reset()
	m.mapperGen = m.crdGen
	return true
}

// freshDiscovery is how long what discovery said is taken as the server's
// kinds when one is missing (see refreshOnce).
const freshDiscovery = 2 * time.Second

func (m *Manager) noteDryRun(obj *unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch gk := obj.GroupVersionKind().GroupKind(); gk {
	case namespaceGK:
		m.dryRunNamespaces[obj.GetName()] = true
	case crdGK:
		if k, ok := crdKind(obj); ok {
			m.dryRunKinds[k] = true
		}
	}
}

func (m *Manager) dryRunCreatedKind(gk schema.GroupKind) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dryRunKinds[gk]
}

func (m *Manager) dryRunCreatedNamespace(ns string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dryRunNamespaces[ns]
}

// resource returns the client for obj's resource and namespace.
func (m *Manager) resource(mapping *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return m.client.Resource(mapping.Resource).Namespace(namespace)
	}
	return m.client.Resource(mapping.Resource)
}

// Well-known kinds.
var (
	namespaceGK       = schema.GroupKind{Kind: "Namespace"}
	crdGK             = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	clusterOperatorGK = schema.GroupKind{Group: "config.openshift.io", Kind: "ClusterOperator"}
	deploymentGK      = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	daemonSetGK       = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobGK             = schema.GroupKind{Group: "batch", Kind: "Job"}
)

// crdKind returns the group and kind a CustomResourceDefinition defines.
func crdKind(obj *unstructured.Unstructured) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
	if group == "" || kind == "" {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: group, Kind: kind}, true
}

// Namespaces returns the names of the Namespaces among objs (except those
// annotated for deletion), for ExpectNamespaces.
func Namespaces(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == namespaceGK && o.GetAnnotations()[manifest.DeleteAnnotation] != "true" {
			out = append(out, o.GetName())
		}
	}
	return out
}

// CRDKinds returns the kinds the CustomResourceDefinitions among objs
// define, for ExpectKinds.
func CRDKinds(objs []*unstructured.Unstructured) []schema.GroupKind {
	var out []schema.GroupKind
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != crdGK {
			continue
		}
		if gk, ok := crdKind(o); ok {
			out = append(out, gk)
		}
	}
	return out
}

// IDOf returns obj's identity, for messages.
func IDOf(obj *unstructured.Unstructured) manifest.ID {
	gvk := obj.GroupVersionKind()
	return manifest.ID{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
