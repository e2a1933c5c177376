package manifest

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func TestQuoteName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"release-manifests/0000_50_x_01_a.yaml", "release-manifests/0000_50_x_01_a.yaml"},
		{"with space.yaml", "with space.yaml"},
		{"ünïcödé.yaml", "ünïcödé.yaml"},
		{"a\nb.yaml", `"a\nb.yaml"`},
		{"tab\there", `"tab\there"`},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{"rtl\u202egnp.yaml", `"rtl\u202egnp.yaml"`},
		{`quote"d`, `"quote\"d"`},
		{`back\slash`, `"back\\slash"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"", ""},
	}
	for _, tc := range tests {
		if got := QuoteName(tc.in); got != tc.want {
			t.Errorf("QuoteName(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain message: x.yaml#0", "plain message: x.yaml#0"},
		{"tab\tkept", "tab\tkept"},
		{"new\nline", `new\nline`},
		{"\x1b]0;title\x07", `\x1b]0;title\a`},
		{"rtl\u202eorder", `rtl\u202eorder`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"dél\u0085", `dél\u0085`},
	}
	for _, tc := range tests {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestQuoteNameProperties: for every name of a systematic set (each rune
// of the Basic Multilingual Plane, each single byte, alone and inside a
// file name, and the hand-picked cases), QuoteName gives one line that a
// terminal shows as it is (no control character, no bidirectional
// control, valid UTF-8, no tab), the name itself when it needs no
// quoting, and otherwise a quoted form that unquotes back to the name;
// Printable gives one such line (tabs aside) too. (A property test, not a
// fuzz target: the input space is small enough to walk, and make fuzz-ci
// gives each fuzz target 8 s.)
func TestQuoteNameProperties(t *testing.T) {
	names := []string{"0000_50_x_01_a.yaml", "a\nb", "tab\t", "\x1b[31m", "\u202e", `"`, `\`, "\xff", "ü", "\u0085", "\x1b]0;owned\x07.yaml", "a\r\nb", "\U0001F600.yaml"}
	for r := rune(0); r < 0x10000; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		names = append(names, string(r), "0000_50_x_01_"+string(r)+".yaml")
	}
	for b := 0; b < 256; b++ {
		names = append(names, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for _, name := range names {
		q := QuoteName(name)
		for _, r := range q {
			if unicode.IsControl(r) || isBidi(r) || r == '\uFFFD' && !strings.ContainsRune(name, '\uFFFD') {
				t.Fatalf("QuoteName(%q) = %q holds %U", name, q, r)
			}
		}
		if q != name {
			u, err := strconv.Unquote(q)
			if err != nil || u != name {
				t.Fatalf("QuoteName(%q) = %s, which unquotes to %q (%v)", name, q, u, err)
			}
		} else if strings.HasPrefix(q, `"`) {
			t.Fatalf("QuoteName(%q) left bare starts with a quote", name)
		}
		p := Printable(name)
		for _, r := range p {
			if (r != '\t' && unicode.IsControl(r)) || isBidi(r) {
				t.Fatalf("Printable(%q) = %q holds %U", name, p, r)
			}
		}
	}
}
