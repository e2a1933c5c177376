package quantity

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string // the canonical form; "" for an error
		wantErr string
	}{
		{in: "500Mi", want: "500Mi"},
		{in: "100m", want: "100m"},
		{in: "1e3", want: "1e3"},
		{in: "1n", want: "1n"},
		{in: "8Ei", want: "9223372036854775807"}, // resource.ParseQuantity clamps to int64
		{in: "9223372036854775807", want: "9223372036854775807"},
		{in: "1E", want: "1E"},
		{in: "-1Gi", want: "-1Gi"},
		{in: "E00000000000000000000000666666660", wantErr: "out of range"},
		{in: "1e999999999", wantErr: "out of range"},
		{in: "1e-999999999", wantErr: "out of range"},
		{in: "0e999999999", wantErr: "out of range"},
		{in: "1e19", wantErr: "out of range"},
		{in: strings.Repeat("1", MaxLen+1), wantErr: "longer than 64 bytes"},
		{in: "ten", wantErr: "quantities must match"},
		{in: "", wantErr: "quantities must match"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			q, err := Parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) = %s, %v; want an error with %q", tc.in, q.String(), err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got := q.String(); got != tc.want {
				t.Errorf("Parse(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzParse: whatever Parse accepts can be added, compared and printed
// quickly, and its printed form parses back to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"500Mi", "1e3", "100m", "1E", "E00000000000000000000000666666660", "1e-9", "0.000000001", "8Ei", "-1e18", "123456789012345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		q, err := Parse(s)
		if err != nil {
			return
		}
		sum := q.DeepCopy()
		sum.Add(q)
		sum.Add(resource.MustParse("1n"))
		_ = sum.Cmp(q)
		_ = q.CmpInt64(1 << 62)
		printed := q.String()
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%q took %v", s, d)
		}
		back, err := resource.ParseQuantity(printed)
		if err != nil || back.Cmp(q) != 0 {
			t.Fatalf("%q prints as %q, which parses back as %s, %v", s, printed, back.String(), err)
		}
	})
}
