package benchstat

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3}, 3},
		{"odd, unsorted", []float64{5, 1, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 2, 10}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.in...)
			if got := Median(in); got != tc.want {
				t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatalf("Median changed its input to %v", in)
				}
			}
		})
	}
	if got := Median([]time.Duration{3 * time.Second, time.Second}); got != 2*time.Second {
		t.Errorf("durations: %v, want 2s", got)
	}
}

func TestSeconds(t *testing.T) {
	got := Seconds([]time.Duration{1234 * time.Millisecond, 5 * time.Millisecond, 12 * time.Second})
	if want := "1.23 0.01 12.00"; got != want {
		t.Errorf("Seconds = %q, want %q", got, want)
	}
	if got := Seconds(nil); got != "" {
		t.Errorf("Seconds(nil) = %q, want empty", got)
	}
}
