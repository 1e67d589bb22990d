package clip

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Runes is the number of runes of an input Quote keeps.
const Runes = 80

// MaxLine is the length in bytes to which a command-line tool cuts any
// message line it prints (Line), a safety net behind Quote.
const MaxLine = 4096

// Quote returns s as a Go string literal (control characters escaped, so
// that no input can break a line). An s of more than Runes runes keeps
// only its first Runes runes and says how long it was:
// "abc…"…(52428800 bytes).
func Quote(s string) string {
	if utf8.RuneCountInString(s) <= Runes {
		return strconv.Quote(s)
	}
	return strconv.Quote(prefix(s, Runes)) + fmt.Sprintf("…(%d bytes)", len(s))
}

// Value returns s as is when it is short (at most Runes runes) and
// printable, for messages that echo a value unquoted (got 1.5); otherwise
// Quote(s).
func Value(s string) string {
	if utf8.RuneCountInString(s) <= Runes && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return s
	}
	return Quote(s)
}

// Strings is Quote applied to every element, in the form %q gives a
// slice (["a" "b"]), with at most Runes elements shown.
func Strings(ss []string) string {
	b := []byte{'['}
	for i, s := range ss {
		if i == Runes {
			b = fmt.Appendf(b, " …(%d elements)", len(ss))
			break
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, Quote(s)...)
	}
	return string(append(b, ']'))
}

// Line returns s cut to at most max bytes (at a rune boundary), saying how
// many bytes were left out; a shorter s is returned as is.
func Line(s string, max int) string {
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf("…(%d more bytes)", len(s))
	keep := max - len(note)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf("…(%d more bytes)", len(s)-keep)
}

// prefix returns the first n runes of s.
func prefix(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i]
}
