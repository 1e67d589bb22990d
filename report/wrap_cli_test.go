package report

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// A scenario name of a megabyte is cut on the text report's "scenario"
// line to NameRunes runes and its length in bytes, so that the line fits
// the report's width; shorter names are kept whole, and a cut never splits
// a rune.
func TestClipName(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		want string
	}{
		{"hostile-tiny", NameRunes, "hostile-tiny"},
		{strings.Repeat("a", NameRunes), NameRunes, strings.Repeat("a", NameRunes)},
		{strings.Repeat("a", 1<<20), NameRunes, strings.Repeat("a", NameRunes) + "…(1048576 bytes)"},
		{strings.Repeat("é", 100), 3, "ééé…(200 bytes)"},
	} {
		if got := ClipName(c.name, c.n); got != c.want {
			t.Errorf("ClipName(%.20q…, %d) = %.90q, want %.90q", c.name, c.n, got, c.want)
		}
	}
	// The scenario line: "scenario   " + name + " (config " + 12 hex
	// digits + ")" stays within the text width for a name of a megabyte.
	line := "scenario   " + ClipName(strings.Repeat("a", 9_999_999), NameRunes) + " (config 0123456789ab)"
	if n := utf8.RuneCountInString(line); n > textWidth {
		t.Errorf("the scenario line of a 10 MB name has %d runes, more than the report's width %d", n, textWidth)
	}
}

// WrapText cuts a long word into lines of the width, in order, and its
// work is linear in the text: wrapping a word of 50,000 runes allocates a
// few bytes per rune. The quadratic version converted the rest of the word
// to runes again for every line (about 4·L²/(2·width) bytes: 125 MB here).
func TestWrapTextLinear(t *testing.T) {
	const n, width = 50_000, 100
	word := strings.Repeat("abcdefghij", n/10)
	lines := WrapText("x "+word+" y", width)
	if len(lines) != n/width+2 || lines[0] != "x" || lines[len(lines)-1] != "y" {
		t.Fatalf("%d lines, first %q, last %q; want %d lines from x to y", len(lines), lines[0], lines[len(lines)-1], n/width+2)
	}
	if got := strings.Join(lines[1:len(lines)-1], ""); got != word {
		t.Fatal("the word's lines do not join back into the word")
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > width {
			t.Fatalf("a line of %d runes", utf8.RuneCountInString(l))
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	WrapText(word, width)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 40*n {
		t.Errorf("wrapping %d runes allocated %d bytes, more than 40 per rune: not linear", n, got)
	}
}

// countingHandler is a text handler that counts the runes it is asked to
// measure: the work of laying out text, counted instead of timed.
type countingHandler struct {
	text.Handler
	runes int
}

func (h *countingHandler) Box(txt string, fnt font.Font) (vg.Length, vg.Length, vg.Length) {
	h.runes += utf8.RuneCountInString(txt)
	return h.Handler.Box(txt, fnt)
}

// wrapStyled breaks a long word at the same places as measuring every
// prefix would (the largest prefix that fits), and measures a number of
// runes linear in the text: at most a few times each rune. The version
// that shrank each line from the whole rest of the word measured about
// L³/(6·line) runes (10⁷ for 2,000 runes), and took 19 s of CPU for a
// plot title of 5 kB.
func TestWrapStyledLinear(t *testing.T) {
	h := &countingHandler{Handler: legendStyle().Handler}
	sty := legendStyle()
	sty.Handler = h
	const n, width = 2000, 300.0
	word := strings.Repeat("mixture-", n/8)
	got := strings.Split(wrapStyled(sty, "a "+word+" b", width), "\n")
	if got[0] != "a" || strings.Join(got[1:], "") != word+" b" {
		t.Fatalf("lines %q do not rejoin into the text", got)
	}
	// Each cut keeps the largest prefix that fits.
	for _, l := range got[1 : len(got)-1] {
		r := []rune(l)
		if w := sty.Width(l).Points(); w > width {
			t.Errorf("line %q is %.1f pt wide, more than %g", l, w, width)
		}
		next := string(r) + "m" // every line of the word is followed by more of it
		if sty.Width(next).Points() <= width && len(r) > 0 {
			t.Errorf("line %q could have held one more rune", l)
		}
	}
	h.runes = 0
	wrapStyled(sty, word, width)
	if h.runes > 10*n {
		t.Errorf("wrapping a word of %d runes measured %d runes, more than 10 per rune: not linear", n, h.runes)
	}
}
