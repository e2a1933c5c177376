package redact

import (
	"fmt"
	"io"

	"github.com/go-logr/logr"
)

// Logger returns a logger that masks secrets before l sees them: every
// string value, error and Stringer is masked by v; a value logged under the
// key "body" (client-go logs request and response bodies so from -v=8) is
// passed through Body first, which masks Secret data that v does not know.
func Logger(l logr.Logger, v *Values) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l
	}
	return logr.New(&logSink{inner: sink, values: v})
}

type logSink struct {
	inner  logr.LogSink
	values *Values
}

var (
	_ logr.LogSink          = &logSink{}
	_ logr.CallDepthLogSink = &logSink{}
)

func (s *logSink) Init(info logr.RuntimeInfo) {
	info.CallDepth++
	s.inner.Init(info)
}

func (s *logSink) Enabled(level int) bool { return s.inner.Enabled(level) }

func (s *logSink) Info(level int, msg string, kv ...any) {
	s.inner.Info(level, s.values.String(msg), s.mask(kv)...)
}

func (s *logSink) Error(err error, msg string, kv ...any) {
	s.inner.Error(Wrap(err, s.values), s.values.String(msg), s.mask(kv)...)
}

func (s *logSink) WithValues(kv ...any) logr.LogSink {
	return &logSink{inner: s.inner.WithValues(s.mask(kv)...), values: s.values}
}

func (s *logSink) WithName(name string) logr.LogSink {
	return &logSink{inner: s.inner.WithName(name), values: s.values}
}

func (s *logSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.inner.(logr.CallDepthLogSink); ok {
		return &logSink{inner: cd.WithCallDepth(depth), values: s.values}
	}
	return s
}

func (s *logSink) mask(kv []any) []any { return maskKV(kv, s.values) }

// maskKV returns a copy of the key/value list with values masked.
func maskKV(kv []any, v *Values) []any {
	out := make([]any, len(kv))
	copy(out, kv)
	for i := 1; i < len(out); i += 2 {
		key, _ := out[i-1].(string)
		if key == "body" {
			switch val := out[i].(type) {
			case string:
				out[i] = Body(val, v)
				continue
			case []byte:
				out[i] = Body(string(val), v)
				continue
			}
		}
		out[i] = maskValue(out[i], v)
	}
	return out
}

// maskValue returns val with v's values masked: as it is when it cannot
// hold text, else as a string.
func maskValue(val any, v *Values) any {
	switch t := val.(type) {
	case nil, bool, int, int32, int64, uint, uint32, uint64, float32, float64:
		return val
	case string:
		return v.String(t)
	case []byte:
		return v.String(string(t))
	case error:
		return v.String(t.Error())
	case fmt.Stringer:
		return v.String(t.String())
	}
	// Structs, maps and slices: print them as klog would, masked.
	if v.Len() > 0 {
		return v.String(fmt.Sprintf("%+v", val))
	}
	return val
}

// LogFilter masks secrets in every klog call when installed with
// klog.SetLogFilter: the arguments of Info/Infof, the message and key/value
// pairs of InfoS and ErrorS, including those of loggers that klog.FromContext
// and klog.Background return (client-go's request and response logs).
// Values logged under "body" go through Body. klog does not filter the
// error of ErrorS. Values returns the set to mask; nil masks no values but
// Body still masks Secret data.
type LogFilter struct {
	Values func() *Values
}

func (f LogFilter) values() *Values {
	if f.Values == nil {
		return nil
	}
	return f.Values()
}

// Filter masks the arguments of klog.Info and friends.
func (f LogFilter) Filter(args []any) []any {
	v := f.values()
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = maskValue(a, v)
	}
	return out
}

// FilterF masks the format and arguments of klog.Infof and friends.
func (f LogFilter) FilterF(format string, args []any) (string, []any) {
	return f.values().String(format), f.Filter(args)
}

// FilterS masks the message and values of klog.InfoS and ErrorS.
func (f LogFilter) FilterS(msg string, kv []any) (string, []any) {
	v := f.values()
	return v.String(msg), maskKV(kv, v)
}

// Writer returns a writer that masks v's values in each Write before
// passing it to w. A secret split across two Writes is not masked: use it
// on writers that get whole lines or messages (the tool's stdout and
// stderr).
func Writer(w io.Writer, v *Values) io.Writer {
	return &writer{w: w, values: v}
}

type writer struct {
	w      io.Writer
	values *Values
}

// Underlying returns the writer that Writer wraps, e.g. to ask whether it
// is a terminal.
func (w *writer) Underlying() io.Writer { return w.w }

func (w *writer) Write(p []byte) (int, error) {
	if w.values.Len() == 0 {
		return w.w.Write(p)
	}
	if _, err := io.WriteString(w.w, w.values.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
