package registry

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Options configure a Client. The zero value talks to registries
// anonymously, over verified TLS, with DefaultLimits.
type Options struct {
	// Keychain finds credentials; nil: anonymous. See DefaultKeychain.
	Keychain *Keychain
	// Insecure are the hosts ("HOST" for any port, or "HOST:PORT") whose
	// TLS certificates are not verified and that may be reached over plain
	// HTTP (--insecure-registry, skopeo's --tls-verify=false).
	Insecure []string
	// RootCAs verifies registry certificates; nil: the system roots
	// (which SSL_CERT_FILE and SSL_CERT_DIR extend).
	RootCAs *x509.CertPool
	// Limits bound responses and waits.
	Limits Limits
	// UserAgent is sent with every request; empty: "payload-apply".
	UserAgent string
	// Platform picks the image of an image index; zero: linux/amd64.
	Platform v1.Platform
}

// Client pulls and pushes payload images. It is safe for concurrent use.
type Client struct {
	opts  Options
	guard *guard
}

// New returns a Client.
func New(opts Options) *Client {
	opts.Limits = opts.Limits.withDefaults()
	if opts.UserAgent == "" {
		opts.UserAgent = "payload-apply"
	}
	if opts.Platform.OS == "" {
		opts.Platform = v1.Platform{OS: "linux", Architecture: "amd64"}
	}
	return &Client{opts: opts, guard: newGuard(opts.RootCAs, opts.Insecure, opts.Limits)}
}

// Requests returns how many HTTP requests the Client has sent (redirects
// and retries count one each).
func (c *Client) Requests() int64 { return c.guard.requests.Load() }

// ParseReference parses s as ParseReference does, with the Client's
// insecure hosts.
func (c *Client) ParseReference(s string) (name.Reference, error) {
	return ParseReference(s, c.opts.Insecure)
}

// Transport is the http.RoundTripper under the Client's registry requests:
// TLS by host, limits, counting. Other HTTP clients of the same policy
// (signature stores) may use it.
func (c *Client) Transport() http.RoundTripper { return c.guard }

// remote returns go-containerregistry's options for one operation.
func (c *Client) remote(ctx context.Context) []remote.Option {
	kc := remote.WithAuth(authn.Anonymous)
	if c.opts.Keychain != nil {
		kc = remote.WithAuthFromKeychain(c.opts.Keychain)
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(c.guard),
		kc,
		remote.WithUserAgent(c.opts.UserAgent),
		remote.WithPlatform(c.opts.Platform),
	}
	if c.opts.Limits.Retries < 0 {
		opts = append(opts, remote.WithRetryBackoff(remote.Backoff{Steps: 1}))
	} else {
		opts = append(opts, remote.WithRetryBackoff(remote.Backoff{
			Duration: c.opts.Limits.RetryDelay, Factor: 2, Steps: c.opts.Limits.Retries + 1,
		}))
	}
	return opts
}

// explain turns a registry error into one a person can act on, naming
// what was asked of whom.
func (c *Client) explain(ctx context.Context, op string, ref name.Reference, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s %s: interrupted: %w", op, ref, ctx.Err())
	}
	host := ref.Context().RegistryStr()
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized:
			return &AccessError{Op: op, Ref: ref.String(), Status: te.StatusCode, Detail: c.credentialsHint(ctx, ref), Err: err}
		case http.StatusForbidden:
			return &AccessError{Op: op, Ref: ref.String(), Status: te.StatusCode, Detail: "the credentials " + c.credentialsSource(ctx, ref) + " are not allowed to do this", Err: err}
		case http.StatusNotFound:
			return &AccessError{Op: op, Ref: ref.String(), Status: te.StatusCode, Detail: "no such image, tag or repository", Err: err}
		case http.StatusTooManyRequests:
			return fmt.Errorf("%s %s: registry %s is rate limiting (429 Too Many Requests), still after %d retries: try again later: %w", op, ref, host, c.opts.Limits.Retries, err)
		}
		if te.StatusCode >= 500 {
			return fmt.Errorf("%s %s: registry %s failed (HTTP %d), still after %d retries: %w", op, ref, host, te.StatusCode, c.opts.Limits.Retries, err)
		}
	}
	var x509Err x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	if errors.As(err, &x509Err) || errors.As(err, &hostErr) || strings.Contains(err.Error(), "x509:") || strings.Contains(err.Error(), "tls:") {
		return fmt.Errorf("%s %s: TLS to %s not verified (add its CA to SSL_CERT_FILE, or skip verification with --insecure-registry %s): %w", op, ref, host, host, err)
	}
	return fmt.Errorf("%s %s: %w", op, ref, err)
}

// AccessError is a registry refusing a request: 401, 403 or 404.
type AccessError struct {
	Op, Ref string
	Status  int
	Detail  string
	Err     error
}

func (e *AccessError) Error() string {
	return fmt.Sprintf("%s %s: %s (%d %s): %s", e.Op, e.Ref, strings.ToLower(http.StatusText(e.Status)), e.Status, http.StatusText(e.Status), e.Detail)
}

// Unwrap returns the registry's error.
func (e *AccessError) Unwrap() error { return e.Err }

func (c *Client) credentialsSource(ctx context.Context, ref name.Reference) string {
	if c.opts.Keychain == nil {
		return "(none)"
	}
	cred, err := c.opts.Keychain.Lookup(ctx, ref.Context().String())
	if err != nil || cred == nil {
		return "(none)"
	}
	return "from " + cred.Source
}

func (c *Client) credentialsHint(ctx context.Context, ref name.Reference) string {
	host := ref.Context().RegistryStr()
	if c.opts.Keychain == nil {
		return "no credentials were given"
	}
	cred, err := c.opts.Keychain.Lookup(ctx, ref.Context().String())
	if err != nil {
		return err.Error()
	}
	if cred == nil {
		where := "no credentials file"
		if len(c.opts.Keychain.Files) > 0 {
			where = fmt.Sprintf("%s (%s)", c.opts.Keychain.Origin, strings.Join(c.opts.Keychain.Files, ", "))
		}
		return fmt.Sprintf("no credentials for %s in %s: log in with 'podman login %s' or pass --registry-config", host, where, host)
	}
	return fmt.Sprintf("the credentials for %s from %s were rejected", host, cred.Source)
}
