package signature

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/openshift/library-go/pkg/verify/store"
	"golang.org/x/crypto/openpgp/packet" //nolint:staticcheck // the packets library-go's verifier reads
)

// Bounds of a signature message before anything reads it whole: what each
// compressed packet may expand to, how deep they nest, and how many
// packets one level holds (a signed message has three).
const (
	maxExpanded     = maxSignatureSize
	maxCompressions = 4
	maxPackets      = 16
)

// errExpands marks a message that expands beyond maxExpanded.
var errExpands = fmt.Errorf("a compressed packet expands to more than %d bytes, more than any signature holds: refused before it is read", maxExpanded)

// checkMessage walks an OpenPGP message's packets, decompressing as it
// goes but never more than maxExpanded bytes out of any compressed packet,
// so that library-go's verifier, which reads a message whole, never meets
// one that expands (a 2 KB bzip2 message of 1 GiB took it to 2.1 GB).
func checkMessage(sig []byte) error {
	return walkPackets(bytes.NewReader(sig), 0)
}

func walkPackets(r io.Reader, depth int) error {
	for n := 0; ; n++ {
		if n >= maxPackets {
			return fmt.Errorf("more than %d packets in a message: not a signature", maxPackets)
		}
		p, err := packet.Read(r)
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, errExpands):
			return err
		case err != nil:
			return nil // not ours to judge: the verifier says what is wrong
		}
		switch p := p.(type) {
		case *packet.Compressed:
			if depth >= maxCompressions {
				return fmt.Errorf("compressed packets nested more than %d deep: not a signature", maxCompressions)
			}
			if err := walkPackets(&capped{r: p.Body, n: maxExpanded}, depth+1); err != nil {
				return err
			}
		case *packet.LiteralData:
			if _, err := io.Copy(io.Discard, p.Body); errors.Is(err, errExpands) {
				return err
			}
		}
	}
}

// capped fails with errExpands past n bytes.
type capped struct {
	r io.Reader
	n int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, errExpands
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	if c.n < 0 {
		return k, errExpands
	}
	return k, err
}

// checked is a store whose signatures are read once per digest, checked
// (checkMessage) before anything else reads them, and kept, so that the
// second look, at why a verification failed, asks the store nothing more.
// A store that fails a request (other than not found) is asked for
// nothing more in that lookup: a store that sends one byte at a time
// costs its transfer budget once, not once per signature.
type checked struct {
	store.Store
	mu   sync.Mutex
	read map[string][]readSig
}

type readSig struct {
	sig []byte
	err error
}

// Signatures implements store.Store.
func (c *checked) Signatures(ctx context.Context, name, digest string, fn store.Callback) error {
	c.mu.Lock()
	sigs, ok := c.read[digest]
	if !ok {
		var err error
		if sigs, err = c.readAll(ctx, name, digest); err != nil {
			c.mu.Unlock()
			return err
		}
		if c.read == nil {
			c.read = map[string][]readSig{}
		}
		c.read[digest] = sigs
	}
	c.mu.Unlock()
	for _, s := range sigs {
		if done, err := fn(ctx, s.sig, s.err); done || err != nil {
			return err
		}
	}
	return nil
}

func (c *checked) readAll(ctx context.Context, name, digest string) ([]readSig, error) {
	var out []readSig
	err := c.Store.Signatures(ctx, name, digest, func(ctx context.Context, sig []byte, err error) (bool, error) {
		failed := err != nil && !errors.Is(err, store.ErrNotFound)
		if err == nil {
			if cerr := checkMessage(sig); cerr != nil {
				sig, err = nil, cerr
			}
		}
		out = append(out, readSig{sig, err})
		return len(out) >= 10 || failed, nil
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, store.ErrNotFound) {
		out, err = append(out, readSig{err: err}), nil
	}
	return out, err
}
