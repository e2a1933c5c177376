package operator

import (
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestValidate(t *testing.T) {
	valid := func() Options {
		o := DefaultOptions()
		o.Cluster, o.LeaseNamespace, o.Identity, o.Image = &rest.Config{}, "ns", "a", "embedded://payload-apply"
		return o
	}
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{name: "defaults", change: func(*Options) {}},
		{name: "no cluster", change: func(o *Options) { o.Cluster = nil }, want: "client configuration is required"},
		{name: "no lease namespace", change: func(o *Options) { o.LeaseNamespace = "" }, want: "lease's namespace and name"},
		{name: "no identity", change: func(o *Options) { o.Identity = "" }, want: "identity is required"},
		{name: "no release image", change: func(o *Options) { o.Image = "" }, want: "release image of the operator's payload is required"},
		{name: "renew deadline not below the lease", change: func(o *Options) { o.RenewDeadline = o.LeaseDuration }, want: "want less than the lease duration"},
		{name: "retry period too long", change: func(o *Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 6*time.Second, 4*time.Second, 4*time.Second
		}, want: "1.2 times the retry period"},
		{name: "zero resync", change: func(o *Options) { o.Resync = 0 }, want: "resync (--resync) 0s: want a positive duration"},
		{name: "a resync of a millisecond", change: func(o *Options) { o.Resync = time.Millisecond }, want: "resync (--resync) 1ms: want at least 1s"},
		{name: "a resync of a second", change: func(o *Options) { o.Resync = time.Second }},
		{name: "negative pass timeout", change: func(o *Options) { o.PassTimeout = -time.Second }, want: "pass timeout (--pass-timeout) -1s"},
		{name: "negative jitter", change: func(o *Options) { o.Jitter = -1 }, want: "jitter -1"},
		{name: "no parallelism", change: func(o *Options) { o.ReconcileParallelism = 0 }, want: "want at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid()
			tc.change(&o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestInterval(t *testing.T) {
	o := &Operator{opts: DefaultOptions()}
	o.opts.Resync, o.opts.Jitter = 16*time.Second, 0.2
	for _, tc := range []struct {
		failures int
		base     time.Duration
	}{
		{0, 16 * time.Second}, {1, 2 * time.Second}, {2, 4 * time.Second}, {3, 8 * time.Second}, {4, 16 * time.Second}, {9, 16 * time.Second},
	} {
		for range 20 {
			if d := o.interval(tc.failures); d < tc.base || d > tc.base+tc.base/5 {
				t.Errorf("interval after %d failures: %s, want %s plus at most a fifth", tc.failures, d, tc.base)
			}
		}
	}
}
