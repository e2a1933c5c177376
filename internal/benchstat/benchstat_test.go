package benchstat

import (
	"errors"
	"fmt"
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

func TestRounds(t *testing.T) {
	var ran []string
	var logged int
	times, err := Rounds("t", 2, []string{"a", "b", "own"}, func(r int, c string) (time.Duration, error) {
		ran = append(ran, fmt.Sprint(r, c))
		if c == "own" {
			return 0, nil
		}
		return time.Duration(r+1) * time.Second, nil
	}, func(string, ...any) { logged++ })
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ran, " "); got != "0a 0b 0own 1own 1b 1a" {
		t.Errorf("runs %s", got)
	}
	if len(times["a"]) != 2 || times["a"][1] != 2*time.Second || len(times["own"]) != 0 || logged != 4 {
		t.Errorf("times %v, %d logged", times, logged)
	}
	_, err = Rounds("t", 3, []string{"a"}, func(r int, c string) (time.Duration, error) {
		if r == 1 {
			return 0, errors.New("boom")
		}
		return time.Second, nil
	}, func(string, ...any) {})
	if err == nil || err.Error() != "round 2, a: boom" {
		t.Errorf("err = %v", err)
	}
}
