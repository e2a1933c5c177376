package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Reads by list. Applying a payload again reads every object to compare it
// with the manifest; read one by one that is a GET per object. Once told
// which objects an apply holds (ExpectObjects), the Manager reads a type
// with several objects by one LIST instead, made the first time an object
// of that type is read in this Manager, and answers each object's read from
// it once:
//
//   - cluster-scoped kinds: one list of the kind;
//   - namespaced kinds with objects in several namespaces: one list across
//     all namespaces, except ConfigMaps (which can be many and large):
//     those, and kinds in one namespace only, are listed per namespace
//     where the apply has at least two objects;
//   - Secrets, and anything else (one object of its kind in its
//     namespace): a GET. Secrets are never listed, so that only the
//     apply's own Secrets are read.
//
// A list is a consistent read (no resourceVersion: the latest state) of at
// most listCap objects and listMaxBytes bytes; one that would hold more is
// dropped, and its objects are read one by one (for a list across
// namespaces: per namespace) for the rest of the run: a list is not read
// again to be dropped again. A listed object answers one read only, is
// forgotten once this Manager writes it (also when the write came while
// the list was read), and a list older than listMaxAge is made again: an
// object is compared with a state read in this run, no older than the GET
// a read one by one would make by more than that.

// listMaxAge is how long a list answers reads.
const listMaxAge = 10 * time.Second

// minListed is how many objects of one list the apply must hold for the
// list to replace their GETs.
const minListed = 2

// listMin is the least number of objects a list may hold (listCap).
const listMin = 500

// listMaxBytes is the largest list body read. A list of every
// CustomResourceDefinition of a payload ten times a release is about 300
// MB, made again every listMaxAge while a long stage waits for its CRDs:
// held twice (the body and its decoded objects), that was most of a first
// apply's memory. A list that big answers reads by GET instead.
const listMaxBytes = 64 << 20

// errListTooLarge is a list body over the Manager's byte bound.
var errListTooLarge = errors.New("list larger than the bound")

// listCap returns the most objects a list for want of the apply's objects
// may hold: a list that holds more is not worth reading whole.
func (m *Manager) listCap(want int) int64 { return int64(max(m.listMin, 4*want)) }

// perNamespace are kinds never listed across namespaces.
var perNamespace = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}: true,
}

// plannedKind counts the objects of one kind (and version) an apply holds.
type plannedKind struct {
	total       int
	byNamespace map[string]int
}

// listKey names one list: of a resource, in one namespace, across all
// (all), or of a cluster-scoped resource (namespace "").
type listKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	all       bool
}

// listEntry is one list: ready is closed once it is read. ok is false
// when it could not be read; over says it held too many objects.
type listEntry struct {
	ready chan struct{}
	at    time.Time
	ok    bool
	over  bool
	// items are the listed objects not handed out yet, by
	// namespace/name; names are all the listed ones.
	items map[string]*unstructured.Unstructured
	names map[string]bool
	// used are objects whose read was answered, or that this Manager
	// wrote since: they are read by GET.
	used map[string]bool
	// written are objects this Manager wrote while the list was being
	// read (it may or may not show the write): once read, they are used,
	// and the list says nothing of them.
	written map[string]bool
}

func objectKey(namespace, name string) string { return namespace + "/" + name }

// ExpectObjects says which objects the apply will apply (or delete): a
// kind with several objects (in a namespace) is then read by one list
// instead of a GET per object. Calling it again adds to what it was told.
func (m *Manager) ExpectObjects(objs ...*unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		p := m.planned[gvk]
		if p == nil {
			p = &plannedKind{byNamespace: map[string]int{}}
			m.planned[gvk] = p
		}
		p.total++
		p.byNamespace[o.GetNamespace()]++
	}
}

// listKeyFor returns the list that answers reads of gvk in namespace ns
// (mapped as mapping), and how many of the apply's objects it holds;
// ok is false when the object is read by GET.
func (m *Manager) listKeyFor(mapping *meta.RESTMapping, ns string) (key listKey, want int, ok bool) {
	gvk := mapping.GroupVersionKind
	gvr := mapping.Resource
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.planned[gvk]
	if p == nil || gvk.GroupKind() == secretGK {
		return listKey{}, 0, false
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		key := listKey{gvr: gvr}
		return key, p.total, p.total >= minListed && !m.overLists[key]
	}
	if len(p.byNamespace) >= 2 && p.total >= minListed && !perNamespace[gvk.GroupKind()] && !m.tooBig[gvr] {
		return listKey{gvr: gvr, all: true}, p.total, true
	}
	n := p.byNamespace[ns]
	key = listKey{gvr: gvr, namespace: ns}
	return key, n, n >= minListed && !m.overLists[key]
}

// listed returns the list that answers reads of an object of mapping's
// kind in namespace ns, reading it when no fresh one exists; nil when the
// object is to be read by GET.
func (m *Manager) listed(ctx context.Context, mapping *meta.RESTMapping, ns string, opts ApplyOptions) (*listEntry, error) {
	for {
		key, want, ok := m.listKeyFor(mapping, ns)
		if !ok {
			return nil, nil
		}
		e, err := m.list(ctx, key, want, opts)
		if err != nil {
			return nil, err
		}
		if e.ok {
			return e, nil
		}
		if !key.all || !e.over {
			return nil, nil
		}
		// Too many across namespaces: per namespace from now on.
		m.mu.Lock()
		m.tooBig[key.gvr] = true
		m.mu.Unlock()
	}
}

// list returns the fresh list for key, reading it (once, however many
// objects wait for it) when there is none.
func (m *Manager) list(ctx context.Context, key listKey, want int, opts ApplyOptions) (*listEntry, error) {
	m.mu.Lock()
	e := m.lists[key]
	if e != nil {
		select {
		case <-e.ready:
			if time.Since(e.at) > listMaxAge {
				e = nil
			}
		default:
		}
	}
	if e != nil {
		m.mu.Unlock()
		select {
		case <-e.ready:
			return e, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e = &listEntry{ready: make(chan struct{}), written: map[string]bool{}}
	m.lists[key] = e
	m.mu.Unlock()

	items, over, err := m.readList(ctx, key, m.listCap(want), opts)
	m.mu.Lock()
	if err != nil && m.lists[key] == e {
		// The next read tries again.
		delete(m.lists, key)
	}
	e.at, e.ok, e.over = time.Now(), err == nil && items != nil, over
	if over {
		m.overLists[key] = true
	}
	e.items, e.names, e.used = items, map[string]bool{}, map[string]bool{}
	for k := range items {
		e.names[k] = true
	}
	for k := range e.written {
		e.used[k] = true
		delete(e.items, k)
	}
	m.mu.Unlock()
	close(e.ready)
	return e, err
}

// readList lists key: at most limit objects, else over is true. Items are
// nil when the list cannot answer reads.
func (m *Manager) readList(ctx context.Context, key listKey, limit int64, opts ApplyOptions) (items map[string]*unstructured.Unstructured, over bool, err error) {
	var listed []*unstructured.Unstructured
	var cont string
	err = retry(ctx, opts.Retry, func() error {
		var err error
		// No resourceVersion: a consistent read of the latest state.
		listed, cont, err = m.lister(ctx, key, limit)
		return err
	})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsForbidden(err):
		// Not listable here: read one by one, which says what is wrong.
		return nil, false, nil
	case errors.Is(err, errListTooLarge):
		return nil, true, nil
	case err != nil:
		return nil, false, err
	case cont != "":
		return nil, true, nil
	}
	items = make(map[string]*unstructured.Unstructured, len(listed))
	for _, it := range listed {
		items[objectKey(it.GetNamespace(), it.GetName())] = it
	}
	return items, false, nil
}

// lister lists at most limit objects of key, and says whether there are
// more (a continue token).
type lister func(ctx context.Context, key listKey, limit int64) (items []*unstructured.Unstructured, cont string, err error)

// dynamicLister lists with a dynamic client.
func dynamicLister(client dynamic.Interface) lister {
	return func(ctx context.Context, key listKey, limit int64) ([]*unstructured.Unstructured, string, error) {
		var ri dynamic.ResourceInterface = client.Resource(key.gvr)
		if key.namespace != "" {
			ri = client.Resource(key.gvr).Namespace(key.namespace)
		}
		l, err := ri.List(ctx, metav1.ListOptions{Limit: limit})
		if err != nil {
			return nil, "", err
		}
		out := make([]*unstructured.Unstructured, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out, l.GetContinue(), nil
	}
}

// restLister lists with a REST client and decodes the list in one pass
// (the dynamic client decodes every item twice, and checks it a third
// time), as the dynamic client would: numbers that are integers become
// int64, and items get the list's apiVersion and kind less "List". A body
// longer than maxBytes() is errListTooLarge, and not read further.
func restLister(rc rest.Interface, maxBytes func() int64) lister {
	return func(ctx context.Context, key listKey, limit int64) ([]*unstructured.Unstructured, string, error) {
		path := []string{"/apis", key.gvr.Group, key.gvr.Version}
		if key.gvr.Group == "" {
			path = []string{"/api", key.gvr.Version}
		}
		if key.namespace != "" {
			path = append(path, "namespaces", key.namespace)
		}
		path = append(path, key.gvr.Resource)
		stream, err := rc.Get().AbsPath(path...).Param("limit", strconv.FormatInt(limit, 10)).Stream(ctx)
		if err != nil {
			return nil, "", err
		}
		bound := maxBytes()
		body, err := io.ReadAll(io.LimitReader(stream, bound+1))
		stream.Close()
		if err != nil {
			return nil, "", err
		}
		if int64(len(body)) > bound {
			return nil, "", fmt.Errorf("listing %s: %w (%d bytes)", key.gvr, errListTooLarge, bound)
		}
		var list map[string]any
		if err := utiljson.Unmarshal(body, &list); err != nil {
			return nil, "", fmt.Errorf("decoding the list of %s: %w", key.gvr, err)
		}
		apiVersion, _ := list["apiVersion"].(string)
		kind, _ := list["kind"].(string)
		kind = strings.TrimSuffix(kind, "List")
		raw, _ := list["items"].([]any)
		out := make([]*unstructured.Unstructured, 0, len(raw))
		for i, it := range raw {
			obj, ok := it.(map[string]any)
			if !ok {
				return nil, "", fmt.Errorf("decoding the list of %s: item %d is not an object", key.gvr, i)
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetAPIVersion() == "" && u.GetKind() == "" {
				u.SetAPIVersion(apiVersion)
				u.SetKind(kind)
			}
			out = append(out, u)
		}
		cont, _, _ := unstructured.NestedString(list, "metadata", "continue")
		return out, cont, nil
	}
}

// take answers the read of one object from e: the listed object, or nil
// when the list does not hold it. answered is false when the object was
// handed out or written already: it is read by GET.
func (m *Manager) take(e *listEntry, namespace, name string) (obj *unstructured.Unstructured, answered bool) {
	k := objectKey(namespace, name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.used[k] {
		return nil, false
	}
	e.used[k] = true
	obj = e.items[k]
	delete(e.items, k)
	return obj, true
}

// read returns the live object, or nil when there is none: from a list
// when the apply has several objects of its kind (listed says so), else by
// GET.
func (m *Manager) read(ctx context.Context, mapping *meta.RESTMapping, ri dynamic.ResourceInterface, namespace, name string, opts ApplyOptions) (obj *unstructured.Unstructured, listed bool, err error) {
	e, err := m.listed(ctx, mapping, namespace, opts)
	if err != nil {
		return nil, false, err
	}
	if e != nil {
		if obj, answered := m.take(e, namespace, name); answered {
			return obj, true, nil
		}
	}
	obj, err = m.get(ctx, ri, name, opts)
	return obj, false, err
}

// forget notes that this Manager wrote an object: no list read before
// answers for it.
func (m *Manager) forget(gvr schema.GroupVersionResource, namespace, name string) {
	k := objectKey(namespace, name)
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, e := range m.lists {
		if key.gvr != gvr || (!key.all && key.namespace != namespace) {
			continue
		}
		select {
		case <-e.ready:
			if e.used != nil {
				e.used[k] = true
				delete(e.items, k)
			}
		default:
			// Being read: the list may or may not show the write, and
			// answers nothing of the object. (Dropping the list instead
			// made a stage that writes many objects of one kind list it
			// again for nearly every object: 91 lists of every CRD in
			// the first minute of a payload ten times a release.)
			e.written[k] = true
		}
	}
}

// listedNamespace answers whether namespace ns exists from a list of
// namespaces read in this run, when the apply holds several Namespaces;
// known is false when it cannot tell.
func (m *Manager) listedNamespace(ctx context.Context, ns string, opts ApplyOptions) (exists, known bool, err error) {
	mapping := &meta.RESTMapping{Resource: namespacesGVR, GroupVersionKind: namespaceGK.WithVersion("v1"), Scope: meta.RESTScopeRoot}
	e, err := m.listed(ctx, mapping, "", opts)
	if err != nil || e == nil {
		return false, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := objectKey("", ns)
	if e.written[k] {
		return false, false, nil
	}
	return e.names[k], true, nil
}
