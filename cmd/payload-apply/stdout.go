package main

import (
	"errors"
	"io"
	"sync"
	"syscall"
)

// guardedWriter is a command's stdout. When a write fails because the
// reader went away (EPIPE: 'payload-apply apply -o json | head' after
// head exits; main keeps SIGPIPE from killing the process), it drops
// everything written after, and calls onClose once: run ends the command
// as an interrupt does (apply stops starting objects, lets those in flight
// finish and says so on stderr), never half-way.
type guardedWriter struct {
	w       io.Writer
	onClose func()

	mu     sync.Mutex
	closed bool
}

func newGuardedWriter(w io.Writer, onClose func()) *guardedWriter {
	return &guardedWriter{w: w, onClose: onClose}
}

// Write writes p, or drops it once the reader is gone.
func (g *guardedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(p), nil
	}
	n, err := g.w.Write(p)
	if err != nil && readerGone(err) {
		g.closed = true
		g.onClose()
		return len(p), nil
	}
	return n, err
}

// Underlying returns the stream written to (to ask whether it is a
// terminal).
func (g *guardedWriter) Underlying() io.Writer { return g.w }

// readerGone reports whether a write failed because nobody reads the
// other end any more.
func readerGone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe)
}
