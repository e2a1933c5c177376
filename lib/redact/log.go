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

// mask returns a copy of the key/value list with values masked.
func (s *logSink) mask(kv []any) []any {
	out := make([]any, len(kv))
	copy(out, kv)
	for i := 1; i < len(out); i += 2 {
		key, _ := out[i-1].(string)
		switch val := out[i].(type) {
		case string:
			if key == "body" {
				out[i] = Body(val, s.values)
			} else {
				out[i] = s.values.String(val)
			}
		case []byte:
			if key == "body" {
				out[i] = Body(string(val), s.values)
			} else {
				out[i] = s.values.String(string(val))
			}
		case error:
			out[i] = s.values.String(val.Error())
		case fmt.Stringer:
			out[i] = s.values.String(val.String())
		case nil, bool, int, int32, int64, uint, uint32, uint64, float32, float64:
		default:
			// Structs, maps and slices: print them as klog would, masked.
			if s.values.Len() > 0 {
				out[i] = s.values.String(fmt.Sprintf("%+v", val))
			}
		}
	}
	return out
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
