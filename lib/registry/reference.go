package registry

import (
	"fmt"
	"net"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// DockerPrefix is how skopeo and podman spell a registry reference
// ("docker://quay.io/org/repo:tag").
const DockerPrefix = "docker://"

// IsReference reports whether s is spelled as a registry reference rather
// than a file: it starts with DockerPrefix, or its first slash-separated
// element names a registry host (it has a "." or a ":" port, or is
// "localhost") and something follows it. Callers that also accept files
// should look for a file first: "quay.io/org/repo:tag" may be a path.
func IsReference(s string) bool {
	if strings.HasPrefix(s, DockerPrefix) {
		return true
	}
	host, rest, ok := strings.Cut(s, "/")
	if !ok || rest == "" {
		return false
	}
	return isHost(host)
}

// isHost reports whether the first element of a reference names a
// registry, by Docker's rule.
func isHost(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	return s == "localhost" || strings.ContainsAny(s, ".:") || strings.HasPrefix(s, "[")
}

// ParseReference parses a registry reference: [docker://]HOST[:PORT]/REPO
// with a ":TAG" (default "latest"), an "@sha256:..." digest, or both (the
// digest wins, as in skopeo). The registry host must be explicit: no
// Docker Hub default for "repo:tag", which reads like a file name. Hosts
// matched by insecure (see Options.Insecure) may be reached over plain
// HTTP.
func ParseReference(s string, insecure []string) (name.Reference, error) {
	in := s
	s = strings.TrimPrefix(s, DockerPrefix)
	host, _, ok := strings.Cut(s, "/")
	if !ok || !isHost(host) {
		return nil, fmt.Errorf("registry reference %q: want HOST/REPOSITORY[:TAG|@DIGEST] with the registry host spelled out (e.g. quay.io/org/repo:tag)", in)
	}
	opts := []name.Option{name.StrictValidation}
	if matchHost(insecure, host) {
		opts = append(opts, name.Insecure)
	}
	// A tag and a digest: the digest names the content; drop the tag, as
	// go-containerregistry's strict parser refuses both.
	if repo, dgst, ok := strings.Cut(s, "@"); ok {
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		s = repo + "@" + dgst
	} else if i := strings.LastIndex(s, ":"); i <= strings.LastIndex(s, "/") {
		s += ":" + name.DefaultTag
	}
	ref, err := name.ParseReference(s, opts...)
	if err != nil {
		return nil, fmt.Errorf("registry reference %q: %w", in, err)
	}
	return ref, nil
}

// matchHost reports whether host (HOST or HOST:PORT) is one of hosts, each
// "HOST" (any port) or "HOST:PORT".
func matchHost(hosts []string, host string) bool {
	bare := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		bare = h
	}
	for _, h := range hosts {
		h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://"), "/")
		if strings.EqualFold(h, host) || strings.EqualFold(h, bare) {
			return true
		}
	}
	return false
}
