package main

import (
	"context"
	"flag"
	"sync"

	"github.com/spf13/pflag"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// klogFlags returns klog's flags, bound to klog's global state.
func klogFlags() *flag.FlagSet {
	gofs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gofs)
	return gofs
}

// addGlobalFlags adds the flags every command takes, anywhere on the
// command line: klog's -v and --vmodule.
func addGlobalFlags(fs *pflag.FlagSet) {
	klogFlags().VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "v", "vmodule":
			pf := pflag.PFlagFromGoFlag(f)
			if f.Name == "v" {
				pf.Usage = "log verbosity: 1 config, 2 one line per task, 4 graph decisions, exclusions and client-go's own errors, 6+ API requests"
				pf.DefValue = "0"
			} else {
				pf.DefValue = ""
			}
			fs.AddFlag(pf)
		}
	})
}

var clientErrorsOnce sync.Once

// resetClientLogging starts a run's logging: verbosity 0 until -v says
// otherwise, no headers (messages for people, not log files), and
// client-go's own error reports ("Unhandled Error": a discovery that
// failed, a watch that broke) logged at -v=4 instead of printed raw: the
// command reports what failed, with the cause, itself.
func resetClientLogging() {
	gofs := klogFlags()
	_ = gofs.Set("v", "0")
	_ = gofs.Set("vmodule", "")
	_ = gofs.Set("skip_headers", "true")
	clientErrorsOnce.Do(func() {
		utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{clientError}
	})
}

// clientError logs an error client-go could not return, at -v=4.
func clientError(ctx context.Context, err error, msg string, keysAndValues ...any) {
	logger := klog.FromContext(ctx)
	if logger.V(4).Enabled() {
		logger.V(4).Info("client-go: "+msg, append([]any{"err", err}, keysAndValues...)...)
	}
}
