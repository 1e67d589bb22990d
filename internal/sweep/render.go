package sweep

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writeSweepTable prints the sweep: one row per value (and series value),
// one column per theorem, then the accuracy columns.
func writeSweepTable(w io.Writer, cfg *scenario.Config, plan *scenario.Plan, sets []string, what, series string, delta float64, labels []string, rows []Row) {
	fmt.Fprintf(w, "scenario   %s\nmechanism  %s\n", report.ClipName(cfg.Name, report.NameRunes), mechanisms.NameOf(plan.Mechanism))
	if len(sets) > 0 {
		fmt.Fprintf(w, "fixed      %s\n", strings.Join(sets, ", "))
	}
	fmt.Fprintf(w, "sweep      %s", what)
	if series != "" {
		fmt.Fprintf(w, ", one series per %s", series)
	}
	fmt.Fprintf(w, "; ε at δ = %g\n\n", delta)
	header := []string{what}
	if series != "" {
		header = append(header, series)
	}
	header = append(header, labels...)
	hasAcc := len(rows) > 0 && rows[0].Accuracy != nil
	if hasAcc {
		header = append(header, "max |mean err|/sd", "sd ratio", "p mean / KS", "acceptance")
	}
	t := cli.NewTable(w, header...)
	for _, r := range rows {
		cells := []string{fmtG(r.Value)}
		if r.Series != nil {
			cells = append(cells, fmtG(*r.Series))
		}
		for _, l := range labels {
			if e, ok := r.Epsilon[l]; ok {
				cells = append(cells, stats.FormatFloat(float64(e)))
			} else {
				cells = append(cells, "does not apply")
			}
		}
		if a := r.Accuracy; a != nil {
			acc := "n/a"
			if a.AcceptanceRate != nil {
				acc = fmt.Sprintf("%.3g", *a.AcceptanceRate)
			}
			cells = append(cells, fmt.Sprintf("%.3g", a.MaxMeanErrorSD), fmt.Sprintf("%.3g–%.3g", a.SDRatioMin, a.SDRatioMax),
				fmt.Sprintf("%.2g / %.2g", a.MeanPValue, a.KSPValue), acc)
		}
		row := make([]any, len(cells))
		for i, c := range cells {
			row[i] = c
		}
		t.Append(row...)
	}
	t.Render()
	if hasAcc {
		fmt.Fprintf(w, "Accuracy: %d runs of the sampler on D at each value, final states against the exact posterior of D\n", rows[0].Accuracy.Runs)
		fmt.Fprintln(w, "(mean error in posterior standard deviations; SD ratio; p-values of the χ² mean test and of the KS test).")
	}
}

// writeSweepCSV writes one row per point.
func writeSweepCSV(w io.Writer, what string, labels []string, rows []Row) error {
	var b strings.Builder
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	head := []string{q(what), "series"}
	for _, l := range labels {
		head = append(head, q("epsilon:"+l))
	}
	head = append(head, "runs", "max_abs_mean_error_sd", "sd_ratio_min", "sd_ratio_max", "mean_p_value", "ks_p_value", "acceptance_rate")
	b.WriteString(strings.Join(head, ",") + "\n")
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range rows {
		cells := []string{g(r.Value), ""}
		if r.Series != nil {
			cells[1] = g(*r.Series)
		}
		for _, l := range labels {
			if e, ok := r.Epsilon[l]; ok {
				cells = append(cells, g(float64(e)))
			} else {
				cells = append(cells, "")
			}
		}
		if a := r.Accuracy; a != nil {
			acc := ""
			if a.AcceptanceRate != nil {
				acc = g(*a.AcceptanceRate)
			}
			cells = append(cells, strconv.Itoa(a.Runs), g(a.MaxMeanErrorSD), g(a.SDRatioMin), g(a.SDRatioMax), g(a.MeanPValue), g(a.KSPValue), acc)
		} else {
			cells = append(cells, "", "", "", "", "", "", "")
		}
		b.WriteString(strings.Join(cells, ",") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plotSweep draws ε at δ against the parameter, one line per theorem and
// series value; with accuracy figures, a second panel draws the mean
// error (posterior SDs) against the first theorem's ε: the trade-off.
func plotSweep(w io.Writer, file, name, what, series string, delta float64, logX bool, labels []string, rows []Row) error {
	p, err := epsilonPanel(name, what, series, delta, logX, labels, rows)
	if err != nil {
		return err
	}
	plots := []*plot.Plot{p}
	if len(labels) > 0 && len(rows) > 0 && rows[0].Accuracy != nil {
		q, err := accuracyPanel(what, delta, labels[0], rows)
		if err != nil {
			return err
		}
		plots = append(plots, q)
	}
	return drawPanels(w, file, plots)
}

// epsilonPanel draws ε at δ against the swept parameter: one line per
// theorem and series value.
func epsilonPanel(name, what, series string, delta float64, logX bool, labels []string, rows []Row) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: ε at δ = %g against %s", name, delta, what)
	p.X.Label.Text = what
	p.Y.Label.Text = "ε"
	p.Add(plotter.NewGrid())
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	seriesVals := sweepSeriesValues(series, rows)
	drawn := 0
	for li, l := range labels {
		for si, sv := range seriesVals {
			xys := epsilonLine(series, sv, l, rows)
			if len(xys) == 0 {
				continue
			}
			line, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			c := plotutil.Color(li*len(seriesVals) + si)
			line.Color, pts.Color = c, c
			line.Dashes = plotutil.Dashes(si)
			p.Add(line, pts)
			legend := l
			if series != "" {
				legend = fmt.Sprintf("%s = %s", series, fmtG(sv))
				if len(labels) > 1 {
					legend = l + ", " + legend
				}
			}
			p.Legend.Add(legend, line, pts)
			drawn++
		}
	}
	if drawn == 0 {
		return nil, cli.Usagef("--plot: no theorem applies at any value of the sweep: nothing to draw")
	}
	if series != "" && len(labels) == 1 {
		p.Title.Text += "\n" + labels[0]
	}
	p.Legend.Top = true
	return p, nil
}

// sweepSeriesValues lists the series values of the rows in their order
// ({NaN}, one pass, without a series).
func sweepSeriesValues(series string, rows []Row) []float64 {
	if series == "" {
		return []float64{math.NaN()}
	}
	var vals []float64
	seen := map[float64]bool{}
	for _, r := range rows {
		if !seen[*r.Series] {
			seen[*r.Series] = true
			vals = append(vals, *r.Series)
		}
	}
	return vals
}

// epsilonLine is theorem l's finite ε against the swept value, on the
// rows of series value sv.
func epsilonLine(series string, sv float64, l string, rows []Row) plotter.XYs {
	var xys plotter.XYs
	for _, r := range rows {
		if series != "" && *r.Series != sv {
			continue
		}
		if e, ok := r.Epsilon[l]; ok && !math.IsInf(float64(e), 0) {
			xys = append(xys, plotter.XY{X: r.Value, Y: float64(e)})
		}
	}
	return xys
}

// accuracyPanel draws the mean error against theorem label's ε, each
// point labelled with its swept value: the trade-off.
func accuracyPanel(what string, delta float64, label string, rows []Row) (*plot.Plot, error) {
	q := plot.New()
	q.Title.Text = "accuracy against privacy"
	q.X.Label.Text = fmt.Sprintf("ε at δ = %g (%s)", delta, label)
	q.Y.Label.Text = "max |mean error| (posterior SDs)"
	q.Add(plotter.NewGrid())
	var xys plotter.XYs
	var lbls []string
	for _, r := range rows {
		if e, ok := r.Epsilon[label]; ok && r.Accuracy != nil && !math.IsInf(float64(e), 0) {
			xys = append(xys, plotter.XY{X: float64(e), Y: r.Accuracy.MaxMeanErrorSD})
			lbls = append(lbls, fmt.Sprintf("%s = %s", what, fmtG(r.Value)))
		}
	}
	sort.Sort(byX{xys, lbls})
	if len(xys) == 0 {
		return q, nil
	}
	line, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, err
	}
	q.Add(line, pts)
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: lbls})
	if err != nil {
		return nil, err
	}
	q.Add(lab)
	return q, nil
}

// drawPanels draws the panels side by side into one SVG or PNG, the
// format named by file's extension.
func drawPanels(w io.Writer, file string, plots []*plot.Plot) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	width := 16 * vg.Centimeter
	c, err := draw.NewFormattedCanvas(width*vg.Length(len(plots)), 11*vg.Centimeter, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	for i, pl := range plots {
		pl.Draw(tiles.At(dc, i, 0))
	}
	_, err = c.WriteTo(w)
	return err
}

// byX sorts points (and their labels) by abscissa.
type byX struct {
	xys  plotter.XYs
	lbls []string
}

// Len, Less and Swap implement sort.Interface.
func (b byX) Len() int { return len(b.xys) }

func (b byX) Less(i, j int) bool { return b.xys[i].X < b.xys[j].X }

func (b byX) Swap(i, j int) {
	b.xys[i], b.xys[j] = b.xys[j], b.xys[i]
	b.lbls[i], b.lbls[j] = b.lbls[j], b.lbls[i]
}

// fmtG formats a number to six significant digits.
func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
