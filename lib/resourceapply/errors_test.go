package resourceapply

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	refused := &url.Error{Op: "Patch", URL: "https://127.0.0.1:6443", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tooMany := apierrors.NewTooManyRequests("slow down", 3)
	cases := []struct {
		name      string
		err       error
		reason    Reason
		retryable bool
	}{
		{"no match", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}}, ReasonResourceTypeMissing, false},
		{"namespace not found", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "x"), ReasonNamespaceMissing, false},
		{"object not found", apierrors.NewNotFound(gr, "x"), ReasonUnknown, false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Required(field.NewPath("data"), "")}), ReasonInvalid, false},
		{"bad request", apierrors.NewBadRequest("no"), ReasonInvalid, false},
		{"schema error from apply", apierrors.NewInternalError(errors.New("failed to create typed patch object (/x; rbac.authorization.k8s.io/v1, Kind=ClusterRoleBinding): .userNames: field not declared in schema")), ReasonInvalid, false},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("no")), ReasonForbidden, false},
		{"admission policy denial", apierrors.NewForbidden(gr, "x", errors.New("ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no")), ReasonInvalid, false},
		{"webhook denial", apierrors.NewForbidden(gr, "x", errors.New(`admission webhook "v.example.com" denied the request: no`)), ReasonInvalid, false},
		{"unknown certificate authority", &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, ReasonCertificate, false},
		{"wrong host name", &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api", Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "10.0.0.1"}}, ReasonCertificate, false},
		{"unauthorized", apierrors.NewUnauthorized("who"), ReasonUnauthorized, false},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("changed")), ReasonConflict, true},
		{"server timeout", apierrors.NewServerTimeout(gr, "patch", 1), ReasonTimeout, true},
		{"too many requests", tooMany, ReasonUnavailable, true},
		{"service unavailable", apierrors.NewServiceUnavailable("down"), ReasonUnavailable, true},
		{"internal error", apierrors.NewInternalError(errors.New("etcd")), ReasonUnavailable, true},
		{"etcd: request is too large", apierrors.NewInternalError(errors.New("etcdserver: request is too large")), ReasonInvalid, false},
		{"etcd: request is too large, as a generic 500", apierrors.NewGenericServerResponse(500, "patch", gr, "x", "etcdserver: request is too large", 0, true), ReasonInvalid, false},
		{"grpc message too large", apierrors.NewInternalError(errors.New("rpc error: code = ResourceExhausted desc = trying to send message larger than max (2097152 vs. 2097152)")), ReasonInvalid, false},
		{"etcd quota reached", apierrors.NewInternalError(errors.New("etcdserver: mvcc: database space exceeded")), ReasonUnavailable, false},
		{"etcd leader changed", apierrors.NewInternalError(errors.New("etcdserver: leader changed")), ReasonUnavailable, true},
		{"502", apierrors.NewGenericServerResponse(502, "patch", gr, "x", "bad gateway", 0, true), ReasonUnavailable, true},
		{"connection refused", refused, ReasonUnavailable, true},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), ReasonUnavailable, true},
		{"unexpected EOF", fmt.Errorf("stream: %w", io.ErrUnexpectedEOF), ReasonUnavailable, true},
		{"net timeout", &url.Error{Op: "Get", URL: "x", Err: timeoutErr{}}, ReasonTimeout, true},
		{"deadline of one request", context.DeadlineExceeded, ReasonTimeout, true},
		{"canceled", fmt.Errorf("get: %w", context.Canceled), ReasonCanceled, false},
		{"other", errors.New("something"), ReasonUnknown, false},
		{"nil", nil, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.reason {
				t.Errorf("Classify = %q, want %q", got, tc.reason)
			}
			if got := retryable(tc.err); got != tc.retryable {
				t.Errorf("retryable = %v, want %v", got, tc.retryable)
			}
		})
	}
}

func TestApplyError(t *testing.T) {
	err := fmt.Errorf("node: %w", &ApplyError{
		Object: manifest.ID{Group: "monitoring.coreos.com", Kind: "ServiceMonitor", Namespace: "ns", Name: "sm"},
		Verb:   "apply", Reason: ReasonResourceTypeMissing, Err: errors.New("no API"),
	})
	if got, want := err.Error(), "node: ServiceMonitor.monitoring.coreos.com/ns/sm: apply: resource type missing: no API"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !IsResourceTypeMissing(err) || ReasonOf(err) != ReasonResourceTypeMissing {
		t.Errorf("ReasonOf = %q", ReasonOf(err))
	}
	if ReasonOf(apierrors.NewForbidden(schema.GroupResource{}, "x", errors.New("no"))) != ReasonForbidden {
		t.Error("ReasonOf does not classify a plain error")
	}
	if ReasonOf(nil) != "" {
		t.Error("ReasonOf(nil) is not empty")
	}
}

func TestForbiddenNamesTheMissingPermission(t *testing.T) {
	cases := []struct {
		name, message, want string
	}{
		{"namespaced",
			`User "system:serviceaccount:a:applier" cannot create resource "deployments" in API group "apps" in the namespace "ns"`,
			`Deployment.apps/ns/d: apply: forbidden: user "system:serviceaccount:a:applier" cannot create deployments.apps in namespace "ns": ` +
				`the role needs verb "create" on resource "deployments" of API group "apps" in namespace "ns" (or cluster-wide)`},
		{"cluster scope, core group",
			`User "bob" cannot patch resource "namespaces" in API group "" at the cluster scope`,
			`Deployment.apps/ns/d: apply: forbidden: user "bob" cannot patch namespaces cluster-wide: ` +
				`the role needs verb "patch" on resource "namespaces" of API group "" (core) cluster-wide (a ClusterRole with a ClusterRoleBinding)`},
		{"subresource",
			`User "bob" cannot update resource "clusteroperators/status" in API group "config.openshift.io" at the cluster scope`,
			`Deployment.apps/ns/d: apply: forbidden: user "bob" cannot update clusteroperators/status.config.openshift.io cluster-wide: ` +
				`the role needs verb "update" on resource "clusteroperators/status" of API group "config.openshift.io" cluster-wide (a ClusterRole with a ClusterRoleBinding)`},
		{"not an RBAC message", "quota exceeded",
			`Deployment.apps/ns/d: apply: forbidden: deployments.apps "d" is forbidden: quota exceeded`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cause := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "d", errors.New(tc.message))
			err := &ApplyError{Object: manifest.ID{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "d"}, Verb: "apply", Reason: ReasonForbidden, Err: cause}
			if got := err.Error(); got != tc.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, ok := MissingPermission(errors.New(`User "bob" cannot get resource "pods" in API group "" at the cluster scope`)); ok {
		t.Error("MissingPermission of an error that is not Forbidden")
	}
}

// TestClientTimeoutIsRetried: a request that gets no answer in time (a
// stalled connection) fails with the HTTP client's timeout, which is a
// timeout worth retrying on a new connection.
func TestClientTimeoutIsRetried(t *testing.T) {
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stall }))
	defer srv.Close()
	defer close(stall)
	_, err := (&http.Client{Timeout: 50 * time.Millisecond}).Get(srv.URL)
	if err == nil {
		t.Fatal("no error from a stalled server")
	}
	if got := Classify(err); got != ReasonTimeout {
		t.Errorf("Classify(%v) = %q, want Timeout", err, got)
	}
	if !retryable(err) {
		t.Errorf("retryable(%v) = false", err)
	}
}

// TestRetryStopsWithTheCaller: retrying a request that times out stops as
// soon as the caller's own deadline passes, with the last error.
func TestRetryStopsWithTheCaller(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	calls := 0
	err := retry(ctx, RetryOptions{Timeout: time.Minute, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}, func() error {
		calls++
		return fmt.Errorf("request: %w", context.DeadlineExceeded)
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("retry took %s after the caller's deadline of 200ms", d)
	}
	if calls < 2 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%d calls, err %v", calls, err)
	}
	if ctx.Err() == nil {
		t.Error("retry returned before the caller's deadline")
	}
}
