package resourceapply

import (
	"context"
	"net/http"
	"testing"
	"time"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestSpreadRetryAfter(t *testing.T) {
	cases := []struct {
		name       string
		code       int
		retryAfter string
		want       time.Duration // -1: no pause
	}{
		{"429 with Retry-After", 429, "1", 500 * time.Millisecond},
		{"503 with Retry-After", 503, "2", time.Second},
		{"long Retry-After is spread over 5s at most", 429, "60", maxRetryAfterSpread / 2},
		{"429 without Retry-After", 429, "", -1},
		{"Retry-After as a date", 429, "Wed, 21 Oct 2015 07:28:00 GMT", -1},
		{"200", 200, "1", -1},
		{"500 with Retry-After", 500, "1", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			paused := time.Duration(-1)
			s := &spreadRetryAfter{
				rt: roundTripFunc(func(*http.Request) (*http.Response, error) {
					h := http.Header{}
					if tc.retryAfter != "" {
						h.Set("Retry-After", tc.retryAfter)
					}
					return &http.Response{StatusCode: tc.code, Header: h}, nil
				}),
				fraction: func() float64 { return 0.5 },
				wait:     func(_ context.Context, d time.Duration) { paused = d },
			}
			req, _ := http.NewRequest(http.MethodGet, "https://example.invalid/api", nil)
			resp, err := s.RoundTrip(req)
			if err != nil || resp.StatusCode != tc.code {
				t.Fatalf("RoundTrip = %v, %v", resp, err)
			}
			if paused != tc.want {
				t.Errorf("paused %s, want %s", paused, tc.want)
			}
		})
	}
}

// TestSpreadRetryAfterEndsWithTheRequest: the pause ends when the request's
// context does.
func TestSpreadRetryAfterEndsWithTheRequest(t *testing.T) {
	s := newSpreadRetryAfter(roundTripFunc(func(*http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("Retry-After", "5")
		return &http.Response{StatusCode: 429, Header: h}, nil
	})).(*spreadRetryAfter)
	s.fraction = func() float64 { return 0.99 }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://example.invalid/api", nil)
	start := time.Now()
	if _, err := s.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("paused %s after the request's context ended", d)
	}
}
