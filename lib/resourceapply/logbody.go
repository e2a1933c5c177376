package resourceapply

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// bodyLogLevel is the verbosity from which client-go logs request and
// response bodies (rest.Request, through the context's logger).
const bodyLogLevel = 8

var secretGK = schema.GroupKind{Kind: "Secret"}

// withoutBodyLogs returns ctx with a logger that stops below bodyLogLevel
// when obj is a Secret, so that no verbosity (-v=10 included) prints its
// data as the body of a request or a response. Requests are still logged
// at the levels below (URL, status, timing). Other objects keep ctx as it
// is.
func withoutBodyLogs(ctx context.Context, obj *unstructured.Unstructured) context.Context {
	if obj.GroupVersionKind().GroupKind() != secretGK {
		return ctx
	}
	l := klog.FromContext(ctx)
	if l.GetSink() == nil {
		return ctx
	}
	return klog.NewContext(ctx, logr.New(cappedSink{LogSink: l.GetSink(), below: bodyLogLevel}))
}

// cappedSink is a LogSink that is disabled from verbosity below on.
type cappedSink struct {
	logr.LogSink
	below int
}

// Init does nothing: the wrapped sink was initialized by its own logger,
// and initializing it again would change it for every user.
func (s cappedSink) Init(logr.RuntimeInfo) {}

func (s cappedSink) Enabled(level int) bool {
	return level < s.below && s.LogSink.Enabled(level)
}

func (s cappedSink) WithValues(kv ...any) logr.LogSink {
	return cappedSink{LogSink: s.LogSink.WithValues(kv...), below: s.below}
}

func (s cappedSink) WithName(name string) logr.LogSink {
	return cappedSink{LogSink: s.LogSink.WithName(name), below: s.below}
}
