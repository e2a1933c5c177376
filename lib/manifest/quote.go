package manifest

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuoteName returns a file name (or any name from the input: a kind, a
// namespace, an object's name) fit to print on one line of a terminal or
// of a tab-separated record: the name as it is when every character is a
// printable one other than a double quote or a backslash, else the name in
// double quotes with Go (and C) escapes, as git quotes unusual paths:
// "a\nb.yaml", "x\tz", "\x1b[31mred". Quoted names never contain a
// newline, a tab, an escape sequence or a bidirectional control, and a
// name printed bare never starts with a double quote, so the two cannot be
// confused.
func QuoteName(s string) string {
	if needsQuote(s) {
		return strconv.Quote(s)
	}
	return s
}

func needsQuote(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == '"' || r == '\\' || !unicode.IsPrint(r) || isBidi(r) {
			return true
		}
	}
	return !utf8.ValidString(s)
}

// isBidi reports the Unicode bidirectional formatting characters, which
// reorder what a terminal shows ("Trojan Source"). unicode.IsPrint already
// excludes them (category Cf); this is belt and braces.
func isBidi(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

// Printable returns a line of text (a message, which may quote names and
// values from the input) with every control character but the tab, and
// every bidirectional control and invalid byte, written as an escape
// (\n, \x1b, \u202e), so that it shows as one line and cannot move the
// cursor, change colours or reorder what follows.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (r != '\t' && unicode.IsControl(r)) || isBidi(r) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case r == '\t' || (!unicode.IsControl(r) && !isBidi(r)):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}
