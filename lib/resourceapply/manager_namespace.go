package resourceapply

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// waitNamespace returns when namespace ns exists. A namespace the apply
// creates (ExpectNamespaces) is waited for up to opts.TypeWait; in a dry
// run, one the run created is reported as skip. Otherwise the error is
// ReasonNamespaceMissing.
func (m *Manager) waitNamespace(ctx context.Context, id manifest.ID, ns string, opts ApplyOptions) (skip string, err error) {
	b := newBackoff(RetryOptions{Timeout: opts.TypeWait, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 250 * time.Millisecond})
	for {
		exists, err := m.namespaceExists(ctx, ns, opts)
		switch {
		case err != nil:
			return "", m.fail(ctx, id, "get", err)
		case exists:
			return "", nil
		case opts.DryRun && m.dryRunCreatedNamespace(ns):
			return fmt.Sprintf("dry run: namespace %s would be created by this apply", ns), nil
		}
		if m.isExpectedNamespace(ns) {
			noteWait(ctx, "waiting for namespace "+ns)
		}
		if !m.isExpectedNamespace(ns) || !b.wait(ctx, nil) {
			if ctx.Err() != nil {
				return "", m.fail(ctx, id, "apply", ctx.Err())
			}
			if oerr := outageExceeded(ctx); oerr != nil {
				return "", &ApplyError{Object: id, Verb: "apply", Reason: ReasonUnavailable,
					Err: fmt.Errorf("waiting for namespace %s: %w", ns, oerr)}
			}
			msg := fmt.Errorf("namespace %q does not exist, and no Namespace in this apply creates it", ns)
			if m.isExpectedNamespace(ns) {
				msg = fmt.Errorf("namespace %q does not exist: this apply did not create it within %s", ns, opts.TypeWait)
			}
			return "", &ApplyError{Object: id, Verb: "apply", Reason: ReasonNamespaceMissing, Err: msg}
		}
	}
}

// namespaceExists reports whether namespace ns exists; a namespace seen
// once is not read again.
func (m *Manager) namespaceExists(ctx context.Context, ns string, opts ApplyOptions) (bool, error) {
	m.mu.Lock()
	_, known := m.namespaces[ns]
	m.mu.Unlock()
	if known {
		return true, nil
	}
	// A list of namespaces read in this run: one that is not there and
	// that this apply does not create is missing; one this apply creates
	// is read again while it is waited for.
	listed, fromList, err := m.listedNamespace(ctx, ns, opts)
	if err != nil {
		return false, err
	}
	if fromList && !listed && !m.isExpectedNamespace(ns) {
		return false, nil
	}
	if listed {
		m.mu.Lock()
		if _, ok := m.namespaces[ns]; !ok {
			m.namespaces[ns] = false
		}
		m.mu.Unlock()
		return true, nil
	}
	live, err := m.get(ctx, m.client.Resource(namespacesGVR), ns, opts)
	if err != nil || live == nil {
		return false, err
	}
	m.mu.Lock()
	if _, ok := m.namespaces[ns]; !ok {
		m.namespaces[ns] = false
	}
	m.mu.Unlock()
	return true, nil
}

// noteCreatedNamespace remembers a namespace this Manager created: it
// started empty.
func (m *Manager) noteCreatedNamespace(ns string) {
	m.mu.Lock()
	m.namespaces[ns] = true
	m.mu.Unlock()
}

// firstInCreatedNamespace reports whether id is in a namespace this
// Manager created and is applied for the first time by it.
func (m *Manager) firstInCreatedNamespace(id manifest.ID) bool {
	if id.Namespace == "" {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.namespaces[id.Namespace] || m.appliedInCreated[id] {
		return false
	}
	m.appliedInCreated[id] = true
	return true
}
