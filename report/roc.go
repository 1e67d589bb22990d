package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The ROC curve of the attack the headline ε_lb rests on, at the
// headline's release, as users of membership-inference tools draw it:
// log-log axes, the TPR at FPR 1% and 0.1% marked. It is descriptive —
// no guarantee, no confidence — and drawn from the same outcomes as the
// descriptive table (audit.Descriptive.ROC): the evaluation runs of the
// multi-run design, with the ε_lb attack and its orientation, or the
// canaries of the one-run design.

// ROCTitle heads the ROC curve in the HTML page.
const ROCTitle = "ROC curve of the ε_lb attack — descriptive, no guarantee"

// rocRelease returns the release whose ROC curve the reports draw
// (audit.Report.ROCRelease); −1 when it has no curve.
func rocRelease(r *audit.Report) int {
	k := r.ROCRelease()
	if k < 0 {
		return -1
	}
	if d := r.Points[k].Descriptive; d == nil || len(d.ROC) < 2 {
		return -1
	}
	return k
}

// rocMark is a marked point of the ROC curve: the TPR at an FPR.
type rocMark struct {
	fpr, tpr float64
	name     string
	shape    draw.GlyphDrawer
}

// rocPanel returns the panel of the ROC curve at release k: a log-log
// plot of TPR against FPR with the chance line, the TPR at FPR 1% and
// 0.1% marked (where the outcomes resolve that FPR), and its legend.
func rocPanel(r *audit.Report, k int) (panel, error) {
	pr := &r.Points[k]
	d := pr.Descriptive
	var curve plotter.XYs
	minFPR, minTPR := 1.0, 1.0
	for i, p := range d.ROC {
		minFPR = math.Min(minFPR, p.FPR)
		if p.TPR <= 0 {
			continue
		}
		// Steps: the TPR holds from one sampled FPR to the next.
		if i > 0 && d.ROC[i-1].TPR > 0 && d.ROC[i-1].TPR != p.TPR {
			curve = append(curve, plotter.XY{X: p.FPR, Y: d.ROC[i-1].TPR})
		}
		curve = append(curve, plotter.XY{X: p.FPR, Y: p.TPR})
		minTPR = math.Min(minTPR, p.TPR)
	}
	xMin := math.Pow(10, math.Floor(math.Log10(minFPR)+1e-9))
	yMin := math.Min(xMin, math.Pow(10, math.Floor(math.Log10(minTPR)+1e-9)))

	p := plot.New()
	what, outcomes := fmt.Sprintf("the %s attack", pr.Attacks[bestAttack(*pr, primaryName(*pr))].Attack), "evaluation runs (positive: a run on D′)"
	if fromGuesses(r) {
		what, outcomes = "the canary score ranking", "canaries (positive: a canary included)"
	}
	title := fmt.Sprintf("%s: ROC of %s at %s — descriptive, no guarantee", ClipName(r.Name, TitleNameRunes), what, pr.Point.Label)
	p.Title.Text = wrapStyled(p.Title.TextStyle, title, plotWidth-2*plotMargin)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "false-positive rate (log)"
	p.Y.Label.Text = "true-positive rate (log)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	p.Add(plotter.NewGrid())

	chance, err := plotter.NewLine(plotter.XYs{{X: yMin, Y: yMin}, {X: 1, Y: 1}})
	if err != nil {
		return panel{}, err
	}
	chance.Color = color.Gray{Y: 140}
	chance.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	chance.Width = vg.Points(1)
	p.Add(chance)
	entries := []legendEntry{}
	if len(curve) > 0 {
		l, err := plotter.NewLine(curve)
		if err != nil {
			return panel{}, err
		}
		l.Color = plotutil.Color(0)
		l.Width = vg.Points(2)
		p.Add(l)
		entries = append(entries, legendEntry{
			text: fmt.Sprintf("ROC of %s at %s on the %s, AUROC %.4f: descriptive — no guarantee, no confidence (the TPR at each FPR is the largest among the thresholds whose FPR is at most it)",
				what, pr.Point.Label, outcomes, float64(d.AUROC)),
			thumbs: []plot.Thumbnailer{l}})
	}
	marks := []rocMark{
		{0.01, float64(d.TPRAt1), "TPR at FPR 1%", draw.CircleGlyph{}},
		{0.001, float64(d.TPRAt01), "TPR at FPR 0.1%", draw.BoxGlyph{}},
	}
	for _, m := range marks {
		text := fmt.Sprintf("%s = %.4f (as in the descriptive table)", m.name, m.tpr)
		switch {
		case m.fpr < minFPR:
			entries = append(entries, legendEntry{text: fmt.Sprintf("%s; not drawn: the outcomes have no FPR between 0 and %.4g (1 negative in %d), so it is the TPR at FPR 0, off the log axis",
				text, minFPR, int(math.Round(1/minFPR)))})
			continue
		case !(m.tpr > 0):
			entries = append(entries, legendEntry{text: text + "; not drawn: 0 is off the log axis"})
			continue
		}
		sc, err := plotter.NewScatter(plotter.XYs{{X: m.fpr, Y: m.tpr}})
		if err != nil {
			return panel{}, err
		}
		sc.Shape, sc.Color, sc.Radius = m.shape, color.Black, vg.Points(4.5)
		p.Add(sc)
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: m.fpr, Y: m.tpr}}, Labels: []string{fmt.Sprintf("%.4f", m.tpr)}})
		if err != nil {
			return panel{}, err
		}
		lab.Offset = vg.Point{X: vg.Points(6), Y: -vg.Points(12)}
		p.Add(lab)
		entries = append(entries, legendEntry{text: text, thumbs: []plot.Thumbnailer{sc}})
	}
	entries = append(entries, legendEntry{text: "chance: TPR = FPR", thumbs: []plot.Thumbnailer{chance}})
	p.X.Min, p.X.Max = xMin, 1
	p.Y.Min, p.Y.Max = yMin, 1.15
	return panel{draw: func(c draw.Canvas) { p.Draw(c) }, entries: entries}, nil
}

// WriteROCPlot draws the ROC curve of the attack the headline ε_lb rests
// on, at the headline's release, in SVG or PNG (log-log, the TPR at FPR
// 1% and 0.1% marked, labelled descriptive). It reports false, writing
// nothing, when the report has no ROC curve.
func WriteROCPlot(w io.Writer, format string, r *audit.Report) (bool, error) {
	k := rocRelease(r)
	if k < 0 {
		return false, nil
	}
	pn, err := rocPanel(r, k)
	if err != nil {
		return false, err
	}
	return true, drawPanels(w, format, []panel{pn})
}

// logTicks marks a logarithmic axis of rates: 1, 0.1, 0.01, … labelled,
// 2 and 5 times each power unlabelled.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for _, m := range []float64{1, 2, 5} {
			v := m * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = rateLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// rateLabel writes a power of ten as a rate: 1, 0.1, …, 0.0001, then
// 1e-05 and below.
func rateLabel(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
