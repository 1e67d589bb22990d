package report

import (
	"fmt"
	"html/template"
	"io"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// The theoretical lower bound of Bertazzi et al. Prop. 3.3 / A.3 beside
// the audit's empirical ε_lb, in every rendering of a report: a column in
// the table, the HTML and the CSV, and a curve on the plot. It is shown
// only when the report carries it (audit.Report.HasConvergenceBound), with
// "—" at the points where it proves nothing.

// ConvergenceColumn heads the column: a theorem's lower bound, not the
// audit's.
const ConvergenceColumn = "ε ≥ (theory, conv.)"

// convergenceColumnShown reports whether the table and the HTML page
// show the column: the report carries the bound and it proves an ε at one
// release at least. A column of "—" alone is folded into the legend
// (convergenceLegend), so that the table keeps its width.
func convergenceColumnShown(r *audit.Report) bool {
	if !r.HasConvergenceBound() {
		return false
	}
	for _, pr := range r.Points {
		if pr.Convergence != nil && pr.Convergence.Epsilon != nil {
			return true
		}
	}
	return false
}

// convergenceHeader returns the column's header, if the table shows it.
func convergenceHeader(r *audit.Report) []string {
	if !convergenceColumnShown(r) {
		return nil
	}
	return []string{ConvergenceColumn}
}

// convergenceCells returns the point's cell, if the report has the column:
// the ε, or "—" where Prop. 3.3 proves nothing.
func convergenceCells(r *audit.Report, pr audit.PointResult) []string {
	if !convergenceColumnShown(r) {
		return nil
	}
	return []string{convergenceCell(pr)}
}

func convergenceCell(pr audit.PointResult) string {
	if c := pr.Convergence; c != nil && c.Epsilon != nil {
		return stats.FormatFloat(float64(*c.Epsilon))
	}
	return "—"
}

// convergenceLegend is the legend line of the column.
func convergenceLegend(r *audit.Report) string {
	if !convergenceColumnShown(r) {
		why := ""
		if pr := r.Points[len(r.Points)-1]; pr.Convergence != nil && pr.Convergence.Reason != "" {
			why = " (at " + pr.Point.Label + ": " + pr.Convergence.Reason + ")"
		}
		return fmt.Sprintf("%s proves no lower bound at any release here%s — %s.", audit.ConvergenceSource, why, audit.ConvergenceNote)
	}
	return fmt.Sprintf("%s: %s, at δ = %g — %s.", ConvergenceColumn, audit.ConvergenceSource, r.Delta, audit.ConvergenceNote)
}

// writeConvergenceLegend writes the legend line under the table.
func writeConvergenceLegend(w io.Writer, r *audit.Report) error {
	if !r.HasConvergenceBound() {
		return nil
	}
	if err := WriteWrapped(w, "", convergenceLegend(r), 110); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// convergenceHTMLNote is the legend in the HTML page.
func convergenceHTMLNote(r *audit.Report) template.HTML {
	if !r.HasConvergenceBound() {
		return ""
	}
	return HTMLText("note", convergenceLegend(r))
}

// convergenceCurve is the bound as a plot curve, at the points where it
// proves something.
func convergenceCurve(r *audit.Report, xs []float64) (Curve, bool) {
	if !r.HasConvergenceBound() {
		return Curve{}, false
	}
	c := Curve{Name: "theoretical lower bound from convergence (Bertazzi et al. Prop. 3.3; not empirical): the release's ε is at least this"}
	for k, pr := range r.Points {
		if pr.Convergence != nil && pr.Convergence.Epsilon != nil {
			c.X, c.Y = append(c.X, xs[k]), append(c.Y, float64(*pr.Convergence.Epsilon))
		}
	}
	return c, len(c.Y) > 0
}

// convergenceCSVHead returns the CSV columns (always present, so that the
// columns of every report line up): the ε, β on D and on D′.
func convergenceCSVHead() []string {
	return []string{"eps_convergence_lb", "convergence_beta_d", "convergence_beta_dprime"}
}

// convergenceCSVRow returns the point's CSV cells, empty where the bound is
// not computed or proves nothing.
func convergenceCSVRow(pr audit.PointResult, g func(float64) string) []string {
	row := make([]string, len(convergenceCSVHead()))
	c := pr.Convergence
	if c == nil {
		return row
	}
	if c.Epsilon != nil {
		row[0] = g(float64(*c.Epsilon))
	}
	if c.BetaD > 0 || c.BetaDPrime > 0 {
		row[1], row[2] = g(c.BetaD), g(c.BetaDPrime)
	}
	return row
}
