package nodetuning

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"
)

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: "0", want: "0"},
		{in: "0-3,8,10-11", want: "0-3,8,10-11"},
		{in: "3,1-2,2", want: "1-3"},
		{in: "8191", want: "8191"},
		{in: "7-7", want: "7"},
		{in: "8192", err: `"8192": CPU 8192 is above the highest CPU id 8191`},
		{in: "2-2000000000", err: `"2-2000000000": CPU 2000000000 is above the highest CPU id 8191`},
		{in: "0-99999999999999999999999", err: "CPU 99999999999999999999999 is above the highest CPU id 8191"},
		{in: "3-1", err: `"3-1": range from 3 down to 1`},
		{in: "1,", err: `"": a CPU id is missing`},
		{in: "-1", err: `"-1": a CPU id is missing`},
		{in: "1-2-3", err: `"1-2-3": "2-3" is not a CPU id`},
		{in: "+1", err: `"+1" is not a CPU id`},
		{in: "0x1", err: `"0x1" is not a CPU id`},
		{in: " 1", err: `" 1" is not a CPU id`},
		{in: strings.Repeat("1,", 40000), err: "characters, more than 65536"},
	}
	for _, tc := range cases {
		got, err := ParseCPUList(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%.40q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got.String(), err, tc.want)
		}
	}
}

// TestParseCPUListBounded: the worst list the length bound allows (every
// part the whole range) parses in bounded time and memory.
func TestParseCPUListBounded(t *testing.T) {
	worst := strings.TrimSuffix(strings.Repeat("0-8191,", maxCPUListLen/len("0-8191,")), ",")
	start := time.Now()
	s, err := ParseCPUList(worst)
	if err != nil || s.Size() != MaxCPUID+1 {
		t.Fatalf("%d CPUs, %v", s.Size(), err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestCPUMasks(t *testing.T) {
	cases := []struct {
		cpus, mask, maskList string
	}{
		{"", "0", "00000000"},
		{"0", "1", "00000001"},
		{"0-1,32-33", "300000003", "00000003,00000003"},
		{"3,35", "800000008", "00000008,00000008"},
		{"32", "100000000", "00000001,00000000"},
		{"64", "10000000000000000", "00000001,00000000,00000000"},
	}
	for _, tc := range cases {
		s, err := cpuset.Parse(tc.cpus)
		if err != nil {
			t.Fatal(err)
		}
		if got := cpuMask(s); got != tc.mask {
			t.Errorf("cpuMask(%s) = %s, want %s", tc.cpus, got, tc.mask)
		}
		if got := cpuMaskList(s); got != tc.maskList {
			t.Errorf("cpuMaskList(%s) = %s, want %s", tc.cpus, got, tc.maskList)
		}
	}
}

func TestParseHugePageSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  string
	}{
		{in: "64k", want: 64}, {in: "2M", want: 2048}, {in: "32M", want: 32768}, {in: "512M", want: 524288},
		{in: "1G", want: 1048576}, {in: "16G", want: 16777216}, {in: "1Gi", want: 1048576}, {in: "2MB", want: 2048},
		{in: "1T", want: 1 << 30},
		{in: "2", err: `unit "": want k, M, G or T`},
		{in: "M", err: "want a number and a unit"},
		{in: "0M", err: "a huge page has a size"},
		{in: "1.5G", err: `unit ".5G"`},
		{in: "9999999999G", err: "more than 9 digits"},
		{in: "2P", err: `unit "P"`},
	}
	for _, tc := range cases {
		got, err := ParseHugePageSize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %d, err %v, want %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestReservedMemory(t *testing.T) {
	q, err := ReservedMemory("500Mi", "1Gi", "100Mi")
	if err != nil || q.String() != "1624Mi" {
		t.Errorf("%s, %v", q.String(), err)
	}
	if _, err := ReservedMemory("500Mi", "lots", "100Mi"); err == nil || !strings.Contains(err.Error(), `systemReserved.memory "lots"`) {
		t.Errorf("err %v", err)
	}
}

// FuzzParseCPUList: any text either parses to CPUs within MaxCPUID, whose
// list form parses back to the same set, or is an error; never a panic or
// an unbounded expansion.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"", "0", "0-3,8", "2-2000000000", "8191", "3-1", "1,,2", "0-8191,0-8191", "-", "1-", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseCPUList(s)
		if err != nil {
			return
		}
		list := set.List()
		if len(list) > 0 && (list[0] < 0 || list[len(list)-1] > MaxCPUID) {
			t.Fatalf("%q: CPUs %d..%d out of bounds", s, list[0], list[len(list)-1])
		}
		again, err := ParseCPUList(set.String())
		if err != nil || !again.Equals(set) {
			t.Fatalf("%q: %q does not parse back: %v", s, set.String(), err)
		}
		if _, err := ParseCPUList(cpuList(set)); err != nil {
			t.Fatalf("%q: %q does not parse back: %v", s, cpuList(set), err)
		}
	})
}

// FuzzParseHugePageSize: a size parses to a positive number of kB that
// fits the sizes' own range, or is an error.
func FuzzParseHugePageSize(f *testing.F) {
	for _, s := range []string{"2M", "1G", "64k", "16G", "1Gi", "2MB", "0M", "9999999999G", "1.5G", "", "G", "4294967297M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kb, err := ParseHugePageSize(s)
		if err != nil {
			return
		}
		if kb <= 0 || kb > 999999999<<30 {
			t.Fatalf("%q: %d kB", s, kb)
		}
	})
}

// FuzzReservedMemory: three quantities add up (the sum is at least each
// non-negative one) or one is reported as not a quantity.
func FuzzReservedMemory(f *testing.F) {
	for _, s := range [][3]string{{"500Mi", "500Mi", "100Mi"}, {"1Gi", "500m", "1e3"}, {"", "1", "2"}, {"9223372036854775807", "1", "1"}, {"1E18", "1E18", "1E18"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if len(a)+len(b)+len(c) > 256 {
			return
		}
		sum, err := ReservedMemory(a, b, c)
		if err != nil {
			return
		}
		for _, v := range []string{a, b, c} {
			q := resource.MustParse(v)
			if q.Sign() >= 0 && sum.Cmp(q) < 0 && allNonNegative(a, b, c) {
				t.Fatalf("%q+%q+%q = %s, less than %s", a, b, c, sum.String(), v)
			}
		}
		if again, err := resource.ParseQuantity(sum.String()); err != nil || again.Cmp(sum) != 0 {
			t.Fatalf("%q+%q+%q = %s, which does not parse back: %v", a, b, c, sum.String(), err)
		}
	})
}

func allNonNegative(vs ...string) bool {
	for _, v := range vs {
		if q := resource.MustParse(v); q.Sign() < 0 {
			return false
		}
	}
	return true
}
