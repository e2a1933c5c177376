package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// newLock returns the Lease lock of the replicas, through a client of the
// Lease's cluster whose requests are counted and whose every answer is
// noted for readiness; duplicate is called when another process renews the
// Lease as this replica's identity.
func (o *Operator) newLock(duplicate func(error)) (resourcelock.Interface, error) {
	cs, err := kubernetes.NewForConfig(o.leaseConfig())
	if err != nil {
		return nil, fmt.Errorf("operator: the lease's client: %w", err)
	}
	return &contactLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: o.opts.LeaseNamespace, Name: o.opts.LeaseName},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: o.opts.Identity},
		},
		contact:   o.lease,
		identity:  o.opts.Identity,
		duplicate: duplicate,
	}, nil
}

// leaseContact is when the Lease's API server last answered (any answer
// but a failure to reach it), for readiness: a replica that cannot reach
// its Lease can neither lead nor take over.
type leaseContact struct {
	mu   sync.Mutex
	last time.Time
	err  error
}

func (c *leaseContact) note(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Not found (no Lease yet) and conflicts (another replica wrote it)
	// are answers too.
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		c.last, c.err = time.Now(), nil
		return
	}
	c.err = err
}

// get returns the last answer's time and the last error since.
func (c *leaseContact) get() (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.err
}

// contactLock is a resourcelock.Interface that notes every answer of the
// Lease's API server, and notices another process holding the Lease under
// this replica's identity: the Lease then says this identity renewed it
// at a time this process never wrote. client-go takes a Lease whose
// holder is its own identity for its own, so two replicas given the same
// identity would both lead and both write; the one that notices stops
// (duplicate), and reads of the Lease fail while it lasts, so it takes
// nothing over.
type contactLock struct {
	resourcelock.Interface
	contact   *leaseContact
	identity  string
	duplicate func(error)

	mu    sync.Mutex
	wrote []time.Time // the renew times of this process's last writes
}

var _ resourcelock.Interface = (*contactLock)(nil)

// ErrDuplicateIdentity is wrapped by the error of a replica that found
// another process renewing the Lease under its identity.
var ErrDuplicateIdentity = errors.New("another replica holds the Lease under this replica's identity")

// Get reads the Lease.
func (l *contactLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r, raw, err := l.Interface.Get(ctx)
	l.contact.note(err)
	if err == nil && r.HolderIdentity == l.identity {
		if derr := l.check(r.RenewTime.Time); derr != nil {
			return nil, nil, derr
		}
	}
	return r, raw, err
}

// check fails once this process has written the Lease and the Lease holds
// a renewal under its identity that it did not write.
func (l *contactLock) check(renewed time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.wrote) == 0 {
		return nil
	}
	for _, w := range l.wrote {
		if w.Truncate(time.Microsecond).Equal(renewed.Truncate(time.Microsecond)) {
			return nil
		}
	}
	err := fmt.Errorf("Lease %s: %w %q (it renewed it at %s, which this process did not): give each replica its own --lease-identity (default: the pod's name); this replica stops leading and takes nothing over while it lasts",
		l.Describe(), ErrDuplicateIdentity, l.identity, renewed.UTC().Format(time.RFC3339Nano))
	if l.duplicate != nil {
		l.duplicate(err)
	}
	return err
}

// Create creates the Lease.
func (l *contactLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.noteWrite(ler)
	err := l.Interface.Create(ctx, ler)
	l.contact.note(err)
	return err
}

// Update writes the Lease.
func (l *contactLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.noteWrite(ler)
	err := l.Interface.Update(ctx, ler)
	l.contact.note(err)
	return err
}

// noteWrite remembers the renew time of a write under this identity
// (before it is sent: a write that fails may still have been made).
func (l *contactLock) noteWrite(ler resourcelock.LeaderElectionRecord) {
	if ler.HolderIdentity != l.identity {
		return
	}
	l.mu.Lock()
	l.wrote = append(l.wrote, ler.RenewTime.Time)
	if len(l.wrote) > 4 {
		l.wrote = l.wrote[1:]
	}
	l.mu.Unlock()
}
