package operator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// check is one named health or readiness check.
type check struct {
	name string
	run  func(*http.Request) error
}

// Handler serves the replica's probes and metrics:
//
//   - /healthz: the process answers, and a leader has renewed its Lease
//     within the lease duration (client-go's leader election health
//     check): a leader stuck without its Lease is restarted by the kubelet;
//   - /readyz: the payload was planned (New) and the Lease's API server
//     answered within the lease duration: a replica that cannot reach its
//     Lease can neither lead nor take over;
//   - /metrics: the Prometheus metrics (see the package comment).
//
// /healthz and /readyz answer 200 "ok", or 500 naming the failed checks;
// with ?verbose every check is listed, as kube-apiserver lists its own.
func (o *Operator) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", probe([]check{
		{"ping", func(*http.Request) error { return nil }},
		{"leader-election", o.health.Check},
	}))
	mux.Handle("/readyz", probe([]check{
		{"payload", func(*http.Request) error { return nil }},
		{"lease", func(*http.Request) error { return o.leaseReady(time.Now()) }},
	}))
	return mux
}

// leaseReady reports whether the Lease's API server answered within the
// lease duration.
func (o *Operator) leaseReady(now time.Time) error {
	last, err := o.lease.get()
	switch {
	case last.IsZero() && err != nil:
		return fmt.Errorf("the lease's API server has not answered: %w", err)
	case last.IsZero():
		return errors.New("the lease's API server has not answered yet")
	case now.Sub(last) > o.opts.LeaseDuration:
		return fmt.Errorf("the lease's API server last answered %s ago: %v", now.Sub(last).Round(time.Second), err)
	}
	return nil
}

// probe serves checks.
func probe(checks []check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		failed := false
		for _, c := range checks {
			if err := c.run(r); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: %v\n", c.name, err)
			} else {
				fmt.Fprintf(&b, "[+]%s ok\n", c.name)
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, verbose := r.URL.Query()["verbose"]
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%s%s check failed\n", b.String(), strings.TrimPrefix(r.URL.Path, "/"))
			return
		}
		if verbose {
			fmt.Fprintf(w, "%s%s check passed\n", b.String(), strings.TrimPrefix(r.URL.Path, "/"))
			return
		}
		fmt.Fprint(w, "ok")
	})
}

// Serve serves Handler on l until ctx ends, then shuts the server down
// (requests in flight get a few seconds). It returns nil after a shutdown,
// else the server's error.
func (o *Operator) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: o.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("operator: metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-done
	if err != nil {
		return fmt.Errorf("operator: metrics server: shutdown: %w", err)
	}
	return nil
}
