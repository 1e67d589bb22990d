package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// TextTable is a plain-text table that fits a given width: the columns
// marked Wrap are narrowed, their cells wrapped onto several lines, until
// the table fits.
type TextTable struct {
	Header []string
	Rows   [][]string
	// Right right-aligns a column (numbers); Wrap lets it wrap.
	Right, Wrap []bool
}

// colGap separates the columns.
const colGap = "  "

// Render writes the table, each line at most width columns (counting
// runes) as long as the wrappable columns can shrink enough; a word
// longer than its column is broken.
func (t TextTable) Render(w io.Writer, width int) error {
	widths := t.columnWidths(width)
	if err := t.line(w, widths, t.Header); err != nil {
		return err
	}
	rule := make([]string, len(widths))
	for i := range rule {
		rule[i] = strings.Repeat("─", widths[i])
	}
	if err := t.line(w, widths, rule); err != nil {
		return err
	}
	for _, row := range t.Rows {
		if err := t.line(w, widths, row); err != nil {
			return err
		}
	}
	return nil
}

// columnWidths is each column's widest cell, the widest wrappable column
// then narrowed, one column at a time, down to a floor of 8 (or the
// header's width) until the line fits width.
func (t TextTable) columnWidths(width int) []int {
	n := len(t.Header)
	widths := make([]int, n)
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			widths[i] = max(widths[i], runes(c))
		}
	}
	total := len(colGap) * (n - 1)
	for _, x := range widths {
		total += x
	}
	for ; total > width; total-- {
		best := -1
		for i := range widths {
			if i < len(t.Wrap) && t.Wrap[i] && widths[i] > max(8, runes(t.Header[i])) && (best < 0 || widths[i] > widths[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		widths[best]--
	}
	return widths
}

// line writes one row of cells, wrapped within the column widths over as
// many lines as its tallest cell needs.
func (t TextTable) line(w io.Writer, widths []int, cells []string) error {
	n := len(widths)
	wrapped := make([][]string, n)
	height := 1
	for i := range n {
		c := ""
		if i < len(cells) {
			c = cells[i]
		}
		wrapped[i] = WrapText(c, widths[i])
		height = max(height, len(wrapped[i]))
	}
	for k := range height {
		var b strings.Builder
		for i := range n {
			c := ""
			if k < len(wrapped[i]) {
				c = wrapped[i][k]
			}
			t.cell(&b, c, widths[i], i, i == n-1)
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// cell writes one cell of column i padded to width (right-aligned where
// the table says so), then the gap unless it is the last column.
func (t TextTable) cell(b *strings.Builder, c string, width, i int, last bool) {
	pad := strings.Repeat(" ", width-runes(c))
	if i < len(t.Right) && t.Right[i] {
		b.WriteString(pad + c)
	} else {
		b.WriteString(c)
		if !last {
			b.WriteString(pad)
		}
	}
	if !last {
		b.WriteString(colGap)
	}
}

// WrapText breaks text into lines of at most width runes at spaces,
// breaking a longer word; it returns one (possibly empty) line at least.
// Its work is linear in the length of text: a long word is cut into lines
// from one conversion to runes, and a line grows by appending.
func WrapText(text string, width int) []string {
	width = max(width, 1)
	var lines []string
	var cur strings.Builder
	n := 0 // runes in cur
	for _, word := range strings.Fields(text) {
		wn := runes(word)
		if wn > width {
			if n > 0 {
				lines = append(lines, cur.String())
				cur.Reset()
				n = 0
			}
			r := []rune(word)
			for len(r) > width {
				lines = append(lines, string(r[:width]))
				r = r[width:]
			}
			word, wn = string(r), len(r)
		}
		switch {
		case n == 0:
			cur.WriteString(word)
			n = wn
		case n+1+wn <= width:
			cur.WriteByte(' ')
			cur.WriteString(word)
			n += 1 + wn
		default:
			lines = append(lines, cur.String())
			cur.Reset()
			cur.WriteString(word)
			n = wn
		}
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// WriteWrapped writes text wrapped to width, the first line after prefix
// and the others indented to line up with it.
func WriteWrapped(w io.Writer, prefix, text string, width int) error {
	indent := strings.Repeat(" ", runes(prefix))
	for i, l := range WrapText(text, width-runes(prefix)) {
		p := prefix
		if i > 0 {
			p = indent
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(p+l, " ")); err != nil {
			return err
		}
	}
	return nil
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// NameRunes is the most runes of a scenario's name that the text report
// shows on its "scenario" line, which then fits the report's width; a
// longer name is cut (ClipName), so that a name of a megabyte does not
// fill pages. Plot titles and the HTML report's title, which wrap, keep
// up to TitleNameRunes; the JSON and CSV reports keep the name whole.
const NameRunes = 60

// TitleNameRunes is the most runes of a scenario's name in a plot title
// or the HTML report's title (a few wrapped lines).
const TitleNameRunes = 240

// ClipName returns a scenario's name cut to at most n runes, followed by
// its length in bytes when it was longer: "aaaa…(1048576 bytes)".
func ClipName(name string, n int) string {
	if len(name) <= n || runes(name) <= n {
		return name
	}
	i := 0
	for k := 0; k < n; k++ {
		_, w := utf8.DecodeRuneInString(name[i:])
		i += w
	}
	return fmt.Sprintf("%s…(%d bytes)", name[:i], len(name))
}
