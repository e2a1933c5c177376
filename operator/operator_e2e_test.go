//go:build e2e

package operator

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

func TestMain(m *testing.M) {
	os.Exit(apiserver.Run(m, apiserver.Options{}))
}

// TestLeaseLost: a leader whose Lease another holder takes (an API
// server that stopped answering it would do the same) stops leading
// within the renew deadline, stops its work, and Run says ErrLeaseLost;
// before that it installed the embedded payload and reconciled it.
func TestLeaseLost(t *testing.T) {
	s := apiserver.Shared(t)
	cs, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lease"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Cluster, opts.LeaseNamespace, opts.Identity = s.RESTConfig(), "lease", "me"
	opts.Image = "embedded://payload-apply"
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = 4*time.Second, 3*time.Second, 500*time.Millisecond
	opts.Resync = time.Second
	o, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { done <- o.Run(runCtx) }()

	deadline := time.Now().Add(2 * time.Minute)
	for {
		if r := o.LastPass(); r != nil && r.Mode == ModeReconcile && r.OK() {
			if r.Writes != 0 {
				t.Errorf("a reconcile pass wrote %d times", r.Writes)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconcile pass; last %+v", o.LastPass())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Another holder takes the Lease.
	lease, err := cs.CoordinationV1().Leases("lease").Get(ctx, DefaultLeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	thief, d, now := "thief", int32(60), metav1.NewMicroTime(time.Now())
	lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: &thief, LeaseDurationSeconds: &d, AcquireTime: &now, RenewTime: &now}
	if _, err := cs.CoordinationV1().Leases("lease").Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Run: %v, want ErrLeaseLost", err)
		}
		if d := time.Since(taken); d > opts.RenewDeadline+2*opts.RetryPeriod+time.Second {
			t.Errorf("Run returned %s after the Lease was taken, want within the renew deadline %s", d, opts.RenewDeadline)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the Lease was taken")
	}
	passes := o.LastPass()
	time.Sleep(2 * opts.Resync)
	if o.LastPass() != passes {
		t.Error("a pass ran after Run returned")
	}
	lease, err = cs.CoordinationV1().Leases("lease").Get(ctx, DefaultLeaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != thief {
		t.Errorf("the Lease after: %v %v, want the thief's, untouched", lease.Spec.HolderIdentity, err)
	}
}
