package operator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// memLock is a Lease in memory that two locks share.
type memLock struct {
	mu sync.Mutex
	r  *resourcelock.LeaderElectionRecord
}

func (m *memLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *m.r
	return &c, nil, nil
}
func (m *memLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return m.Update(ctx, r)
}
func (m *memLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.r = &r
	return nil
}
func (m *memLock) RecordEvent(string)                          {}
func (m *memLock) Identity() string                            { return "" }
func (m *memLock) Describe() string                            { return "ns/lease" }
func (m *memLock) GetObject() (runtime.Object, error)          { return nil, nil }
func (m *memLock) SetObject(runtime.Object)                    {}
func (m *memLock) UpdateWithObject(context.Context, any) error { return nil }

// TestDuplicateIdentity: a replica that finds the Lease renewed under its
// identity by another process says so and stops; one alone never does.
func TestDuplicateIdentity(t *testing.T) {
	shared := &memLock{r: &resourcelock.LeaderElectionRecord{}}
	var dup []error
	mk := func() *contactLock {
		return &contactLock{Interface: shared, contact: &leaseContact{}, identity: "pod-a", duplicate: func(err error) { dup = append(dup, err) }}
	}
	a, b := mk(), mk()
	ctx := context.Background()
	renew := func(l *contactLock, at time.Time) error {
		if _, _, err := l.Get(ctx); err != nil {
			return err
		}
		return l.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "pod-a", RenewTime: metav1.NewTime(at)})
	}
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	for i := range 3 { // alone: renewing its own Lease again and again
		if err := renew(a, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("a alone: %v", err)
		}
	}
	if err := renew(b, t0.Add(10*time.Second)); err != nil { // b starts: takes the Lease for its own
		t.Fatal(err)
	}
	err := renew(a, t0.Add(11*time.Second))
	if !errors.Is(err, ErrDuplicateIdentity) || len(dup) != 1 {
		t.Fatalf("a after b renewed: %v (%d calls); want ErrDuplicateIdentity once", err, len(dup))
	}
	for _, w := range []string{`Lease ns/lease: another replica holds the Lease under this replica's identity "pod-a"`, "give each replica its own --lease-identity"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v: want %q", err, w)
		}
	}
	if err := renew(b, t0.Add(12*time.Second)); err != nil { // b, which a left alone, goes on
		t.Errorf("b: %v", err)
	}
}
