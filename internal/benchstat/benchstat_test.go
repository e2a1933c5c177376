package benchstat

import (
	"strings"
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

func TestOrder(t *testing.T) {
	names := []string{"cli", "kubectl", "plan"}
	if got := Order(names, 0); strings.Join(got, " ") != "cli kubectl plan" {
		t.Errorf("round 0: %v", got)
	}
	if got := Order(names, 3); strings.Join(got, " ") != "plan kubectl cli" {
		t.Errorf("round 3: %v", got)
	}
	if got := Order([]string{"b", "c", "a"}, 1); strings.Join(got, " ") != "c b a" {
		t.Errorf("round 1, unsorted: %v, want reverse lexical order", got)
	}
	if strings.Join(names, " ") != "cli kubectl plan" {
		t.Errorf("Order changed its input to %v", names)
	}
}

func TestRow(t *testing.T) {
	got := Header + Row("cli", []time.Duration{3 * time.Second, 1 * time.Second, 2 * time.Second})
	want := "| contender | median | runs (s) |\n| --- | --- | --- |\n| cli | 2.00 s | 3.00 1.00 2.00 |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
