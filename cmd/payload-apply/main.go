// Command payload-apply loads, selects, renders, validates and applies
// OpenShift release payloads. Run `payload-apply help` for the commands.
//
// May import: clustersync, components/..., lib/..., operator/..., payload,
// plan, profiles, releaseinfo, updategraph, upgrade.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"k8s.io/klog/v2"
)

// gcPercent is the garbage collector's target unless GOGC says otherwise.
// A payload-apply process parses a whole payload into objects that live
// until it exits (twice the payload's size on disk) while parsing makes ten
// times as much short-lived garbage; Go's default of 100 lets the heap grow
// to twice what is live before collecting. At 50 the peak memory of
// `render --list` over ten releases falls by a quarter (3.6 to 2.7 times
// the payload's bytes) for about 8% more CPU (docs/benchmarks.md).
const gcPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	// A write to a stdout whose reader went away fails with EPIPE instead
	// of killing the process half-way (guardedWriter ends the run cleanly).
	// Notify, not Ignore: an ignored SIGPIPE would be inherited by the
	// processes started.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	stopProfile := startProfile()
	ctx, stop := signalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	klog.Flush()
	stopProfile()
	os.Exit(code)
}

// signalError is the cause of main's context ending: the signal.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "interrupted by " + e.sig.String() }

// signalContext is signal.NotifyContext that records which signal ended
// the context (context.Cause is a *signalError), so that SIGTERM can be
// told from SIGINT. Signals after the first are caught too (the process
// is not killed by them); stop unregisters.
func signalContext(parent context.Context, sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			cancel(&signalError{sig: s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// terminated reports whether SIGTERM ended ctx (main's context, or one
// made from it).
func terminated(ctx context.Context) bool {
	var se *signalError
	return errors.As(context.Cause(ctx), &se) && se.sig == syscall.SIGTERM
}
