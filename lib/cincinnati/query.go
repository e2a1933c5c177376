package cincinnati

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/blang/semver/v4"
	"github.com/google/uuid"
)

// Query is what a cluster asks an update service: the graph of Channel
// for Arch, as the cluster ID running Version.
type Query struct {
	// Channel is the cluster's spec.channel ("stable-4.22").
	Channel string
	// Arch is the architecture of the release the cluster runs, as the
	// service names it: "amd64", "arm64", ... or "multi".
	Arch string
	// ID is the cluster's spec.clusterID (a UUID).
	ID string
	// Version is the version the cluster runs (status.desired.version).
	Version string
}

// The patterns the service accepts for a channel and an architecture
// (Cincinnati's channel and arch filters); anything else is a bad query.
var (
	ChannelPattern = regexp.MustCompile(`^[0-9a-z\-\.]+$`)
	ArchPattern    = regexp.MustCompile(`^[0-9a-z]+$`)
)

// MediaType is the media type of a graph (the request's Accept header).
const MediaType = "application/json"

// Check checks the query and the update service's URL as the CVO does
// before it asks, in its order, and returns the URL to ask: upstream with
// the query's parameters (arch, channel, id, version) added to its own.
// An error is an *Error with the CVO's reason: NoUpstream,
// InvalidURI, InvalidID, NoArchitecture, NoCurrentVersion, NoChannel,
// InvalidCurrentVersion.
func Check(upstream string, q Query) (*url.URL, error) {
	if upstream == "" {
		return nil, &Error{Reason: ReasonNoUpstream, Message: "No update service is configured to retrieve updates from: set spec.upstream."}
	}
	u, err := url.Parse(upstream)
	if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
		err = fmt.Errorf("want an http or https URL with a host")
	}
	if err != nil {
		return nil, &Error{Reason: ReasonInvalidURI, Message: fmt.Sprintf("The update service URL %q is not valid: %v", upstream, err), Err: err}
	}
	if _, err := uuid.Parse(q.ID); err != nil {
		return nil, &Error{Reason: ReasonInvalidID, Message: fmt.Sprintf("The cluster ID %q (spec.clusterID) is not a UUID: %v", q.ID, err), Err: err}
	}
	if q.Arch == "" {
		return nil, &Error{Reason: ReasonNoArchitecture, Message: "The cluster's architecture is not known."}
	}
	if q.Version == "" {
		return nil, &Error{Reason: ReasonNoCurrentVersion, Message: "The release the cluster runs has no version, so its updates cannot be looked up."}
	}
	if q.Channel == "" {
		return nil, &Error{Reason: ReasonNoChannel, Message: "The update channel is not set (spec.channel)."}
	}
	if _, err := semver.Parse(q.Version); err != nil {
		return nil, &Error{Reason: ReasonInvalidCurrentVersion, Message: fmt.Sprintf("The version the cluster runs, %q, is not a semantic version, so its updates cannot be looked up.", q.Version), Err: err}
	}
	params := u.Query()
	params.Add("arch", q.Arch)
	params.Add("channel", q.Channel)
	params.Add("id", q.ID)
	params.Add("version", q.Version)
	u.RawQuery = params.Encode()
	return u, nil
}
