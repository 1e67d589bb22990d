package curve

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// render writes the report: the table on stdout (unless an output takes
// stdout) and every requested file. The plot and the HTML page are drawn
// before anything is printed, so that a plot that cannot be drawn fails
// the command cleanly. An interruption (ctx) stops before the next output.
func (o *Options) render(ctx context.Context, e *cli.Env, rep Report, print func(io.Writer, Report)) error {
	var plotBuf, htmlBuf bytes.Buffer
	if o.Out.Plot != "" {
		if err := plotCurve(&plotBuf, rep, o.Out.Plot, o.LogScale); err != nil {
			return err
		}
	}
	if o.Out.HTML != "" {
		if err := curveHTML(&htmlBuf, rep, o.LogScale, print); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return errCurveInterrupted
	}
	if !o.Out.StdoutTaken() {
		print(e.Stdout, rep)
	}
	return cli.WriteDocuments(ctx, e, cli.InterruptedError{Msg: "interrupted while writing the outputs; those not yet written were not written"},
		cli.Document{Out: o.Out.HTML, Fill: func(w io.Writer) error { _, err := htmlBuf.WriteTo(w); return err }},
		cli.Document{Out: o.Out.Plot, Fill: func(w io.Writer) error { _, err := plotBuf.WriteTo(w); return err }},
		cli.Document{Out: o.Out.CSV, Fill: func(w io.Writer) error { return writeCurveCSV(w, rep) }},
		cli.Document{Out: o.Out.JSON, Fill: func(w io.Writer) error { return cli.WriteJSONTo(w, rep) }},
	)
}

// etaText describes the step size as chosen.
func etaText(p Params) string {
	if p.EtaScale > 0 {
		return fmt.Sprintf("η = %s/s² = %s", fmtG(p.EtaScale), fmtG(p.Eta))
	}
	return fmt.Sprintf("η = %s (= %.6g/s²)", fmtG(p.Eta), p.Eta*p.S*p.S)
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// solveText explains a solved c or η in one line.
func solveText(s *Solve, p Params) string {
	if s == nil {
		return ""
	}
	if s.Unknown == "c" {
		uniq := "the only such c: ε_" + s.Quantity + " increases with c"
		if !s.Unique {
			uniq = "ε_profile is not proven monotone in c, so a smaller c may also reach the target"
		}
		return fmt.Sprintf("solved: c = %.10g makes ε_%s at epoch %d equal %g (%s)", s.Value, s.Quantity, s.Epoch, s.Target, uniq)
	}
	var xs []string
	for _, x := range s.Crossings {
		dir := "falling"
		if x.Rising {
			dir = "rising"
		}
		xs = append(xs, fmt.Sprintf("k = %.8g (%s)", x.Scale, dir))
	}
	return fmt.Sprintf("solved: η = %.8g/s² is the smallest step size with ε_%s at epoch %d = %g; ε_%s crosses %g at %s; its largest value at epoch %d over all η is %.6g, at k = %.6g",
		s.Value*p.S*p.S, s.Quantity, s.Epoch, s.Target, s.Quantity, s.Target, strings.Join(xs, ", "), s.Epoch, s.PeakEps, s.PeakEta*p.S*p.S)
}

// printCurve prints the curve report as a table with explanations.
func printCurve(w io.Writer, r Report) {
	p := r.Params
	if r.Construction != nil {
		printConstruction(w, *r.Construction)
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Cyclic SGLD on Bayesian linear regression (Heller & Fetaya §IV.B): D1 = %d × (x_h, c·x_h), D2 replaces one by (x_h/2, c·x_h/2)\n", p.N)
	fmt.Fprintf(w, "n = %d, α = %g, β = %g, x_h = %g, c = %s (%s), δ = %g\n", p.N, p.Alpha, p.Beta, p.XH, fmtG(p.C), p.CSource, p.Delta)
	fmt.Fprintf(w, "%s (%s), s = α + n·x_h²·β = %s, 1 − λ = ηs/2 = %s, λ^n = %s\n",
		etaText(p), p.EtaSrc, fmtG(p.S), fmtG(p.OneMinusLambda), fmtG(p.LambdaPowN))
	if s := solveText(r.Solve, p); s != "" {
		fmt.Fprintln(w, s)
	}
	if r.Posterior.Applies {
		fmt.Fprintf(w, "posterior: one draw is (%s, %g)-DP by %s, order ν = %.4g; domain γ1 = %g, x_l = %g\n",
			stats.FormatFloat(float64(r.Posterior.Epsilon)), p.Delta, r.Posterior.Source, r.Posterior.Order, p.Gamma1, p.XL)
	} else {
		fmt.Fprintf(w, "posterior: no guarantee from %s: %s\n", r.Posterior.Source, r.Posterior.Reason)
	}
	if p.XL > p.XH/2 {
		fmt.Fprintf(w, "note: x_l = %g > x_h/2, so D2's datum lies outside the domain and the posterior ε does not cover this pair\n", p.XL)
	}
	fmt.Fprintln(w)
	post := "n/a"
	if r.Posterior.Applies {
		post = stats.FormatFloat(float64(r.Posterior.Epsilon))
	}
	t := cli.NewTable(w, "epoch", "ε_chernoff", "ε_tail", "ε_threshold", "ε_profile", "ε_posterior")
	f := func(x stats.JSONFloat) string { return stats.FormatFloat(float64(x)) }
	peak, maxErr := -1, 0.0
	var inexact []string
	for i, row := range r.Rows {
		t.Append(strconv.Itoa(row.Epoch), f(row.EpsChernoff), f(row.EpsTail), f(row.EpsThreshold), f(row.EpsProfile), post)
		if peak < 0 || row.EpsProfile > r.Rows[peak].EpsProfile {
			peak = i
		}
		for _, x := range []stats.JSONFloat{row.Err.Chernoff, row.Err.Tail, row.Err.Threshold, row.Err.Profile} {
			maxErr = math.Max(maxErr, float64(x))
		}
		if !row.ProfileExact {
			inexact = append(inexact, strconv.Itoa(row.Epoch))
		}
	}
	t.Render()
	fmt.Fprintln(w)
	if peak >= 0 && r.Rows[peak].EpsProfile > 0 {
		pk := r.Rows[peak]
		fmt.Fprintf(w, "largest: ε_profile = %s at epoch %d (ε_chernoff %s, ε_tail %s, ε_threshold %s)\n",
			f(pk.EpsProfile), pk.Epoch, f(pk.EpsChernoff), f(pk.EpsTail), f(pk.EpsThreshold))
	}
	fmt.Fprintln(w, "ε_chernoff: the paper's Fig. 1 quantity — event θ > μ_j, P(θ̂_j > μ_j) replaced by the Chernoff bound of Lemma IV.5")
	fmt.Fprintln(w, "ε_tail: the same event with its exact probability (1/n) Σ_r Φ(−z_r)")
	fmt.Fprintln(w, "ε_threshold: the best half-line θ > t or θ < t, either dataset first")
	fmt.Fprintln(w, "ε_profile: the exact privacy profile, from the hockey-stick divergences between the Gaussian and the mixture")
	fmt.Fprintf(w, "All four are lower bounds at δ = %g, rounded down by their numerical error (largest error bound %.2g);\n", p.Delta, maxErr)
	fmt.Fprintln(w, "ε_posterior is an upper bound for one posterior draw (Lemma A.1 + Lemma IV.4, minimised over ν).")
	fmt.Fprintln(w, "Upper bounds for SGLD itself on this configuration:")
	for _, b := range r.SGLDBounds {
		if b.Applies && b.Epsilon != nil {
			fmt.Fprintf(w, "  %s: ε ≤ %s at δ = %g (epoch %d)\n", b.Source, stats.FormatFloat(float64(*b.Epsilon)), p.Delta, p.To)
		} else {
			fmt.Fprintf(w, "  %s: does not apply — %s\n", b.Source, b.Reason)
		}
	}
	if len(inexact) > 0 {
		fmt.Fprintf(w, "At epochs %s some mixture component is narrower than D1's Gaussian: ε_profile is a valid lower bound there but not certified exact.\n",
			strings.Join(inexact, ", "))
	}
}

func writeCurveCSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	g := func(x stats.JSONFloat) string { return strconv.FormatFloat(float64(x), 'g', -1, 64) }
	post := ""
	if r.Posterior.Applies {
		post = g(r.Posterior.Epsilon)
	}
	if err := cw.Write([]string{"epoch", "eps_chernoff", "eps_tail", "eps_threshold", "eps_profile", "eps_posterior",
		"err_chernoff", "err_tail", "err_threshold", "err_profile", "profile_exact"}); err != nil {
		return err
	}
	for _, row := range r.Rows {
		if err := cw.Write([]string{strconv.Itoa(row.Epoch), g(row.EpsChernoff), g(row.EpsTail), g(row.EpsThreshold),
			g(row.EpsProfile), post, g(row.Err.Chernoff), g(row.Err.Tail), g(row.Err.Threshold), g(row.Err.Profile),
			strconv.FormatBool(row.ProfileExact)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// curveTarget returns the ε′ the report aims at (solve or construction),
// or 0.
func curveTarget(r Report) float64 {
	switch {
	case r.Solve != nil:
		return r.Solve.Target
	case r.Construction != nil:
		return r.Construction.EpsilonPrime
	}
	return 0
}

// plotCurve draws the four curves, the posterior's ε and any target ε′
// with gonum/plot.
func plotCurve(w io.Writer, r Report, file string, logScale bool) error {
	p := newCurvePlot(r.Params, logScale)
	drawn, maxY, err := addCurveLines(p, r.Rows, logScale)
	if err != nil {
		return err
	}
	levels, top, err := addCurveLevels(p, r, logScale)
	if err != nil {
		return err
	}
	if drawn+levels == 0 {
		return cli.Usagef("--plot: nothing to draw (every ε is 0 and the axis is logarithmic)")
	}
	maxY = math.Max(maxY, top)
	// Head room for the legend in the top left corner.
	if logScale {
		p.Y.Max = math.Max(p.Y.Max, maxY*60)
	} else {
		p.Y.Max = math.Max(p.Y.Max, maxY*1.5)
	}
	p.X.Tick.Marker = epochTicks{}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	c, err := draw.NewFormattedCanvas(16*vg.Centimeter, 10*vg.Centimeter, format)
	if err != nil {
		return err
	}
	// A margin round the plot, so that the title is not cut at the edge.
	m := vg.Points(6)
	p.Draw(draw.Crop(draw.New(c), m, -m, m, -m))
	_, err = c.WriteTo(w)
	return err
}

// newCurvePlot is the plot's frame: title, axes, legend's place.
func newCurvePlot(pr Params, logScale bool) *plot.Plot {
	p := plot.New()
	// The title fits the picture's width: the step in its short form (the
	// exact η is in the table, CSV and JSON).
	eta := "η = " + fmtG(pr.Eta)
	if pr.EtaScale > 0 {
		eta = "η = " + fmtG(pr.EtaScale) + "/s²"
	}
	p.Title.Text = fmt.Sprintf("Cyclic SGLD: n = %d, c = %s, %s, δ = %g", pr.N, fmtG(pr.C), eta, pr.Delta)
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "ε"
	p.Title.Padding = vg.Points(6)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), -vg.Points(4)
	if logScale {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	return p
}

// curveSeries are the four curves, in the order of their colours.
var curveSeries = []struct {
	name string
	get  func(Row) stats.JSONFloat
}{
	{"ε_chernoff (paper's Fig. 1)", func(x Row) stats.JSONFloat { return x.EpsChernoff }},
	{"ε_tail (same event, exact)", func(x Row) stats.JSONFloat { return x.EpsTail }},
	{"ε_threshold (best half-line)", func(x Row) stats.JSONFloat { return x.EpsThreshold }},
	{"ε_profile (exact profile)", func(x Row) stats.JSONFloat { return x.EpsProfile }},
}

// addCurveLines draws the four curves (on a log axis, without their
// points at ε = 0) and returns how many it drew and their largest ε.
func addCurveLines(p *plot.Plot, rows []Row, logScale bool) (drawn int, maxY float64, err error) {
	for i, s := range curveSeries {
		var xys plotter.XYs
		for _, row := range rows {
			y := float64(s.get(row))
			if logScale && !(y > 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(row.Epoch), Y: y})
			maxY = math.Max(maxY, y)
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return 0, 0, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		if i == 2 {
			l.Width = vg.Points(3) // the profile is drawn dashed over it
		}
		if i == 3 {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(s.name, l)
		drawn++
	}
	return drawn, maxY, nil
}

// addCurveLevels draws the posterior's ε and the target ε′ as horizontal
// lines over the epochs, and returns how many it drew and the target (0
// without one).
func addCurveLevels(p *plot.Plot, r Report, logScale bool) (drawn int, target float64, err error) {
	hline := func(y float64, c color.Color, dashes []vg.Length, label string) error {
		if len(r.Rows) == 0 || (logScale && !(y > 0)) {
			return nil
		}
		l, err := plotter.NewLine(plotter.XYs{{X: float64(r.Rows[0].Epoch), Y: y}, {X: float64(r.Rows[len(r.Rows)-1].Epoch), Y: y}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes = c, dashes
		p.Add(l)
		p.Legend.Add(label, l)
		drawn++
		return nil
	}
	if r.Posterior.Applies {
		if err := hline(float64(r.Posterior.Epsilon), color.Gray{Y: 80}, []vg.Length{vg.Points(4), vg.Points(3)}, "posterior ε (upper bound)"); err != nil {
			return 0, 0, err
		}
	}
	if t := curveTarget(r); t > 0 {
		if err := hline(t, color.RGBA{R: 200, A: 255}, []vg.Length{vg.Points(1), vg.Points(2)}, fmt.Sprintf("target ε′ = %g", t)); err != nil {
			return 0, 0, err
		}
		target = t
	}
	return drawn, target, nil
}

// epochTicks puts labelled ticks on multiples of 1, 2 or 5 × 10^k epochs,
// about six of them.
type epochTicks struct{}

// Ticks implements plot.Ticker.
func (epochTicks) Ticks(lo, hi float64) []plot.Tick {
	span := math.Max(hi-lo, 1)
	step := math.Pow(10, math.Floor(math.Log10(span/6)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*step) <= 7 {
			step *= m
			break
		}
	}
	step = math.Max(step, 1)
	var ticks []plot.Tick
	for x := math.Ceil(lo/step) * step; x <= hi; x += step {
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
	}
	return ticks
}

// curveHTML renders the curve report as one self-contained HTML page.
func curveHTML(w io.Writer, r Report, logScale bool, print func(io.Writer, Report)) error {
	var text, svg bytes.Buffer
	print(&text, r)
	if err := plotCurve(&svg, r, "curve.svg", logScale); err != nil {
		return err
	}
	header := []string{"epoch", "ε_chernoff", "ε_tail", "ε_threshold", "ε_profile", "ε_posterior"}
	f := func(x stats.JSONFloat) string { return stats.FormatFloat(float64(x)) }
	post := "n/a"
	if r.Posterior.Applies {
		post = f(r.Posterior.Epsilon)
	}
	var rows [][]string
	for _, row := range r.Rows {
		rows = append(rows, []string{strconv.Itoa(row.Epoch), f(row.EpsChernoff), f(row.EpsTail), f(row.EpsThreshold), f(row.EpsProfile), post})
	}
	verdict := "no posterior guarantee: " + r.Posterior.Reason
	if r.Posterior.Applies {
		verdict = fmt.Sprintf("One posterior draw is (%s, %g)-DP (%s): the curves show how far cyclic SGLD is from it.",
			f(r.Posterior.Epsilon), r.Params.Delta, r.Posterior.Source)
	}
	if s := solveText(r.Solve, r.Params); s != "" {
		verdict += " " + strings.ToUpper(s[:1]) + s[1:] + "."
	}
	if c := r.Construction; c != nil {
		verdict = constructionVerdict(*c)
	}
	p := r.Params
	return report.WriteHTMLPage(w, report.HTMLPage{
		Title: "Interim-region counterexample: exact privacy loss of cyclic SGLD",
		Subtitle: fmt.Sprintf("Heller & Fetaya §IV.B: n = %d, α = %g, β = %g, x_h = %g, c = %s, %s, δ = %g",
			p.N, p.Alpha, p.Beta, p.XH, fmtG(p.C), etaText(p), p.Delta),
		Verdict: verdict,
		Sections: []report.HTMLSection{
			{Heading: "Lower bounds on ε per epoch", Body: report.HTMLPlot(svg.Bytes())},
			{Heading: "Values", Body: report.HTMLTable(header, rows, -1)},
			{Heading: "Report as printed", Body: template.HTML("<pre>" + template.HTMLEscapeString(text.String()) + "</pre>")},
		},
		Footer: "mcmcaudit · audit curve",
	})
}
