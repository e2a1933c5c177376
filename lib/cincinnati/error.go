package cincinnati

import (
	configv1 "github.com/openshift/api/config/v1"
)

// The reasons of RetrievedUpdates=False, as the CVO names them.
const (
	// ReasonNoUpstream: no update service is configured.
	ReasonNoUpstream = "NoUpstream"
	// ReasonInvalidURI: the update service's URL does not parse.
	ReasonInvalidURI = "InvalidURI"
	// ReasonInvalidID: the cluster's id is not a UUID.
	ReasonInvalidID = "InvalidID"
	// ReasonNoArchitecture: the cluster's architecture is unknown.
	ReasonNoArchitecture = "NoArchitecture"
	// ReasonNoCurrentVersion: the release the cluster runs has no version.
	ReasonNoCurrentVersion = "NoCurrentVersion"
	// ReasonNoChannel: spec.channel is empty.
	ReasonNoChannel = "NoChannel"
	// ReasonInvalidCurrentVersion: the version the cluster runs is not a
	// semantic version.
	ReasonInvalidCurrentVersion = "InvalidCurrentVersion"
	// ReasonInvalidRequest: the request cannot be made.
	ReasonInvalidRequest = "InvalidRequest"
	// ReasonRemoteFailed: the service could not be reached (connection,
	// TLS, timeout).
	ReasonRemoteFailed = "RemoteFailed"
	// ReasonResponseFailed: the service answered with an error status, or
	// its answer could not be read.
	ReasonResponseFailed = "ResponseFailed"
	// ReasonResponseInvalid: the answer is not a graph (malformed, over
	// the limits, edges to missing nodes, an invalid node).
	ReasonResponseInvalid = "ResponseInvalid"
	// ReasonVersionNotFound: the channel's graph lacks the version the
	// cluster runs.
	ReasonVersionNotFound = "VersionNotFound"
)

// Error is a failure to learn the cluster's updates: Reason is the
// RetrievedUpdates reason, Message says what happened for people, Err is
// the cause (nil for most).
type Error struct {
	Reason, Message string
	Err             error
}

// Error returns "Reason: Message".
func (e *Error) Error() string { return e.Reason + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Failed reports whether the failure is the service's (RemoteFailed,
// ResponseFailed, ResponseInvalid): the updates learned before are kept,
// as the CVO keeps them, rather than cleared.
func (e *Error) Failed() bool {
	switch e.Reason {
	case ReasonRemoteFailed, ReasonResponseFailed, ReasonResponseInvalid:
		return true
	}
	return false
}

// RetrievedCondition returns the RetrievedUpdates condition of an
// outcome: True for nil; False with the Error's reason (the CVO prefixes
// the service's failures with "Unable to retrieve available updates: "),
// or reason Unknown for another error. LastTransitionTime is left zero.
func RetrievedCondition(err error) configv1.ClusterOperatorStatusCondition {
	c := configv1.ClusterOperatorStatusCondition{Type: configv1.RetrievedUpdates, Status: configv1.ConditionTrue}
	if err == nil {
		return c
	}
	c.Status, c.Reason, c.Message = configv1.ConditionFalse, "Unknown", "Unable to retrieve available updates: "+err.Error()
	if e, ok := err.(*Error); ok {
		c.Reason, c.Message = e.Reason, e.Message
		if e.Failed() || e.Reason == ReasonVersionNotFound || e.Reason == ReasonInvalidRequest {
			c.Message = "Unable to retrieve available updates: " + e.Message
		}
	}
	return c
}
