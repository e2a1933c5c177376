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
	"regexp"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Reason classifies a failure. Every error the Manager returns is an
// *ApplyError with one of these.
type Reason string

// The reasons, from the caller's point of view.
const (
	// ReasonResourceTypeMissing: the server has no API for the object's
	// kind and nothing expected to define one (see Manager.ExpectKinds)
	// did so in time.
	ReasonResourceTypeMissing Reason = "ResourceTypeMissing"
	// ReasonNamespaceMissing: the object's namespace does not exist.
	ReasonNamespaceMissing Reason = "NamespaceMissing"
	// ReasonInvalid: the server rejected the object (422, 400, a webhook
	// or admission policy denial, a namespaced object without namespace).
	ReasonInvalid Reason = "Invalid"
	// ReasonForbidden: the credentials may not do this (403).
	ReasonForbidden Reason = "Forbidden"
	// ReasonUnauthorized: the server did not accept the credentials (401).
	ReasonUnauthorized Reason = "Unauthorized"
	// ReasonCertificate: the server's TLS certificate could not be
	// verified (unknown authority, wrong host name, expired). Never
	// retried: the same certificate fails the same way.
	ReasonCertificate Reason = "CertificateInvalid"
	// ReasonConflict: a conflict persisted through the retries.
	ReasonConflict Reason = "Conflict"
	// ReasonUnavailable: the server could not be reached or kept failing
	// (connection refused or reset, 5xx, 429) until the retry deadline.
	ReasonUnavailable Reason = "ServerUnavailable"
	// ReasonTimeout: the object did not become ready, or a request did not
	// finish, before the deadline.
	ReasonTimeout Reason = "Timeout"
	// ReasonNotReady: the object reports a failure (a Job failed, a
	// Deployment exceeded its progress deadline).
	ReasonNotReady Reason = "NotReady"
	// ReasonCanceled: the caller's context ended.
	ReasonCanceled Reason = "Canceled"
	// ReasonUnknown: anything else.
	ReasonUnknown Reason = "Unknown"
)

// Text returns the reason in words, as messages print it ("resource type
// missing").
func (r Reason) Text() string {
	switch r {
	case ReasonResourceTypeMissing:
		return "resource type missing"
	case ReasonNamespaceMissing:
		return "namespace missing"
	case ReasonInvalid:
		return "invalid"
	case ReasonForbidden:
		return "forbidden"
	case ReasonUnauthorized:
		return "unauthorized"
	case ReasonCertificate:
		return "TLS certificate verification failed"
	case ReasonConflict:
		return "conflict"
	case ReasonUnavailable:
		return "server unavailable"
	case ReasonTimeout:
		return "timeout"
	case ReasonNotReady:
		return "not ready"
	case ReasonCanceled:
		return "canceled"
	}
	return "error"
}

// ApplyError is the failure of one verb on one object.
type ApplyError struct {
	// Object is the object's identity.
	Object manifest.ID
	// Verb is what was being done: "apply", "create", "delete", "get",
	// "wait".
	Verb string
	// Reason classifies Err.
	Reason Reason
	// Err is the cause.
	Err error
}

// Error prints "Kind/ns/name: verb: reason: cause". A Forbidden cause
// the server explains (which user, verb, resource, group and namespace) is
// put as the permission the credentials lack.
func (e *ApplyError) Error() string {
	if e.Reason == ReasonForbidden {
		if p, ok := MissingPermission(e.Err); ok {
			return fmt.Sprintf("%s: %s: %s: %s", e.Object, e.Verb, e.Reason.Text(), p)
		}
	}
	return fmt.Sprintf("%s: %s: %s: %v", e.Object, e.Verb, e.Reason.Text(), e.Err)
}

// Permission is what an RBAC role lacks, as a Forbidden error says.
type Permission struct {
	// User is the user the server saw.
	User string
	// Verb is the RBAC verb: get, list, create, patch (server-side apply),
	// update, delete.
	Verb string
	// Resource is the resource, with its subresource after a slash
	// ("clusteroperators/status").
	Resource string
	// Group is the API group, "" for the core group.
	Group string
	// Namespace is the namespace, "" for cluster scope.
	Namespace string
}

// String says what is missing and what the role needs, e.g. 'user "u"
// cannot create deployments.apps in namespace "ns": the role needs verb
// "create" on resource "deployments" of API group "apps" in namespace "ns"'.
func (p Permission) String() string {
	res := p.Resource
	group := fmt.Sprintf("API group %q", p.Group)
	if p.Group != "" {
		res += "." + p.Group
	} else {
		group += " (core)"
	}
	where, scope := "cluster-wide", "cluster-wide (a ClusterRole with a ClusterRoleBinding)"
	if p.Namespace != "" {
		where = fmt.Sprintf("in namespace %q", p.Namespace)
		scope = fmt.Sprintf("in namespace %q (or cluster-wide)", p.Namespace)
	}
	return fmt.Sprintf("user %q cannot %s %s %s: the role needs verb %q on resource %q of %s %s",
		p.User, p.Verb, res, where, p.Verb, p.Resource, group, scope)
}

// forbiddenRE matches the message of the API server's Forbidden errors
// (k8s.io/apiserver's responsewriters.forbiddenMessage).
var forbiddenRE = regexp.MustCompile(`User "([^"]*)" cannot (\S+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)"| at the cluster scope)`)

// MissingPermission returns the permission a Forbidden error says is
// missing; ok is false when err is not such an error.
func MissingPermission(err error) (p Permission, ok bool) {
	if err == nil || !apierrors.IsForbidden(err) {
		return p, false
	}
	m := forbiddenRE.FindStringSubmatch(err.Error())
	if m == nil {
		return p, false
	}
	return Permission{User: m[1], Verb: m[2], Resource: m[3], Group: m[4], Namespace: m[5]}, true
}

// Unwrap returns the cause.
func (e *ApplyError) Unwrap() error { return e.Err }

// ReasonOf returns the Reason of the first *ApplyError or *StepError in
// err's chain, or Classify(err) when there is none. It is "" for a nil
// error.
func ReasonOf(err error) Reason {
	if err == nil {
		return ""
	}
	var ae *ApplyError
	if errors.As(err, &ae) {
		return ae.Reason
	}
	if se, ok := isStepError(err); ok {
		return se.Reason
	}
	return Classify(err)
}

// IsResourceTypeMissing reports whether err says an object's kind has no
// API on the server. Such a failure concerns that object alone: nothing can
// depend on an object that cannot exist.
func IsResourceTypeMissing(err error) bool {
	return ReasonOf(err) == ReasonResourceTypeMissing
}

// Classify maps an error from client-go or the network to a Reason. It is
// the one place where API and transport errors get their meaning.
func Classify(err error) Reason {
	switch {
	case err == nil:
		return ""
	case errors.As(err, new(*OutageError)):
		return ReasonUnavailable
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case IsCertificateError(err):
		return ReasonCertificate
	case meta.IsNoMatchError(err):
		return ReasonResourceTypeMissing
	case isSchemaError(err), isTooLarge(err):
		return ReasonInvalid
	case isStorageFull(err):
		return ReasonUnavailable
	case isNamespaceNotFound(err):
		return ReasonNamespaceMissing
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err):
		return ReasonInvalid
	case isAdmissionDenial(err):
		return ReasonInvalid
	case apierrors.IsForbidden(err):
		return ReasonForbidden
	case apierrors.IsUnauthorized(err):
		return ReasonUnauthorized
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return ReasonConflict
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		return ReasonTimeout
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err),
		apierrors.IsUnexpectedServerError(err), isServerStatus(err), isConnectionError(err):
		return ReasonUnavailable
	case isNetTimeout(err):
		return ReasonTimeout
	}
	return ReasonUnknown
}

// retryable reports whether err is worth trying again: the server may
// answer differently in a moment. A deadline that passed is one request's
// (the client's request timeout, on a connection that stalled) unless the
// caller's context ended too, which the retry loops check on their own.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || isSchemaError(err) || IsCertificateError(err) || isTooLarge(err) || isStorageFull(err) {
		return false
	}
	switch {
	case apierrors.IsConflict(err), apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsInternalError(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsUnexpectedServerError(err), isServerStatus(err), isConnectionError(err), isNetTimeout(err),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}

// isSchemaError reports the 500 a server-side apply gets when the object
// does not fit the type's schema (a field the schema does not declare):
// the same request fails the same way every time.
func isSchemaError(err error) bool {
	if !apierrors.IsInternalError(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "failed to create typed patch object") || strings.Contains(msg, "field not declared in schema") ||
		strings.Contains(msg, "failed to create typed live object")
}

// tooLargeMessages are what the API server says, in a 500, when etcd
// refuses an object too large for one request (etcd's --max-request-bytes,
// 1.5 MiB by default; the API server itself takes up to 3 MiB) or gRPC's
// message limit between them: the same object fails the same way every
// time.
var tooLargeMessages = []string{"etcdserver: request is too large", "trying to send message larger than max"}

// isTooLarge reports a server error saying the object is too large to
// store.
func isTooLarge(err error) bool {
	if !isServerStatus(err) {
		return false
	}
	msg := err.Error()
	for _, s := range tooLargeMessages {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// isStorageFull reports etcd's "database space exceeded" (its quota is
// reached): no write succeeds until an administrator compacts and
// defragments etcd, so retrying for two minutes only delays the failure.
func isStorageFull(err error) bool {
	return isServerStatus(err) && strings.Contains(err.Error(), "database space exceeded")
}

// explain adds what a user can do to the errors whose cause is not plain
// from the server's words.
func explain(err error) error {
	switch {
	case isTooLarge(err):
		return fmt.Errorf("%w: the object is larger than etcd stores in one request (its --max-request-bytes, 1.5 MiB by default): make it smaller", err)
	case isStorageFull(err):
		return fmt.Errorf("%w: etcd's storage quota is reached (--quota-backend-bytes): no write will succeed until it is compacted and defragmented", err)
	}
	return err
}

// IsCertificateError reports whether err is the failure to verify the
// server's TLS certificate: signed by an authority the client does not
// trust, for another host name, expired or otherwise invalid.
func IsCertificateError(err error) bool {
	var cve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case err == nil:
		return false
	case errors.As(err, &cve), errors.As(err, &ua), errors.As(err, &he), errors.As(err, &ci):
		return true
	}
	return strings.Contains(err.Error(), "tls: failed to verify certificate")
}

// isAdmissionDenial reports the 403 an admission webhook or a
// ValidatingAdmissionPolicy answers when it rejects the object: the object
// is wrong for this cluster, the credentials are not.
func isAdmissionDenial(err error) bool {
	if !apierrors.IsForbidden(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "denied request") || strings.Contains(msg, "denied the request") ||
		strings.Contains(msg, "admission webhook")
}

// isServerStatus reports a 5xx status error.
func isServerStatus(err error) bool {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status().Code >= http.StatusInternalServerError
	}
	return false
}

// isConnectionError reports errors of a connection that failed or broke:
// refused, reset, closed early.
func isConnectionError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "http2: client connection lost",
		"http2: server sent GOAWAY", "use of closed network connection", "unexpected EOF", "TLS handshake timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isNamespaceNotFound reports the NotFound a create or apply gets when the
// object's namespace does not exist.
func isNamespaceNotFound(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind == "namespaces"
}
