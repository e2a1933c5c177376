package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/openshift/library-go/pkg/verify"
	lgstore "github.com/openshift/library-go/pkg/verify/store"
	"github.com/openshift/library-go/pkg/verify/store/configmap"
	"github.com/openshift/library-go/pkg/verify/store/sigstore"
	"github.com/openshift/library-go/pkg/verify/util"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// MaxSignatures is how many signature-N files a store reads per digest
// (signature-1 to signature-9), as library-go's stores do.
const MaxSignatures = 9

// maxSignatureSize bounds one signature file, as library-go's HTTP store
// bounds a response.
const maxSignatureSize = 50 * 1024

// Dir is a signature directory, DIR/sha256=<hex>/signature-N.
type Dir string

var _ lgstore.Store = Dir("")

// String names the store as library-go names its file store.
func (d Dir) String() string { return "file://" + string(d) }

// Signatures calls fn with signature-1, signature-2, ... of digest until
// one is missing, fn says done, or MaxSignatures were read.
func (d Dir) Signatures(ctx context.Context, _ string, digest string, fn lgstore.Callback) error {
	prefix, err := util.DigestToKeyPrefix(digest, "=")
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(string(d))
	if err != nil {
		_, err = fn(ctx, nil, fmt.Errorf("signature store %s: %w", d, err))
		return err
	}
	defer root.Close()
	for i := 1; i <= MaxSignatures; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := path.Join(prefix, "signature-"+strconv.Itoa(i))
		data, err := readBounded(root, name)
		if errors.Is(err, fs.ErrNotExist) {
			if i == 1 {
				_, err := fn(ctx, nil, fmt.Errorf("%s/%s: %w", d, name, lgstore.ErrNotFound))
				return err
			}
			return nil
		}
		if err != nil {
			err = fmt.Errorf("%s/%s: %w", d, name, err)
		}
		if done, err := fn(ctx, data, err); done || err != nil {
			return err
		}
	}
	return nil
}

func readBounded(root *os.Root, name string) ([]byte, error) {
	// A named pipe or device in the store is refused, never opened
	// (an open would block for good).
	f, err := safefs.OpenIn(root, name, safefs.Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSignatureSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSignatureSize {
		return nil, fmt.Errorf("larger than %d bytes", maxSignatureSize)
	}
	return data, nil
}

// Add writes sig as the first free signature-N of digest (creating the
// directories) and returns its path. A signature already there (the same
// bytes) is not written twice. Everything goes through an os.Root of the
// store, as Signatures reads it: a symbolic link inside the store cannot
// lead the write out of it, and a named pipe at a signature's place is
// passed over without being opened.
func (d Dir) Add(digest string, sig []byte) (string, error) {
	prefix, err := util.DigestToKeyPrefix(digest, "=")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(string(d))
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.MkdirAll(prefix, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", path.Join(string(d), prefix), err)
	}
	for i := 1; i <= MaxSignatures; i++ {
		name := path.Join(prefix, "signature-"+strconv.Itoa(i))
		p := path.Join(string(d), name)
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			if old, err := readBounded(root, name); err == nil && string(old) == string(sig) {
				return p, nil
			}
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		_, err = f.Write(sig)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = root.Remove(name)
			return "", fmt.Errorf("%s: %w", p, err)
		}
		return p, nil
	}
	return "", fmt.Errorf("%s: already %d signatures, the most a store is read for", path.Join(string(d), prefix), MaxSignatures)
}

// HTTP returns a store reading u (http or https) laid out as Dir is, with
// client (its transport decides TLS and bounds the time of each request:
// lib/registry's Client.Transport holds each to a budget and a minimum
// rate; nil: http.DefaultClient, which bounds nothing). Each response is
// cut at the size of a signature, whatever client does (library-go reads
// a response whole).
func HTTP(u string, client *http.Client) (lgstore.Store, error) {
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return nil, fmt.Errorf("signature store %q: want an http:// or https:// URL", u)
	}
	if client == nil {
		client = http.DefaultClient
	}
	capped := *client
	capped.Transport = capBodies{client.Transport}
	return &sigstore.Store{URI: parsed, HTTPClient: func() (*http.Client, error) { return &capped, nil }}, nil
}

// capBodies fails a response body past maxSignatureSize bytes.
type capBodies struct{ rt http.RoundTripper }

func (c capBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	rt := c.rt
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, n: maxSignatureSize}
	}
	return resp, err
}

type cappedBody struct {
	io.ReadCloser
	n int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.n+1 {
		p = p[:b.n+1]
	}
	k, err := b.ReadCloser.Read(p)
	if b.n -= int64(k); b.n < 0 {
		return k, fmt.Errorf("response larger than %d bytes, more than a signature", maxSignatureSize)
	}
	return k, err
}

// Parse returns the store a --signature-store value names: an http(s) URL,
// a file:// URL or a directory.
func Parse(v string, client *http.Client) (lgstore.Store, error) {
	switch {
	case strings.HasPrefix(v, "http://"), strings.HasPrefix(v, "https://"):
		return HTTP(v, client)
	case strings.HasPrefix(v, "file://"):
		v = strings.TrimPrefix(v, "file://")
	}
	st, err := os.Stat(v)
	if err != nil {
		return nil, fmt.Errorf("signature store %s: %w", v, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("signature store %s: not a directory", v)
	}
	return Dir(v), nil
}

// ConfigMaps returns a store reading the cluster's signature ConfigMaps
// (openshift-config-managed, labelled
// release.openshift.io/verification-signatures), listing them at every
// lookup.
func ConfigMaps(client corev1client.ConfigMapsGetter) lgstore.Store {
	return configmap.NewStore(client, rate.NewLimiter(rate.Inf, 1))
}

// ConfigMap returns signatures of digest as the ConfigMap the CVO reads
// them from (library-go's GetSignaturesAsConfigmap: namespace
// openshift-config-managed, the label, binaryData sha256-<hex>-N).
func ConfigMap(digest string, sigs [][]byte) (*corev1.ConfigMap, error) {
	return verify.GetSignaturesAsConfigmap(digest, sigs)
}
