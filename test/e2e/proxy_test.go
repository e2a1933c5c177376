//go:build e2e

package e2e

import (
	"net"
	"sync"
	"testing"
	"time"
)

// stallProxy forwards TCP connections to a target (kube-apiserver) and can
// stall, as a network partition or a dead NAT entry would: Stall freezes
// every connection open at the time for good (bytes in flight are neither
// delivered nor refused, nothing is closed), and holds new connections
// until the stall ends, then forwards them normally. A client gets past a
// stall only by timing out its requests and dialing again.
type stallProxy struct {
	ln     net.Listener
	target string

	mu         sync.Mutex
	stallUntil time.Time
	conns      map[*proxyConn]bool
	closed     bool
	stalled    int // connections frozen by Stall
	wg         sync.WaitGroup
}

// proxyConn is one forwarded connection; frozen is closed when Stall
// freezes it, dead when the proxy closes.
type proxyConn struct {
	client, server net.Conn
	frozen         chan struct{}
	dead           chan struct{}
	freezeOnce     sync.Once
}

// newStallProxy listens on a free port of 127.0.0.1 and forwards to target
// (host:port) until the test ends.
func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, conns: map[*proxyConn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr returns host:port of the proxy.
func (p *stallProxy) Addr() string { return p.ln.Addr().String() }

// Stall freezes the open connections for good and holds new ones for d.
// It returns how many connections it froze.
func (p *stallProxy) Stall(d time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stallUntil = time.Now().Add(d)
	n := 0
	for c := range p.conns {
		c.freezeOnce.Do(func() { close(c.frozen) })
		n++
	}
	p.stalled += n
	return n
}

func (p *stallProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.serve(client) })
	}
}

func (p *stallProxy) serve(client net.Conn) {
	p.mu.Lock()
	wait := time.Until(p.stallUntil)
	p.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait)
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	c := &proxyConn{client: client, server: server, frozen: make(chan struct{}), dead: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[c] = true
	p.mu.Unlock()
	var pipes sync.WaitGroup
	pipes.Go(func() { c.pipe(server, client) })
	pipes.Go(func() { c.pipe(client, server) })
	pipes.Wait()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pipe copies src to dst until either ends; once the connection is frozen
// it neither reads nor writes again until the proxy closes.
func (c *proxyConn) pipe(dst, src net.Conn) {
	defer func() {
		select {
		case <-c.frozen:
			<-c.dead
		default:
		}
		dst.Close()
		src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-c.frozen:
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *stallProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		close(c.dead)
		c.client.Close()
		c.server.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}
