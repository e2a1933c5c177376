package main

import (
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/redact"
)

// The secrets rule (docs/reliability.md, "Security"): bearer tokens,
// passwords, client keys and the values of Secret data and stringData never
// appear in what the tool prints (stdout, stderr, -o json events, logs at
// any -v, errors, diffs); 'render' of a payload Secret prints the payload,
// which is the payload's own content, not a leak.
//
// Every run gets a redact.Values on its context. The commands that talk to
// a cluster add the credentials of the kubeconfig (restConfig) and the
// values of the plan's Secrets (addPlanSecrets); stdout and stderr mask
// them, and a klog filter masks them, and every Secret's data in logged
// request and response bodies, in everything klog prints (client-go logs
// through klog, with or without the command's context).

type secretsKey struct{}

// logSecrets are the values the klog filter masks: the current run's.
var (
	logSecrets   atomic.Pointer[redact.Values]
	logFilterSet sync.Once
)

// withSecrets returns ctx carrying v, and makes klog mask v's values.
func withSecrets(ctx context.Context, v *redact.Values) context.Context {
	logSecrets.Store(v)
	logFilterSet.Do(func() {
		klog.SetLogFilter(redact.LogFilter{Values: logSecrets.Load})
	})
	return context.WithValue(ctx, secretsKey{}, v)
}

// secretsOf returns the values of ctx; a new empty set when there is none.
func secretsOf(ctx context.Context) *redact.Values {
	if v, ok := ctx.Value(secretsKey{}).(*redact.Values); ok {
		return v
	}
	return &redact.Values{}
}

// redactStreams wraps the output streams so that they mask v's values.
func redactStreams(s IOStreams, v *redact.Values) IOStreams {
	s.Out = redact.Writer(s.Out, v)
	s.ErrOut = redact.Writer(s.ErrOut, v)
	return s
}

// osFile returns the file under w (through redact.Writer), to ask whether
// it is a terminal.
func osFile(w io.Writer) (*os.File, bool) {
	for {
		switch t := w.(type) {
		case *os.File:
			return t, true
		case interface{ Underlying() io.Writer }:
			w = t.Underlying()
		default:
			return nil, false
		}
	}
}
