package resourceapply

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestHealth(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &health{now: func() time.Time { return now }}
	req, _ := http.NewRequest("GET", "https://x/api", nil)
	ctx := withOutageLimit(context.Background(), h, 10*time.Second)
	refused := errors.New("connection refused")
	steps := []struct {
		name    string
		advance time.Duration
		resp    *http.Response
		err     error
		outage  time.Duration
		exceed  bool
	}{
		{name: "answers", resp: &http.Response{StatusCode: 200}},
		{name: "404 is an answer", resp: &http.Response{StatusCode: 404}},
		{name: "refused", advance: time.Second, err: refused},
		{name: "still refused", advance: 5 * time.Second, err: refused, outage: 5 * time.Second},
		{name: "503", advance: 6 * time.Second, resp: &http.Response{StatusCode: 503}, outage: 11 * time.Second, exceed: true},
		{name: "back", advance: time.Second, resp: &http.Response{StatusCode: 201}},
		{name: "500 then", advance: time.Second, resp: &http.Response{StatusCode: 500}},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		h.observe(req, s.resp, s.err)
		if got := h.outage(); got != s.outage {
			t.Errorf("%s: outage %s, want %s", s.name, got, s.outage)
		}
		if got := outageExceeded(ctx) != nil; got != s.exceed {
			t.Errorf("%s: exceeded %v, want %v", s.name, got, s.exceed)
		}
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	h.observe(req.WithContext(canceled), nil, context.Canceled)
	if h.outage() != 0 {
		t.Errorf("a request the caller canceled counted as a failure")
	}
	if Classify(&OutageError{For: time.Minute, Limit: time.Second}) != ReasonUnavailable {
		t.Errorf("OutageError is not ReasonUnavailable")
	}
}
