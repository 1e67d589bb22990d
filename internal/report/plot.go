package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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

// WritePlot draws ε_lb against the release points (the per-epoch curve of
// Heller & Fetaya Fig. 2), with the ceiling of the run counts, each claim's
// ε at δ, and any extra curves, in SVG or PNG.
func WritePlot(w io.Writer, format string, r *audit.Report, extra ...Curve) error {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: ε lower bound per release (δ = %g, confidence %.4g)", r.Name, r.Delta, r.TestConfidence)
	pl.X.Label.Text = "iteration"
	pl.Y.Label.Text = "ε"
	pl.Add(plotter.NewGrid())
	xs := make([]float64, len(r.Points))
	epochs := true
	for _, pr := range r.Points {
		epochs = epochs && pr.Point.Epoch > 0
	}
	if epochs {
		pl.X.Label.Text = "epoch"
	}
	ymax := 0.0
	for k, pr := range r.Points {
		xs[k] = float64(pr.Point.Iteration)
		if epochs {
			xs[k] = float64(pr.Point.Epoch)
		}
		ymax = math.Max(ymax, pr.Ceiling.Epsilon)
	}
	series := func(f func(audit.PointResult) float64) plotter.XYs {
		var pts plotter.XYs
		for k, pr := range r.Points {
			if y := f(pr); !math.IsNaN(y) && !math.IsInf(y, 0) {
				pts = append(pts, plotter.XY{X: xs[k], Y: y})
			}
		}
		return pts
	}
	add := func(name string, pts plotter.XYs, i int, dashed bool) error {
		if len(pts) == 0 {
			return nil
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		s.Color = plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		pl.Add(l, s)
		pl.Legend.Add(name, l, s)
		return nil
	}
	if err := add("ε_lb (region bound)", series(func(pr audit.PointResult) float64 { return pr.Region.Epsilon }), 0, false); err != nil {
		return err
	}
	if err := add("ceiling", series(func(pr audit.PointResult) float64 { return pr.Ceiling.Epsilon }), 1, true); err != nil {
		return err
	}
	for ci, name := range r.Claims {
		pts := series(func(pr audit.PointResult) float64 {
			if ci >= len(pr.Claims) || !pr.Claims[ci].Covered {
				return math.NaN()
			}
			return float64(pr.Claims[ci].EpsilonAtDelta)
		})
		if err := add("upper bound: "+shortLabel(name), pts, 2+ci, true); err != nil {
			return err
		}
	}
	if len(r.Points) > 0 && r.Points[0].Exact != nil {
		ex := Curve{Name: "exact ε (closed form)"}
		for k, pr := range r.Points {
			ex.X, ex.Y = append(ex.X, xs[k]), append(ex.Y, float64(*pr.Exact))
			ymax = math.Max(ymax, float64(*pr.Exact))
		}
		extra = append([]Curve{ex}, extra...)
	}
	for i, c := range extra {
		var pts plotter.XYs
		for k := range c.X {
			if !math.IsNaN(c.Y[k]) && !math.IsInf(c.Y[k], 0) {
				pts = append(pts, plotter.XY{X: c.X[k], Y: c.Y[k]})
			}
		}
		if err := add(c.Name, pts, 2+len(r.Claims)+i, false); err != nil {
			return err
		}
	}
	pl.Legend.Top = true
	pl.Y.Min = 0
	// Headroom above the ceiling for the legend.
	pl.Y.Max = math.Max(pl.Y.Max, 1.35*ymax)
	wt, err := pl.WriterTo(8*vg.Inch, 5*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// shortLabel fits a claim's name in a legend: the part before the first
// colon, at most 56 characters.
func shortLabel(s string) string {
	if i := strings.Index(s, ":"); i > 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 56 {
		s = string(r[:55]) + "…"
	}
	return s
}
