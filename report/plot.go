package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotFormat returns "svg" or "png" from a file name.
func PlotFormat(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".svg", ".png":
		return ext[1:], nil
	}
	return "", fmt.Errorf("file name must end in .svg or .png, got %q", path)
}

// Curve is an extra line for the ε plot (e.g. the exact closed-form curve).
type Curve struct {
	Name string
	X, Y []float64
}

// Layout of the ε plot, in points.
const (
	plotWidth      = 576 // 8 in
	plotAreaHeight = 330 // the axes and title, without the legend
	plotMargin     = 10
	legendFontSize = 10
	legendIcon     = 28
	legendGap      = 6
	// symlogRatio: the ε axis is logarithmic above 1 when an upper curve
	// (claim, exact ε) exceeds this multiple of the largest ε_lb (or of 1).
	symlogRatio = 20
)

// series is one curve of the ε plot.
type series struct {
	name   string
	x, y   []float64
	color  int
	dashed bool
	lower  bool // the audit's own lower bound (ε_lb)
	points bool // markers only: the refuted (ε, δ) pairs of a claim
}

// plotSeries collects the curves of a report: ε_lb, the ceiling, each
// claim's ε at δ, the exact ε, and the extra curves.
func plotSeries(r *audit.Report, xs []float64, extra []Curve) []series {
	get := func(f func(audit.PointResult) float64) (x, y []float64) {
		for k, pr := range r.Points {
			if v := f(pr); !math.IsNaN(v) && !math.IsInf(v, 0) {
				x, y = append(x, xs[k]), append(y, v)
			}
		}
		return x, y
	}
	var out []series
	lbName := fmt.Sprintf("ε_lb: the audit's lower bound (region bound, Heller & Fetaya eq. 12) at confidence %.4g", r.TestConfidence)
	ceilName := "ceiling: the largest ε_lb these numbers of runs can show"
	if fromGuesses(r) {
		lbName = fmt.Sprintf("ε_lb: one-run canary bound (Steinke et al. 2023) at confidence %.4g", r.TestConfidence)
		ceilName = "ceiling: the ε_lb if every guess were correct"
	}
	x, y := get(func(pr audit.PointResult) float64 { return pr.EpsilonBound().Epsilon })
	out = append(out, series{name: lbName, x: x, y: y, lower: true})
	x, y = get(func(pr audit.PointResult) float64 { return pr.Ceiling.Epsilon })
	out = append(out, series{name: ceilName, x: x, y: y, color: 1, dashed: true})
	for ci, name := range r.Claims {
		x, y := get(func(pr audit.PointResult) float64 {
			if ci >= len(pr.Claims) || !pr.Claims[ci].Covered {
				return math.NaN()
			}
			return float64(pr.Claims[ci].EpsilonAtDelta)
		})
		out = append(out, series{name: "upper bound (ε at δ): " + name, x: x, y: y, color: 2 + ci, dashed: true})
		if rs := refutedSeries(r, xs, ci); rs != nil {
			rs.color = 2 + ci
			out = append(out, *rs)
		}
	}
	if len(r.Points) > 0 && r.Points[0].Exact != nil {
		x, y := get(func(pr audit.PointResult) float64 {
			if pr.Exact == nil {
				return math.NaN()
			}
			return float64(*pr.Exact)
		})
		extra = append([]Curve{{Name: "exact ε of the release (closed form): every valid lower bound lies below it", X: x, Y: y}}, extra...)
	}
	if c, ok := convergenceCurve(r, xs); ok {
		extra = append([]Curve{c}, extra...)
	}
	for i, c := range extra {
		s := series{name: c.Name, color: 2 + len(r.Claims) + i}
		for k := range c.X {
			if !math.IsNaN(c.Y[k]) && !math.IsInf(c.Y[k], 0) {
				s.x, s.y = append(s.x, c.X[k]), append(s.y, c.Y[k])
			}
		}
		out = append(out, s)
	}
	return out
}

// refutedSeries marks, at each release where claim ci is refuted, the ε
// of the refuted pair (ε, δ(ε)); its legend names the pairs and, for the
// release the verdict rests on, the rule's errors — the same numbers as
// the table and the verdict. Nil when the claim is refuted nowhere.
func refutedSeries(r *audit.Report, xs []float64, ci int) *series {
	s := series{points: true}
	var at []string
	var detail string
	for k, pr := range r.Points {
		ref := r.ClaimTestAt(k, ci)
		if ref == nil || !ref.Refuted {
			continue
		}
		s.x, s.y = append(s.x, xs[k]), append(s.y, ref.Epsilon)
		at = append(at, fmt.Sprintf("%s (ε, δ) = (%.4g, %.3g)", pr.Point.Label, ref.Epsilon, ref.Delta))
		if detail == "" { // a claim is tested, hence refuted, at one release
			detail = fmt.Sprintf("; at %s the rule's errors %s: FPR ≤ %.4g, FNR ≤ %.4g at confidence %.4g",
				pr.Point.Label, ref.CountsText(), ref.FPR, ref.FNR, ref.Confidence)
		}
	}
	if len(s.x) == 0 {
		return nil
	}
	if len(at) > 3 {
		at = append(at[:3], fmt.Sprintf("and %d more releases (in the table)", len(at)-3))
	}
	s.name = fmt.Sprintf("refuted (ε, δ(ε)): %s REFUTED by the whole-profile test (its profile δ(ε) violated) at %s%s; the ringed cross marks that ε, and its δ is δ(ε), not the table's δ = %g",
		r.Claims[ci], strings.Join(at, ", "), detail, r.Delta)
	return &s
}

// releasePoints returns the report's release points.
func releasePoints(r *audit.Report) []mechanisms.ReleasePoint {
	out := make([]mechanisms.ReleasePoint, len(r.Points))
	for k, p := range r.Points {
		out[k] = p.Point
	}
	return out
}

// WritePlot draws ε_lb against the release points (the per-epoch curve of
// Heller & Fetaya Fig. 2), with the ceiling of the run counts, each claim's
// ε at δ, the exact ε and any extra curves, in SVG or PNG. The legend is
// below the axes, with every label in full. The ε axis is linear, or —
// when an upper curve exceeds 20 times the largest ε_lb — linear up to 1
// and logarithmic above, so that ε_lb stays readable next to a bound in the
// thousands. A single release point is drawn as labelled bars.
//
// Below it, when the report has one, is the ROC curve of the attack the
// headline ε_lb rests on (WriteROCPlot), descriptive.
func WritePlot(w io.Writer, format string, r *audit.Report, extra ...Curve) error {
	pn, err := epsilonPanel(r, extra)
	if err != nil {
		return err
	}
	panels := []panel{pn}
	if k := rocRelease(r); k >= 0 {
		roc, err := rocPanel(r, k)
		if err != nil {
			return err
		}
		panels = append(panels, roc)
	}
	return drawPanels(w, format, panels)
}

// writeEpsilonPlot is WritePlot without the ROC curve (the HTML page has
// it in a section of its own).
func writeEpsilonPlot(w io.Writer, format string, r *audit.Report) error {
	pn, err := epsilonPanel(r, nil)
	if err != nil {
		return err
	}
	return drawPanels(w, format, []panel{pn})
}

// epsilonPanel is WritePlot's ε plot with its legend.
func epsilonPanel(r *audit.Report, extra []Curve) (panel, error) {
	pts := releasePoints(r)
	ax := releaseAxisOf(r)
	xs := ax.x
	all := plotSeries(r, xs, extra)
	var ss []series
	for _, s := range all {
		if len(s.y) > 0 {
			ss = append(ss, s)
		}
	}
	if len(pts) == 1 {
		return barPanel(r, ss)
	}
	p := plot.New()
	title := fmt.Sprintf("%s: ε lower bound per release (δ = %g, confidence %.4g)", ClipName(r.Name, TitleNameRunes), r.Delta, r.TestConfidence)
	p.Title.Text = wrapStyled(p.Title.TextStyle, title, plotWidth-2*plotMargin)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = ax.label
	p.Add(plotter.NewGrid())

	lbMax, upMax := 0.0, 0.0
	for _, s := range ss {
		for _, v := range s.y {
			if s.lower {
				lbMax = math.Max(lbMax, v)
			} else {
				upMax = math.Max(upMax, v)
			}
		}
	}
	logAxis := epsilonAxis(p, lbMax, upMax, 1.15, 1.05)

	xmin, xmax := xs[0], xs[len(xs)-1]
	pad := math.Max((xmax-xmin)*0.02, 0.5)
	p.X.Min, p.X.Max = xmin-pad, xmax+pad
	p.X.Tick.Marker = ax.ticks

	var entries []legendEntry
	markers := len(pts) <= 60
	for _, s := range ss {
		thumbs, err := addSeries(p, s, markers)
		if err != nil {
			return panel{}, err
		}
		entries = append(entries, legendEntry{text: s.name, thumbs: thumbs})
	}
	if logAxis {
		entries = append(entries, legendEntry{text: logAxisNote(upMax, lbMax)})
	}
	return panel{draw: func(c draw.Canvas) { p.Draw(c) }, entries: entries}, nil
}

// addSeries adds a curve to the plot and returns what draws its legend
// thumbnail.
func addSeries(p *plot.Plot, s series, markers bool) ([]plot.Thumbnailer, error) {
	pts := make(plotter.XYs, len(s.x))
	for i := range s.x {
		pts[i] = plotter.XY{X: s.x[i], Y: s.y[i]}
	}
	if s.points {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = plotutil.Color(s.color)
		sc.Shape = RefutedGlyph{}
		sc.Radius = vg.Points(refutedRadius)
		p.Add(sc)
		return []plot.Thumbnailer{sc}, nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.Color = plotutil.Color(s.color)
	l.Width = vg.Points(1.2)
	if s.lower {
		l.Width = vg.Points(2)
	}
	if s.dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(l)
	thumbs := []plot.Thumbnailer{l}
	if markers || len(pts) == 1 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = plotutil.Color(s.color)
		sc.Shape = plotutil.Shape(s.color)
		p.Add(sc)
		thumbs = append(thumbs, sc)
	}
	return thumbs, nil
}

// refutedRadius is the radius, in points, of the refuted marker.
const refutedRadius = 6

// RefutedGlyph marks a refuted (ε, δ) pair on the claim's own line (a
// draw.GlyphDrawer): a white disk that cuts the line, a thick ring in the
// claim's colour and a thick black cross inside it, so that the mark
// stands out from the dashed line it sits on in colour, shape and size.
type RefutedGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (RefutedGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	halo := vg.Path{}
	halo.Move(vg.Point{X: pt.X + r + vg.Points(1.5), Y: pt.Y})
	halo.Arc(pt, r+vg.Points(1.5), 0, 2*math.Pi)
	halo.Close()
	c.SetColor(color.White)
	c.Fill(halo)

	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(2)})
	ring := vg.Path{}
	ring.Move(vg.Point{X: pt.X + r, Y: pt.Y})
	ring.Arc(pt, r, 0, 2*math.Pi)
	ring.Close()
	c.Stroke(ring)

	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(2)})
	a := r * 0.5
	var cross vg.Path
	cross.Move(vg.Point{X: pt.X - a, Y: pt.Y - a})
	cross.Line(vg.Point{X: pt.X + a, Y: pt.Y + a})
	cross.Move(vg.Point{X: pt.X - a, Y: pt.Y + a})
	cross.Line(vg.Point{X: pt.X + a, Y: pt.Y - a})
	c.Stroke(cross)
}

// barPanel draws a report of one release point: one bar per curve
// (ε_lb, ceiling, each claim's ε at δ, the exact ε) with its value written
// above it and its name below.
func barPanel(r *audit.Report, ss []series) (panel, error) {
	p := plot.New()
	pt := releasePoints(r)[0]
	// The title names the release by its label: a program sampler's
	// releases are numbered 1, 2, … whatever iterations they come after,
	// so an iteration number here could be wrong.
	where := pt.Label
	if pt.Label == "final" {
		where = "the final state"
	}
	title := fmt.Sprintf("%s: ε at %s (δ = %g, confidence %.4g)", ClipName(r.Name, TitleNameRunes), where, r.Delta, r.TestConfidence)
	p.Title.Text = wrapStyled(p.Title.TextStyle, title, plotWidth-2*plotMargin)
	p.Title.Padding = vg.Points(6)
	p.Add(plotter.NewGrid())
	lbMax, upMax := 0.0, 0.0
	for _, s := range ss {
		if s.lower {
			lbMax = math.Max(lbMax, s.y[0])
		} else {
			upMax = math.Max(upMax, s.y[0])
		}
	}
	epsilonAxis(p, lbMax, upMax, 1.6, 1.15)
	slot := float64(plotWidth-2*plotMargin-60) / float64(len(ss))
	barWidth := vg.Points(math.Min(70, slot*0.5))
	var names []string
	var entries []legendEntry
	for i, s := range ss {
		bc, err := plotter.NewBarChart(plotter.Values{s.y[0]}, barWidth)
		if err != nil {
			return panel{}, err
		}
		bc.XMin = float64(i)
		bc.Color = plotutil.Color(s.color)
		bc.LineStyle.Width = 0
		p.Add(bc)
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: float64(i), Y: s.y[0]}}, Labels: []string{stats.FormatFloat(s.y[0])}})
		if err != nil {
			return panel{}, err
		}
		lab.TextStyle[0].XAlign = draw.XCenter
		lab.Offset = vg.Point{Y: vg.Points(3)}
		p.Add(lab)
		short, _, _ := strings.Cut(s.name, ":")
		names = append(names, fmt.Sprintf("(%d) %s", i+1, short))
		name := s.name
		if s.points { // a bar here, not a mark on a line
			name = strings.Replace(name, "the ringed cross marks that ε", "the bar shows that ε", 1)
		}
		entries = append(entries, legendEntry{text: fmt.Sprintf("(%d) %s", i+1, name), thumbs: []plot.Thumbnailer{bc}})
	}
	if upMax > symlogRatio*math.Max(lbMax, 1) {
		entries = append(entries, legendEntry{text: logAxisNote(upMax, lbMax)})
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(ss))-0.4
	return panel{draw: func(c draw.Canvas) { p.Draw(c) }, entries: entries}, nil
}

// epsilonAxis sets up the ε axis of p from the largest ε_lb and the
// largest upper curve: logarithmic above 1 (SymLogScale) when the upper
// curve exceeds symlogRatio times the larger of ε_lb and 1, linear
// otherwise, with headroom logPad or linPad times the top for the labels.
// It reports whether the axis is logarithmic.
func epsilonAxis(p *plot.Plot, lbMax, upMax, logPad, linPad float64) bool {
	top := math.Max(lbMax, upMax)
	logAxis := upMax > symlogRatio*math.Max(lbMax, 1)
	p.Y.Label.Text = "ε"
	if logAxis {
		p.Y.Scale = SymLogScale{}
		p.Y.Tick.Marker = SymLogTicks{}
		p.Y.Max = math.Max(top*logPad, 2)
	} else {
		p.Y.Tick.Marker = LinearTicks{Target: 8}
		p.Y.Max = math.Max(top*linPad, 0.1)
	}
	p.Y.Min = 0
	return logAxis
}

// logAxisNote explains the ε axis when it is logarithmic above 1.
func logAxisNote(upMax, lbMax float64) string {
	return fmt.Sprintf("The ε axis is linear from 0 to 1 and logarithmic above: the largest upper curve (%s) exceeds %d times the largest ε_lb (%s).",
		stats.FormatFloat(upMax), symlogRatio, stats.FormatFloat(lbMax))
}

// legendEntry is one line of the legend below a plot.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

// legendStyle is the text of the legend.
func legendStyle() text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, legendFontSize),
		XAlign:  draw.XLeft,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// panel is one plot of a picture with its legend below it.
type panel struct {
	draw    func(draw.Canvas)
	entries []legendEntry
}

// panelGap is the space between two panels of a picture, in points.
const panelGap = 18

// drawPanels lays out a canvas of plotWidth with the panels one below the
// other, each a plot of plotAreaHeight and its legend, each label wrapped
// to the width, and writes it.
func drawPanels(w io.Writer, format string, panels []panel) error {
	sty := legendStyle()
	textWidth := float64(plotWidth - 2*plotMargin - legendIcon - legendGap)
	lineH := sty.FontExtents().Height.Points() * 1.05
	texts := make([][]string, len(panels))
	height := 0.0
	for i, pn := range panels {
		legendH := 0.0
		for _, e := range pn.entries {
			t := wrapStyled(sty, e.text, textWidth)
			texts[i] = append(texts[i], t)
			legendH += float64(strings.Count(t, "\n")+1)*lineH + 3
		}
		// The first panel's sum in the order the picture of one panel
		// has always used (its size is written to the file).
		if ph := plotAreaHeight + legendH; i == 0 {
			height = ph + 2*plotMargin + 4
		} else {
			height += panelGap + ph + 4
		}
	}
	cw, err := draw.NewFormattedCanvas(vg.Points(plotWidth), vg.Points(height), format)
	if err != nil {
		return err
	}
	c := draw.New(cw)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	inner := draw.Crop(c, vg.Points(plotMargin), -vg.Points(plotMargin), vg.Points(plotMargin), -vg.Points(plotMargin))
	top := inner.Max.Y
	for i, pn := range panels {
		plotArea := inner
		plotArea.Max.Y = top
		plotArea.Min.Y = plotArea.Max.Y - vg.Points(plotAreaHeight)
		pn.draw(plotArea)
		y := plotArea.Min.Y - vg.Points(4)
		for j, e := range pn.entries {
			n := float64(strings.Count(texts[i][j], "\n") + 1)
			icon := draw.Canvas{Canvas: inner.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: inner.Min.X, Y: y - vg.Points(lineH)},
				Max: vg.Point{X: inner.Min.X + vg.Points(legendIcon), Y: y},
			}}
			for _, t := range e.thumbs {
				t.Thumbnail(&icon)
			}
			inner.FillText(sty, vg.Point{X: inner.Min.X + vg.Points(legendIcon+legendGap), Y: y}, texts[i][j])
			y -= vg.Points(n*lineH + 3)
		}
		top = y - vg.Points(panelGap)
	}
	_, err = cw.WriteTo(w)
	return err
}

// wrapStyled breaks text at spaces into lines no wider than width points
// in the given style (a word wider than that is broken). Its work is about
// linear in the length of text: a word is measured whole only when it is
// short, and a long one is cut a line at a time (fitPrefix).
func wrapStyled(sty text.Style, s string, width float64) string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		// A word wider than the line is broken where it must be.
		if r := []rune(word); len(r) > 1 && !fitsStyled(sty, r, width) {
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			for len(r) > 1 {
				k := fitPrefix(sty, r, width)
				if k == len(r) {
					break
				}
				lines = append(lines, string(r[:k]))
				r = r[k:]
			}
			word = string(r)
		}
		try := word
		if cur != "" {
			try = cur + " " + word
		}
		if cur != "" && sty.Width(try).Points() > width {
			lines = append(lines, cur)
			cur = word
			continue
		}
		cur = try
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return strings.Join(lines, "\n")
}

// fitsStyled reports whether the runes r fit width points; a word far
// longer than a line is not measured whole (fitPrefix stops early).
func fitsStyled(sty text.Style, r []rune, width float64) bool {
	return fitPrefix(sty, r, width) == len(r)
}

// fitPrefix returns the largest k ≥ 1 such that r[:k] is at most width
// points wide (1 when even one rune is wider). The sum of the runes' own
// widths finds k from the start of r without measuring past it; the exact
// width of the prefix (kerning included) then corrects it by a few runes.
func fitPrefix(sty text.Style, r []rune, width float64) int {
	k, sum := 0, 0.0
	for k < len(r) {
		w := sty.Width(string(r[k])).Points()
		if sum+w > width {
			break
		}
		sum += w
		k++
	}
	for k > 1 && sty.Width(string(r[:k])).Points() > width {
		k--
	}
	for k < len(r) && sty.Width(string(r[:k+1])).Points() <= width {
		k++
	}
	return max(k, 1)
}

// IntegerTicks marks an axis of epochs or iterations (a plot.Ticker):
// labelled ticks on whole numbers, every 1, 2 or 5 × 10^k so that about 10
// are labelled, and unlabelled ones between when that leaves room.
type IntegerTicks struct{}

// Ticks implements plot.Ticker.
func (IntegerTicks) Ticks(lo, hi float64) []plot.Tick {
	step := niceStep(hi-lo, 10)
	if step < 10 {
		// Whole steps of 1, 2 or 5 (2.5 epochs is not a tick).
		step = map[bool]float64{true: 2, false: math.Max(1, math.Round(step))}[step == 2.5]
	}
	// Unlabelled ticks halve a step of 10^k or 2·10^k and fifth one of
	// 5·10^k, where that is a whole number.
	minor := step / 2
	if m := step / math.Pow(10, math.Floor(math.Log10(step))); math.Abs(m-5) < 1e-9 {
		minor = step / 5
	}
	if step < 2 || minor != math.Round(minor) {
		minor = 0
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		v += 0 // no "-0"
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	if minor > 0 {
		for v := math.Ceil(lo/minor) * minor; v <= hi; v += minor {
			if math.Mod(v, step) != 0 {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// niceStep returns the step among 1, 2, 2.5 and 5 × 10^k that divides
// span into the number of intervals closest to n.
func niceStep(span float64, n int) float64 {
	if !(span > 0) {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	best, bestErr := p, math.Inf(1)
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if e := math.Abs(span/(m*p) - float64(n)); e < bestErr {
			best, bestErr = m*p, e
		}
	}
	return best
}

// LinearTicks puts about Target labelled ticks on multiples of 1, 2, 2.5
// or 5 × 10^k (a plot.Ticker).
type LinearTicks struct{ Target int }

// Ticks implements plot.Ticker.
func (t LinearTicks) Ticks(lo, hi float64) []plot.Tick {
	step := niceStep(hi-lo, max(t.Target, 2))
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		v := i * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
	}
	return ticks
}

// SymLogScale is an ε axis (a plot.Normalizer) that is linear from 0 to 1
// and logarithmic above: y ↦ ln(1 + y). It keeps ε = 0 on the axis (a
// log axis cannot) while a bound of thousands leaves the lower bounds
// readable. Use it with SymLogTicks.
type SymLogScale struct{}

// Normalize implements plot.Normalizer.
func (SymLogScale) Normalize(min, max, x float64) float64 {
	f := func(v float64) float64 { return math.Copysign(math.Log1p(math.Abs(v)), v) }
	return (f(x) - f(min)) / (f(max) - f(min))
}

// SymLogTicks marks a SymLogScale axis: 0, 0.5, 1, 2, 5, 10, 20, 50, …
// (only 1, 10, 100, … labelled when there are more than four decades).
type SymLogTicks struct{}

// Ticks implements plot.Ticker.
func (SymLogTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := []plot.Tick{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}}
	decades := math.Log10(math.Max(hi, 1))
	for e := 0; float64(e) <= decades+1; e++ {
		p := math.Pow(10, float64(e))
		for _, m := range []float64{1, 2, 5} {
			v := m * p
			if v > hi || v < lo {
				continue
			}
			label := tickNumber(v)
			if m != 1 && decades > 4 {
				label = ""
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: label})
		}
	}
	return ticks
}

// tickNumber writes a tick value: 1000, 20000, or 10⁶ beyond 10⁵.
func tickNumber(v float64) string {
	if v < 1e5 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	e := int(math.Round(math.Log10(v)))
	m := v / math.Pow(10, float64(e))
	sup := strings.NewReplacer("0", "⁰", "1", "¹", "2", "²", "3", "³", "4", "⁴", "5", "⁵", "6", "⁶", "7", "⁷", "8", "⁸", "9", "⁹").Replace(strconv.Itoa(e))
	if math.Abs(m-1) < 1e-9 {
		return "10" + sup
	}
	return strconv.FormatFloat(m, 'g', 3, 64) + "·10" + sup
}
