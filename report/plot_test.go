package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// fakeReport builds a report of n release points with ε_lb rising to lb,
// a ceiling, and one claim per bound (constant ε at δ).
func fakeReport(name string, n int, epochs bool, lb float64, claims map[string]float64) *audit.Report {
	r := &audit.Report{Name: name, Delta: 1e-5, Confidence: 0.95, TestConfidence: 0.95, Headline: n - 1}
	var names []string
	for c := range claims {
		names = append(names, c)
	}
	r.Claims = names
	for k := range n {
		pt := mechanisms.ReleasePoint{Iteration: (k + 1) * 10, Label: fmt.Sprintf("iteration %d", (k+1)*10)}
		if epochs {
			pt.Epoch, pt.Label = k+1, fmt.Sprintf("epoch %d", k+1)
		}
		if n == 1 {
			pt.Label = "final"
		}
		pr := audit.PointResult{Point: pt, Attacks: []audit.AttackResult{{Attack: "threshold"}}}
		pr.Estimates = []audit.PointEstimate{{Estimator: "region"}, {Estimator: "gdp"}}
		pr.Estimates[0].Bound.Epsilon = lb * float64(k+1) / float64(n)
		pr.Ceiling.Epsilon = 5.65
		for _, c := range names {
			pr.Claims = append(pr.Claims, audit.ClaimResult{Covered: true, EpsilonAtDelta: stats.JSONFloat(claims[c])})
		}
		r.Points = append(r.Points, pr)
	}
	return r
}

// textRun is a <g class="text"> of an SVG: its text and ink extent.
type textRunBox struct {
	text           string
	x0, y0, x1, y1 float64
}

var (
	reSize   = regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)
	reTextG  = regexp.MustCompile(`<g class="text" aria-label="([^"]*)" data-bbox="([^"]*)"`)
	reUseRef = regexp.MustCompile(`xlink:href="#(g[0-9a-f]+-[0-9]+)"`)
)

// svgTexts parses an SVG written by SVGCanvas: its size and text runs.
func svgTexts(t *testing.T, svg []byte) (w, h float64, runs []textRunBox) {
	t.Helper()
	m := reSize.FindSubmatch(svg)
	if m == nil {
		t.Fatalf("no size in SVG")
	}
	w, _ = strconv.ParseFloat(string(m[1]), 64)
	h, _ = strconv.ParseFloat(string(m[2]), 64)
	for _, g := range reTextG.FindAllSubmatch(svg, -1) {
		var b [4]float64
		for i, f := range strings.Fields(string(g[2])) {
			b[i], _ = strconv.ParseFloat(f, 64)
		}
		runs = append(runs, textRunBox{html.UnescapeString(string(g[1])), b[0], b[1], b[2], b[3]})
	}
	return w, h, runs
}

// checkSVG asserts what every plot must satisfy: well-formed XML, no text
// left as <text> (it would depend on the viewer's fonts), every glyph
// defined and none missing from the font (glyph 0), and every run of text
// inside the canvas with a margin.
func checkSVG(t *testing.T, name string, svg []byte) []textRunBox {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", name, err)
		}
	}
	if bytes.Contains(svg, []byte("<text")) {
		t.Errorf("%s: still has <text> elements", name)
	}
	for _, ref := range reUseRef.FindAllSubmatch(svg, -1) {
		if strings.HasSuffix(string(ref[1]), "-0") {
			t.Errorf("%s: a character is missing from the font (glyph 0)", name)
			break
		}
		if !bytes.Contains(svg, []byte(`<path id="`+string(ref[1])+`"`)) {
			t.Errorf("%s: glyph %s used but not defined", name, ref[1])
		}
	}
	w, h, runs := svgTexts(t, svg)
	if len(runs) < 5 {
		t.Fatalf("%s: only %d runs of text", name, len(runs))
	}
	const margin = 1.0 // points
	for _, r := range runs {
		if math.IsNaN(r.x0) || r.x0 < margin || r.y0 < margin || r.x1 > w-margin || r.y1 > h-margin {
			t.Errorf("%s: text %q at [%g, %g]×[%g, %g] leaves the %g×%g canvas", name, r.text, r.x0, r.x1, r.y0, r.y1, w, h)
		}
	}
	return runs
}

func hasText(runs []textRunBox, s string) bool {
	for _, r := range runs {
		if r.text == s {
			return true
		}
	}
	return false
}

func anyText(runs []textRunBox, sub string) bool {
	for _, r := range runs {
		if strings.Contains(r.text, sub) {
			return true
		}
	}
	return false
}

// The plots keep every text inside the canvas whatever the report: per
// epoch, per iteration, with a bound thousands of times ε_lb (the ε axis
// turns logarithmic above 1), a single release (bars), a long name and
// long claim names (wrapped, never cut), and many points.
func TestPlotsFitTheirCanvas(t *testing.T) {
	long := "Subsampled Gaussian without replacement, replace-one: min of Wang, Balle & Kasiviswanathan 2019, Thm 9 and a direct moment bound [replace-one]"
	cases := []struct {
		name    string
		r       *audit.Report
		logAxis bool
		bars    bool
	}{
		{"epochs", fakeReport("sgld-interim-region", 20, true, 4.7, nil), false, false},
		{"bound 2500× ε_lb", fakeReport("sgld-logistic-canary", 5, true, 1.83, map[string]float64{"Bertazzi et al. 2025, Thm 5.8 (noisy SGD) [as printed]": 4691.88}), true, false},
		{"bound 3× ε_lb", fakeReport("dp-sgld", 8, false, 2.95, map[string]float64{"Gaussian mechanism composition (Dong, Roth & Su 2019, Cor. 3.3), full batches": 7.05}), false, false},
		{"single release", fakeReport("dp-sgld-correct", 1, false, 2.95, map[string]float64{long: 8.34, "Gaussian mechanism composition (Dong, Roth & Su 2019, Cor. 3.3), full batches": 7.05}), false, true},
		{"single release, huge bound", fakeReport("ula-logistic-canary", 1, false, 1.6, map[string]float64{"Bertazzi et al. 2025, Thm 5.4 (ULA) [as printed]": 46.54}), true, true},
		{"long names", fakeReport(strings.Repeat("a-very-long-scenario-name-", 6), 30, true, 3, map[string]float64{long: 40, long + " (again)": 80}), true, false},
		{"many points", fakeReport("trajectory", 2000, false, 2, nil), false, false},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := WritePlot(&b, "svg", c.r); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		runs := checkSVG(t, c.name, b.Bytes())
		if got := anyText(runs, "logarithmic above"); got != c.logAxis {
			t.Errorf("%s: logarithmic ε axis %v, want %v", c.name, got, c.logAxis)
		}
		if got := hasText(runs, "(1) ε_lb"); got != c.bars {
			t.Errorf("%s: bars %v, want %v", c.name, got, c.bars)
		}
		// Every claim's name is in the legend in full, maybe on several
		// lines, and never shortened.
		all := ""
		for _, r := range runs {
			all += " " + r.text
		}
		all = strings.Join(strings.Fields(all), " ")
		for _, cl := range c.r.Claims {
			if !strings.Contains(all, cl) {
				t.Errorf("%s: the legend lacks %q", c.name, cl)
			}
		}
		if strings.Contains(all, "…") {
			t.Errorf("%s: a label is cut", c.name)
		}
	}
}

// The SVG's glyphs are the font's own outlines and its text boxes their
// real extent: the box of the tick label "0" at 10 pt is the glyph's box in
// Liberation Serif, whose header gives x from 78 to 946 and y from −20 to
// 1362 of 2048 units per em (docs/derivations/plot-text.md): 868/2048·10 =
// 4.238 pt wide and 1382/2048·10 = 6.748 pt high. The SVG rounds boxes to
// 0.01 pt.
func TestOutlineGeometry(t *testing.T) {
	var b bytes.Buffer
	if err := WritePlot(&b, "svg", fakeReport("x", 4, true, 1, nil)); err != nil {
		t.Fatal(err)
	}
	_, _, runs := svgTexts(t, b.Bytes())
	for _, r := range runs {
		if r.text != "0" {
			continue
		}
		w, h := r.x1-r.x0, r.y1-r.y0
		if math.Abs(w-868.0/2048*10) > 0.02 || math.Abs(h-1382.0/2048*10) > 0.02 {
			t.Errorf(`"0" at 10 pt has ink %.3f × %.3f pt, want 4.238 × 6.748`, w, h)
		}
		return
	}
	t.Fatal(`no "0" tick label`)
}

func TestTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		want   string
	}{
		{0.5, 20.5, "2 4 6 8 10 12 14 16 18 20"},
		{0.5, 5.5, "1 2 3 4 5"},
		{-5, 1005, "0 100 200 300 400 500 600 700 800 900 1000"},
	}
	for _, c := range cases {
		var got []string
		for _, tk := range (IntegerTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("IntegerTicks(%g, %g) = %v, want %s", c.lo, c.hi, got, c.want)
		}
	}
	var got []string
	for _, tk := range (LinearTicks{Target: 8}).Ticks(0, 4.46) {
		got = append(got, tk.Label)
	}
	if strings.Join(got, " ") != "0 0.5 1 1.5 2 2.5 3 3.5 4" {
		t.Errorf("LinearTicks(0, 4.46) = %v", got)
	}
	got = nil
	for _, tk := range (SymLogTicks{}).Ticks(0, 5400) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if strings.Join(got, " ") != "0 0.5 1 2 5 10 20 50 100 200 500 1000 2000 5000" {
		t.Errorf("SymLogTicks(0, 5400) = %v", got)
	}
	if s := tickNumber(1e6); s != "10⁶" {
		t.Errorf("tickNumber(1e6) = %q", s)
	}
	// ln(1 + y) normalised: 0 at the bottom, e − 1 at ln(e)/ln(1+max).
	if v := (SymLogScale{}).Normalize(0, math.E*math.E-1, math.E-1); math.Abs(v-0.5) > 1e-12 {
		t.Errorf("SymLogScale: %g, want 0.5", v)
	}
}

func TestTextTable(t *testing.T) {
	tab := TextTable{
		Header: []string{"theorem", "ε", "notes"},
		Rows:   [][]string{{"Bertazzi et al. 2025, Thm 5.7 (noisy SGD, constant data gradient)", "4691.8800", "[1]"}},
		Right:  []bool{false, true, false},
		Wrap:   []bool{true, false, false},
	}
	var b bytes.Buffer
	if err := tab.Render(&b, 40); err != nil {
		t.Fatal(err)
	}
	// 40 columns leave the theorem 40 − 9 − 5 − 2·2 = 22.
	want := "theorem                         ε  notes\n" +
		"──────────────────────  ─────────  ─────\n" +
		"Bertazzi et al. 2025,   4691.8800  [1]\n" +
		"Thm 5.7 (noisy SGD,\n" +
		"constant data\n" +
		"gradient)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := WrapText("abcdefghij k", 4); strings.Join(got, "|") != "abcd|efgh|ij k" {
		t.Errorf("WrapText breaks long words: %q", got)
	}
}
