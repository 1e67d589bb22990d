package clip

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Short inputs are quoted exactly as strconv.Quote does; long ones keep
// their first Runes runes (whole runes, even multi-byte ones) and state
// their length in bytes; control characters never survive unescaped.
func TestQuote(t *testing.T) {
	for _, s := range []string{"", "abc", "a\nb\"c", strings.Repeat("x", Runes)} {
		if got := Quote(s); got != strconv.Quote(s) {
			t.Errorf("Quote(%q) = %s", s, got)
		}
	}
	long := strings.Repeat("é", 300) // 600 bytes
	got := Quote(long)
	want := strconv.Quote(strings.Repeat("é", Runes)) + "…(600 bytes)"
	if got != want {
		t.Errorf("Quote(300 × é) = %s, want %s", got, want)
	}
	huge := strings.Repeat("1\n", 25<<20) // 50 MiB
	got = Quote(huge)
	if len(got) > 300 || strings.Contains(got, "\n") || !strings.HasSuffix(got, "…(52428800 bytes)") {
		t.Errorf("Quote(50 MiB) = %s (%d bytes)", got, len(got))
	}
	if s := Strings([]string{"a", long}); s != `["a" `+want+`]` {
		t.Errorf("Strings = %s", s)
	}
	many := make([]string, 1000)
	if s := Strings(many); len(s) > 400 || !strings.HasSuffix(s, "…(1000 elements)]") {
		t.Errorf("Strings of 1000 = %s", s)
	}
}

// Line keeps short lines and cuts long ones to at most max bytes, at a
// rune boundary, counting what it left out.
func TestLine(t *testing.T) {
	if got := Line("short", 10); got != "short" {
		t.Errorf("Line(short) = %q", got)
	}
	s := strings.Repeat("ü", 10000) // 20000 bytes
	got := Line(s, 1000)
	if len(got) > 1000 || !utf8.ValidString(got) {
		t.Fatalf("Line cut to %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	kept := got[:strings.Index(got, "…(")]
	wantNote := "…(" + strconv.Itoa(len(s)-len(kept)) + " more bytes)"
	if !strings.HasSuffix(got, wantNote) || !strings.HasPrefix(s, kept) {
		t.Errorf("Line = …%q, want the kept prefix and %q", got[len(got)-40:], wantNote)
	}
}

// Value keeps short printable values as they are and quotes the rest.
func TestValue(t *testing.T) {
	for s, want := range map[string]string{
		"1.5":                    "1.5",
		"a\tb":                   `"a\tb"`,
		"a\nb":                   `"a\nb"`,
		strings.Repeat("9", 100): strconv.Quote(strings.Repeat("9", Runes)) + "…(100 bytes)",
		"":                       "",
	} {
		if got := Value(s); got != want {
			t.Errorf("Value(%q) = %s, want %s", s, got, want)
		}
	}
}
