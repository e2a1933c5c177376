package operator

import (
	"context"
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
// noted for readiness.
func (o *Operator) newLock() (resourcelock.Interface, error) {
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
		contact: o.lease,
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
// Lease's API server.
type contactLock struct {
	resourcelock.Interface
	contact *leaseContact
}

var _ resourcelock.Interface = (*contactLock)(nil)

// Get reads the Lease.
func (l *contactLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r, raw, err := l.Interface.Get(ctx)
	l.contact.note(err)
	return r, raw, err
}

// Create creates the Lease.
func (l *contactLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, ler)
	l.contact.note(err)
	return err
}

// Update writes the Lease.
func (l *contactLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, ler)
	l.contact.note(err)
	return err
}
