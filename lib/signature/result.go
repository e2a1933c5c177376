package signature

import (
	"fmt"
	"strings"
)

// Check is the outcome for one keyring or cosign key.
type Check struct {
	// Scheme is the signature scheme checked.
	Scheme Scheme `json:"scheme"`
	// Key names the keyring or the cosign key (its file).
	Key string `json:"key"`
	// Verified is true when a valid signature by Key names the digest.
	Verified bool `json:"verified"`
	// SignedBy is the key that signed: an OpenPGP fingerprint and user id,
	// or a cosign key id.
	SignedBy string `json:"signedBy,omitempty"`
	// Source is where signatures were looked for.
	Source string `json:"source,omitempty"`
	// Reason says why Key did not verify.
	Reason string `json:"reason,omitempty"`
}

// Result is what Policy.Verify found. Apply, upgrade and the operator
// record it in the ClusterVersion history: Verified as the entry's
// "verified", AcceptedRisk as its "acceptedRisks" when an unverified
// payload was let through (Accepted).
type Result struct {
	// Digest is the digest checked ("" for a payload that is no image).
	Digest string `json:"digest,omitempty"`
	// Image is the pull spec or file checked.
	Image string `json:"image,omitempty"`
	// Verified is true when every keyring and cosign key of the policy
	// signed Digest (and the policy has at least one).
	Verified bool `json:"verified"`
	// Checks are the outcomes per keyring and cosign key.
	Checks []Check `json:"checks,omitempty"`
	// Reason says why the payload is not verified.
	Reason string `json:"reason,omitempty"`
	// Required is the policy's: an unverified payload is refused unless
	// accepted.
	Required bool `json:"required"`
	// Accepted is true when an unverified payload was let through by
	// AllowUnverified (--allow-unverified).
	Accepted bool `json:"accepted,omitempty"`
}

// Schemes returns the schemes that verified, in check order.
func (r Result) Schemes() []Scheme {
	var out []Scheme
	seen := map[Scheme]bool{}
	for _, c := range r.Checks {
		if c.Verified && !seen[c.Scheme] {
			seen[c.Scheme] = true
			out = append(out, c.Scheme)
		}
	}
	return out
}

// String says in one line what was verified and by whom, or why not:
// "release sha256:...: verified: atomic signature by FPR (uid), cosign
// signature by cosign.pub (sha256:...)" or "release sha256:...: not
// verified: REASON".
func (r Result) String() string {
	subject := "release " + r.Digest
	if r.Digest == "" {
		subject = "payload " + r.Image
	}
	if !r.Verified {
		s := subject + ": not verified: " + r.Reason
		if r.Accepted {
			s += " (accepted: --allow-unverified)"
		}
		return s
	}
	var by []string
	for _, c := range r.Checks {
		switch c.Scheme {
		case SchemeAtomic:
			by = append(by, fmt.Sprintf("atomic signature by %s (keyring %s)", c.SignedBy, c.Key))
		case SchemeCosign:
			by = append(by, fmt.Sprintf("cosign signature by %s (%s)", c.Key, c.SignedBy))
		}
	}
	return subject + ": verified: " + strings.Join(by, ", ")
}

// AcceptedRisk is the text for the ClusterVersion history's acceptedRisks
// when the payload went on unverified, worded as the CVO words a forced
// update it cannot verify; empty when verified.
func (r Result) AcceptedRisk(version string) string {
	if r.Verified {
		return ""
	}
	return fmt.Sprintf("Target release version=%q image=%q cannot be verified, but continuing anyway because --allow-unverified was given: %s", version, r.Image, r.Reason)
}

// UnverifiedError is a payload refused because it is not verified. The
// message names the digest and the reason.
type UnverifiedError struct {
	Result Result
}

func (e *UnverifiedError) Error() string {
	return e.Result.String() + " (--allow-unverified accepts the risk)"
}
