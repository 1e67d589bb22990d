package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/report"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxEpochRange bounds TO − FROM + 1 of --epochs.
const maxEpochRange = 100000

// curveParams is the "params" object of "audit curve --json".
type curveParams struct {
	N        int     `json:"n"`
	Alpha    float64 `json:"alpha"`
	Beta     float64 `json:"beta"`
	XH       float64 `json:"xh"`
	XL       float64 `json:"xl"`
	Gamma1   float64 `json:"gamma1"`
	C        float64 `json:"c"`
	CSource  string  `json:"c_source"`
	Eta      float64 `json:"eta"`
	EtaScale float64 `json:"eta_scale,omitempty"`
	Delta    float64 `json:"delta"`
	From     int     `json:"epoch_from"`
	To       int     `json:"epoch_to"`
	LemmaA1  string  `json:"lemma_a1"`
	// Derived.
	S              float64 `json:"s"`
	OneMinusLambda float64 `json:"one_minus_lambda"`
	LambdaPowN     float64 `json:"lambda_pow_n"`
}

// curveSGLDBound is one theorem's verdict on SGLD for the counterexample.
type curveSGLDBound struct {
	Source  string           `json:"source"`
	Applies bool             `json:"applies"`
	Epsilon *stats.JSONFloat `json:"epsilon,omitempty"`
	Reason  string           `json:"reason,omitempty"`
}

// curvePosterior is the posterior's ε (Lemma IV.4), constant over epochs.
type curvePosterior struct {
	Applies bool            `json:"applies"`
	Epsilon stats.JSONFloat `json:"epsilon,omitempty"`
	Order   float64         `json:"order,omitempty"`
	Source  string          `json:"source"`
	Reason  string          `json:"reason,omitempty"`
}

type curveErrs struct {
	Chernoff  stats.JSONFloat `json:"chernoff"`
	Tail      stats.JSONFloat `json:"tail"`
	Threshold stats.JSONFloat `json:"threshold"`
	Profile   stats.JSONFloat `json:"profile"`
}

type curveRow struct {
	Epoch        int             `json:"epoch"`
	EpsChernoff  stats.JSONFloat `json:"eps_chernoff"`
	EpsTail      stats.JSONFloat `json:"eps_tail"`
	EpsThreshold stats.JSONFloat `json:"eps_threshold"`
	EpsProfile   stats.JSONFloat `json:"eps_profile"`
	Err          curveErrs       `json:"err"`
	ProfileExact bool            `json:"profile_exact"`
}

type curveReport struct {
	Params    curveParams    `json:"params"`
	Posterior curvePosterior `json:"posterior"`
	// SGLDBounds lists the theoretical upper bounds for SGLD itself on this
	// configuration, each with the assumption that fails when it does not
	// apply (at the last epoch's iteration count).
	SGLDBounds []curveSGLDBound `json:"sgld_upper_bounds"`
	Rows       []curveRow       `json:"rows"`
	Note       string           `json:"note"`
}

const curveNote = "Each eps_* is a lower bound on the epsilon of (epsilon, delta)-DP for releasing the SGLD iterate " +
	"after that many epochs, rounded down by its numerical error; err.* bounds how far the exact value can lie above it. " +
	"eps_chernoff: the paper's Fig. 1 quantity (event theta > mu_j, Chernoff bound of Lemma IV.5); eps_tail: the same event " +
	"with its exact probability; eps_threshold: the best half-line theta > t or theta < t, both directions; " +
	"eps_profile: the exact privacy profile (hockey-stick divergence between the Gaussian and the n-component mixture, " +
	"both directions; exact when profile_exact). posterior.epsilon is an upper bound for one posterior draw " +
	"(Lemma A.1 + Lemma IV.4, minimised over the Renyi order)."

func runCurve(args []string, e *env) error {
	fs := newFlagSet("curve (--c C | --c-max-private EPS) [flags]",
		"Exact lower bounds on the privacy loss of cyclic SGLD in the interim region (Heller & Fetaya §IV.B):\n"+
			"D1 = n copies of (x_h, c·x_h), D2 replaces one by (x_h/2, c·x_h/2); the output after each epoch is a Gaussian\n"+
			"(D1) versus a uniform mixture of n Gaussians (D2). Defaults are the Fig. 1 caption's parameters.")
	var p curveParams
	var cMaxPrivate float64
	var epochs, variant, jsonOut, csvOut, plotOut, htmlOut string
	var logScale bool
	fs.intVar(&p.N, "n", 17864389, 1, 1<<53, "dataset size n,")
	fs.floatVar(&p.Alpha, "alpha", 2, "(0, ∞)", positive, "prior precision α,")
	fs.floatVar(&p.Beta, "beta", 1, "(0, ∞)", positive, "noise precision β,")
	fs.floatVar(&p.XH, "xh", 1.8, "(0, ∞)", positive, "covariate x_h of D1,")
	fs.floatVar(&p.XL, "xl", 0, "(0, ∞)", positive, "lower covariate bound x_l of the domain (default x_h/2),")
	fs.floatVar(&p.Gamma1, "gamma1", 0.1, "(0, 0.5)", func(x float64) bool { return x > 0 && x < 0.5 },
		"domain parameter γ1 (|y/x − c| ≤ n^γ1),")
	fs.floatVar(&p.C, "c", 0, "(0, ∞)", positive, "slope c of the data, y = c·x,")
	fs.floatVar(&cMaxPrivate, "c-max-private", 0, "(0, ∞)", positive,
		"use the largest c whose posterior is (EPS, δ)-DP by Lemma A.1 + IV.4; EPS in")
	fs.floatVar(&p.EtaScale, "eta-scale", 2, "(0, ∞)", positive, "step size η = k/s², s = α + n·x_h²·β; k in")
	fs.floatVar(&p.Eta, "eta", 0, "(0, 2/s)", positive, "step size η directly (instead of --eta-scale),")
	fs.floatVar(&p.Delta, "delta", 0.001, "(0, 1)", inUnitOpen, "δ of the (ε, δ) statements, in")
	fs.StringVar(&epochs, "epochs", "1:70", "epochs FROM:TO, inclusive; epoch 0 is the prior draw (ε = 0)")
	fs.StringVar(&variant, "lemma-a1", "conservative", "reading of Lemma A.1 for the posterior ε: conservative or printed")
	fs.StringVar(&jsonOut, "json", "", "write params and rows as JSON to FILE (- for stdout)")
	fs.StringVar(&csvOut, "csv", "", "write the rows as CSV to FILE (- for stdout)")
	fs.StringVar(&plotOut, "plot", "", "plot the curves to FILE.svg or FILE.png")
	fs.StringVar(&htmlOut, "html", "", "write a self-contained HTML report (table and plot) to FILE (- for stdout)")
	fs.BoolVar(&logScale, "log-scale", false, "use a logarithmic ε axis in --plot (points with ε = 0 are left out)")
	if err := fs.parse(args, e, 0); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	switch {
	case set["c"] && set["c-max-private"]:
		return usagef("--c and --c-max-private are exclusive")
	case !set["c"] && !set["c-max-private"]:
		return usagef("--c or --c-max-private is required")
	case set["eta"] && set["eta-scale"]:
		return usagef("--eta and --eta-scale are exclusive")
	}
	if !set["xl"] {
		p.XL = p.XH / 2
	}
	if p.XL > p.XH {
		return usagef("--xl: must be in (0, x_h] = (0, %g], got %g", p.XH, p.XL)
	}
	var err error
	if p.From, p.To, err = parseEpochs(epochs); err != nil {
		return err
	}
	var v closedform.LemmaA1Variant
	switch variant {
	case "conservative":
		v = closedform.A1Conservative
	case "printed":
		v = closedform.A1Printed
	default:
		return usagef("--lemma-a1: must be conservative or printed, got %q", variant)
	}
	p.LemmaA1 = v.String()
	if plotOut != "" {
		if ext := strings.ToLower(filepath.Ext(plotOut)); ext != ".svg" && ext != ".png" {
			return usagef("--plot: file name must end in .svg or .png, got %q", plotOut)
		}
	}
	if jsonOut == "-" && csvOut == "-" {
		return usagef("--json and --csv cannot both write to stdout")
	}
	outs := []struct {
		o    output
		name string
	}{{output(jsonOut), "json"}, {output(csvOut), "csv"}, {output(plotOut), "plot"}}
	for _, o := range outs {
		if err := o.o.checkWritable(o.name); err != nil {
			return err
		}
	}

	dom := closedform.LinRegDomain{N: p.N, Alpha: p.Alpha, Beta: p.Beta, Gamma1: p.Gamma1, XH: p.XH, XL: p.XL}
	if set["c-max-private"] {
		c, err := dom.MaxPrivateC(cMaxPrivate, p.Delta, v)
		if err != nil {
			return usagef("--c-max-private: %v", err)
		}
		if math.IsInf(c, 1) {
			return usagef("--c-max-private: every c gives an (%g, %g)-DP posterior", cMaxPrivate, p.Delta)
		}
		p.C = c
		p.CSource = fmt.Sprintf("largest c with a (%g, %g)-DP posterior (Lemma A.1 %s + Lemma IV.4)", cMaxPrivate, p.Delta, v)
	} else {
		p.CSource = "--c"
	}
	ce := closedform.Counterexample{N: p.N, Alpha: p.Alpha, Beta: p.Beta, XH: p.XH, C: p.C}
	p.S = ce.S()
	if set["eta"] {
		ce.Eta = p.Eta
		p.EtaScale = 0
	} else {
		ce.Eta = ce.EtaScaled(p.EtaScale)
		p.Eta = ce.Eta
	}
	if err := ce.Validate(); err != nil {
		name := strings.SplitN(err.Error(), ":", 2)[0]
		if name == "eta" && !set["eta"] {
			return usagef("--eta-scale: η = %g/s² = %g is not in (0, 2/s) = (0, %g); k must be below 2s = %g",
				p.EtaScale, ce.Eta, 2/p.S, 2*p.S)
		}
		return usageError{"--" + err.Error()}
	}
	p.OneMinusLambda = ce.Eta * p.S / 2
	p.LambdaPowN = math.Exp(float64(p.N) * math.Log1p(-p.OneMinusLambda))

	rep := curveReport{Params: p, Note: curveNote}
	dom.C = p.C
	g := dom.PosteriorGuarantee(v)
	rep.Posterior.Source = g.Source + " (" + g.Variant + " reading)"
	if g.Applies {
		eps, nu, err := dom.PosteriorDP(p.Delta, v)
		if err != nil {
			return usageError{"--" + err.Error()}
		}
		rep.Posterior.Applies, rep.Posterior.Epsilon, rep.Posterior.Order = true, stats.JSONFloat(eps), nu
	} else {
		rep.Posterior.Reason = g.Reason
	}

	// The SGLD theorems, for cyclic batch-1 SGLD on this model and pair: the
	// records whose gradients matter are the two kinds in D1 ∪ D2.
	sg := &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: ce.Eta}, Batch: 1, Scheme: mechanisms.Cyclic, Epochs: max(p.To, 1)}
	recs := []dataset.Record{{X: []float64{p.XH}, Y: p.C * p.XH}, {X: []float64{p.XH / 2}, Y: p.C * p.XH / 2}}
	for _, g := range mechanisms.SamplerGuarantees(sg, mechanisms.Setting{Model: mechanisms.NewLinReg1D(p.Alpha, p.Beta), Records: recs, Adjacency: dataset.ReplaceOne, N: p.N, Iterations: max(p.To, 1) * p.N}) {
		b := curveSGLDBound{Source: mechanisms.GuaranteeLabel(g), Applies: g.Applies, Reason: g.Reason}
		if g.Applies {
			if eps, err := g.Epsilon(p.Delta); err == nil {
				v := stats.JSONFloat(eps)
				b.Epsilon = &v
			}
		}
		rep.SGLDBounds = append(rep.SGLDBounds, b)
	}

	curves, err := ce.CurveRange(p.From, p.To, p.Delta)
	if err != nil {
		// Only parameter errors are returned, e.g. a c too large for float64.
		return usageError{"--" + err.Error()}
	}
	for _, c := range curves {
		rep.Rows = append(rep.Rows, curveRow{
			Epoch:        c.Epoch,
			EpsChernoff:  stats.JSONFloat(c.Chernoff.Epsilon),
			EpsTail:      stats.JSONFloat(c.Tail.Epsilon),
			EpsThreshold: stats.JSONFloat(c.Threshold.Epsilon),
			EpsProfile:   stats.JSONFloat(c.Profile.Epsilon),
			Err: curveErrs{stats.JSONFloat(c.Chernoff.Err), stats.JSONFloat(c.Tail.Err),
				stats.JSONFloat(c.Threshold.Err), stats.JSONFloat(c.Profile.Err)},
			ProfileExact: c.ProfileExact,
		})
	}

	// Render the plot before printing anything, so that a plot that cannot
	// be drawn fails the command cleanly.
	var plotBuf bytes.Buffer
	if plotOut != "" {
		if err := plotCurve(&plotBuf, rep, plotOut, logScale); err != nil {
			return err
		}
	}
	if err := output(htmlOut).checkWritable("html"); err != nil {
		return err
	}
	var htmlBuf bytes.Buffer
	if htmlOut != "" {
		if err := curveHTML(&htmlBuf, rep, logScale); err != nil {
			return err
		}
	}
	if jsonOut != "-" && csvOut != "-" && htmlOut != "-" {
		printCurve(e.stdout, rep)
	}
	if err := output(htmlOut).write(e, func(w io.Writer) error { _, err := htmlBuf.WriteTo(w); return err }); err != nil {
		return err
	}
	if err := output(plotOut).write(e, func(w io.Writer) error { _, err := plotBuf.WriteTo(w); return err }); err != nil {
		return err
	}
	if err := output(csvOut).write(e, func(w io.Writer) error { return writeCurveCSV(w, rep) }); err != nil {
		return err
	}
	return output(jsonOut).writeJSON(e, rep)
}

// parseEpochs parses FROM:TO.
func parseEpochs(s string) (from, to int, err error) {
	a, b, ok := strings.Cut(s, ":")
	bad := usagef("--epochs: must be FROM:TO with integers 0 ≤ FROM ≤ TO and at most %d epochs, got %q", maxEpochRange, s)
	if !ok {
		return 0, 0, bad
	}
	f, err1 := strconv.Atoi(strings.TrimSpace(a))
	t, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || f < 0 || t < f || t-f >= maxEpochRange {
		return 0, 0, bad
	}
	return f, t, nil
}

// etaText describes the step size as chosen.
func etaText(p curveParams) string {
	if p.EtaScale > 0 {
		return fmt.Sprintf("η = %g/s² = %s", p.EtaScale, fmtG(p.Eta))
	}
	return fmt.Sprintf("η = %s (= %.6g/s²)", fmtG(p.Eta), p.Eta*p.S*p.S)
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func printCurve(w io.Writer, r curveReport) {
	p := r.Params
	fmt.Fprintf(w, "Cyclic SGLD on Bayesian linear regression (Heller & Fetaya §IV.B): D1 = %d × (x_h, c·x_h), D2 replaces one by (x_h/2, c·x_h/2)\n", p.N)
	fmt.Fprintf(w, "n = %d, α = %g, β = %g, x_h = %g, c = %s (%s), δ = %g\n", p.N, p.Alpha, p.Beta, p.XH, fmtG(p.C), p.CSource, p.Delta)
	fmt.Fprintf(w, "%s, s = α + n·x_h²·β = %s, 1 − λ = ηs/2 = %s, λ^n = %s\n",
		etaText(p), fmtG(p.S), fmtG(p.OneMinusLambda), fmtG(p.LambdaPowN))
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
	t := newTable(w, "epoch", "ε_chernoff", "ε_tail", "ε_threshold", "ε_profile", "ε_posterior")
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

func writeCurveCSV(w io.Writer, r curveReport) error {
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

// plotCurve draws the four curves and the posterior's ε with gonum/plot.
func plotCurve(w io.Writer, r curveReport, file string, logScale bool) error {
	p := plot.New()
	pr := r.Params
	p.Title.Text = fmt.Sprintf("Cyclic SGLD, n = %d, c = %s, %s, δ = %g", pr.N, fmtG(pr.C), etaText(pr), pr.Delta)
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "ε"
	p.Title.Padding = vg.Points(6)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), -vg.Points(4)
	if logScale {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	series := []struct {
		name string
		get  func(curveRow) stats.JSONFloat
	}{
		{"ε_chernoff (paper's Fig. 1)", func(x curveRow) stats.JSONFloat { return x.EpsChernoff }},
		{"ε_tail (same event, exact)", func(x curveRow) stats.JSONFloat { return x.EpsTail }},
		{"ε_threshold (best half-line)", func(x curveRow) stats.JSONFloat { return x.EpsThreshold }},
		{"ε_profile (exact profile)", func(x curveRow) stats.JSONFloat { return x.EpsProfile }},
	}
	drawn, maxY := 0, 0.0
	for i, s := range series {
		var xys plotter.XYs
		for _, row := range r.Rows {
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
			return err
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
	if r.Posterior.Applies && len(r.Rows) > 0 && (!logScale || r.Posterior.Epsilon > 0) {
		y := float64(r.Posterior.Epsilon)
		l, err := plotter.NewLine(plotter.XYs{{X: float64(r.Rows[0].Epoch), Y: y}, {X: float64(r.Rows[len(r.Rows)-1].Epoch), Y: y}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 80}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("posterior ε (upper bound)", l)
		drawn++
	}
	if drawn == 0 {
		return usagef("--plot: nothing to draw (every ε is 0 and the axis is logarithmic)")
	}
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
func curveHTML(w io.Writer, r curveReport, logScale bool) error {
	var text, svg bytes.Buffer
	printCurve(&text, r)
	if err := plotCurve(&svg, r, "curve.svg", logScale); err != nil {
		return err
	}
	header := []string{"epoch", "ε_chernoff", "ε_tail", "ε_threshold", "ε_profile"}
	f := func(x stats.JSONFloat) string { return stats.FormatFloat(float64(x)) }
	var rows [][]string
	for _, row := range r.Rows {
		rows = append(rows, []string{strconv.Itoa(row.Epoch), f(row.EpsChernoff), f(row.EpsTail), f(row.EpsThreshold), f(row.EpsProfile)})
	}
	post := "no posterior guarantee: " + r.Posterior.Reason
	if r.Posterior.Applies {
		post = fmt.Sprintf("One posterior draw is (%s, %g)-DP (%s): the curves show how far cyclic SGLD is from it.",
			stats.FormatFloat(float64(r.Posterior.Epsilon)), r.Params.Delta, r.Posterior.Source)
	}
	p := r.Params
	return report.WriteHTMLPage(w, report.HTMLPage{
		Title: "Interim-region counterexample: exact privacy loss of cyclic SGLD",
		Subtitle: fmt.Sprintf("Heller & Fetaya §IV.B: n = %d, α = %g, β = %g, x_h = %g, c = %s, %s, δ = %g",
			p.N, p.Alpha, p.Beta, p.XH, fmtG(p.C), etaText(p), p.Delta),
		Verdict: post,
		Sections: []report.HTMLSection{
			{Heading: "Lower bounds on ε per epoch", Body: report.HTMLPlot(svg.Bytes())},
			{Heading: "Values", Body: report.HTMLTable(header, rows, -1)},
			{Heading: "Report as printed", Body: template.HTML("<pre>" + template.HTMLEscapeString(text.String()) + "</pre>")},
		},
		Footer: "mcmcaudit · audit curve",
	})
}
