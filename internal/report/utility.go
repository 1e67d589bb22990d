package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// The utility figures of a report (audit.Utility): how much the sampler
// moved between releases and how far its releases are from the posterior,
// in the table, the CSV rows and the HTML page, with the warning when the
// chain barely moves.

func optFrac(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4g", *p)
}

// fitSummary returns, for one side's fit, the largest |mean error| in
// posterior SDs, the range of the SD ratios and the two p-values.
func fitSummary(f audit.PosteriorFit) (meanErr, sdRatio, pvals string) {
	worst := 0.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for j := range f.MeanError {
		worst = math.Max(worst, math.Abs(f.MeanError[j]))
		lo, hi = math.Min(lo, f.SDRatio[j]), math.Max(hi, f.SDRatio[j])
	}
	sd := fmt.Sprintf("%.3g", lo)
	if hi-lo > 5e-4*hi {
		sd = fmt.Sprintf("%.3g–%.3g", lo, hi)
	}
	return fmt.Sprintf("%.3g", worst), sd, fmt.Sprintf("%.2g / %.2g", f.MeanPValue, f.KSPValue)
}

// utilityRows returns the header and rows of the utility table, with only
// the columns some release has a value for; nil without utility figures.
func utilityRows(r *audit.Report) ([]string, [][]string) {
	if !r.HasUtility() {
		return nil, nil
	}
	var acc, grad, llr bool
	sides := map[string]bool{}
	var sideOrder []string
	for _, pr := range r.Points {
		u := pr.Utility
		if u == nil {
			continue
		}
		acc = acc || u.AcceptanceRate != nil
		grad = grad || u.ClippedGradFraction != nil
		llr = llr || u.ClippedLLRFraction != nil
		for _, f := range u.Posterior {
			if !sides[f.Side] {
				sides[f.Side] = true
				sideOrder = append(sideOrder, f.Side)
			}
		}
	}
	header := []string{"release", "iterations"}
	if acc {
		header = append(header, "acceptance")
	}
	if grad {
		header = append(header, "clipped grads")
	}
	if llr {
		header = append(header, "clipped llrs")
	}
	for _, s := range sideOrder {
		header = append(header, s+": max |mean err|/sd", s+": sd ratio", s+": p mean / KS")
	}
	header = append(header, "moves")
	var rows [][]string
	for k, pr := range r.Points {
		label := pr.Point.Label
		if k == r.Headline {
			label += " *"
		}
		u := pr.Utility
		if u == nil {
			u = &audit.Utility{}
		}
		row := []string{label, iterationsCell(u.Iterations, "?")}
		if acc {
			row = append(row, optFrac(u.AcceptanceRate))
		}
		if grad {
			row = append(row, optFrac(u.ClippedGradFraction))
		}
		if llr {
			row = append(row, optFrac(u.ClippedLLRFraction))
		}
		for _, s := range sideOrder {
			cells := []string{"n/a", "n/a", "n/a"}
			for _, f := range u.Posterior {
				if f.Side == s {
					cells[0], cells[1], cells[2] = fitSummary(f)
				}
			}
			row = append(row, cells...)
		}
		moves := "yes"
		if u.BarelyMoves {
			moves = "BARELY"
		}
		row = append(row, moves)
		rows = append(rows, row)
	}
	return header, rows
}

// writeUtilityTable prints the utility table and its legend, if the report
// has utility figures.
func writeUtilityTable(w io.Writer, r *audit.Report) error {
	header, rows := utilityRows(r)
	if header == nil {
		if r.UtilityNote != "" {
			fmt.Fprintf(w, "utility: %s.\n\n", r.UtilityNote)
		}
		return nil
	}
	fmt.Fprintln(w, "Utility per release (counts summed over all runs; distances over up to 20,000 runs on each side):")
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	hs := make([]any, len(header))
	for i, h := range header {
		hs[i] = h
	}
	t.Header(hs...)
	for _, row := range rows {
		cells := make([]any, len(row))
		for i, c := range row {
			cells[i] = c
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, line := range utilityLegend(r) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	return nil
}

// utilityLegend explains the utility columns.
func utilityLegend(r *audit.Report) []string {
	out := []string{
		"iterations: since the previous release (? where the sampler declared release labels only); acceptance and",
		"clipped fractions are over those iterations.",
		"max |mean err|/sd: largest error of the releases' mean, per coordinate, in posterior standard deviations;",
		"sd ratio: the releases' standard deviation over the posterior's; p mean / KS: p-values of the χ² test of the",
		"whitened mean and of the Kolmogorov-Smirnov test of the whitened squared radii against χ² (exact draws give",
		fmt.Sprintf("uniform p-values). BARELY: acceptance below %g or released variance below %g of the posterior's.", audit.MinAcceptance, audit.MinVarianceRatio),
	}
	if r.UtilityNote != "" {
		out = append(out, "Note: "+r.UtilityNote+".")
	}
	return out
}

// UtilityWarnings returns the report's warnings (audit.Report.Warnings:
// first, when the release the headline rests on barely moves, that the
// headline means little).
func UtilityWarnings(r *audit.Report) []string { return r.Warnings }

// writeWarnings prints the warnings, one per line.
func writeWarnings(w io.Writer, r *audit.Report) {
	for _, s := range UtilityWarnings(r) {
		fmt.Fprintf(w, "WARNING: %s\n", s)
	}
}

// utilityCSVHead are the utility columns of the CSV rows (always present,
// empty where a figure is not available).
func utilityCSVHead() []string {
	h := []string{"iterations_since_previous", "acceptance_rate", "clipped_grad_fraction", "clipped_llr_fraction", "barely_moves"}
	for _, s := range []string{"d", "dprime"} {
		for _, c := range []string{"draws", "max_abs_mean_error_sd", "min_sd_ratio", "max_sd_ratio", "variance_ratio", "mean_p_value", "ks_p_value"} {
			h = append(h, "posterior_"+s+"_"+c)
		}
	}
	return h
}

// utilityCSVRow returns the utility cells of one release point, with g
// formatting floats.
func utilityCSVRow(pr audit.PointResult, g func(float64) string) []string {
	u := pr.Utility
	row := make([]string, len(utilityCSVHead()))
	if u == nil {
		return row
	}
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return g(*p)
	}
	row[0], row[1], row[2], row[3], row[4] = iterationsCell(u.Iterations, ""), opt(u.AcceptanceRate), opt(u.ClippedGradFraction), opt(u.ClippedLLRFraction), strconv.FormatBool(u.BarelyMoves)
	for _, f := range u.Posterior {
		off := 5
		if f.Side != "D" {
			off += 7
		}
		worst, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
		for j := range f.MeanError {
			worst = math.Max(worst, math.Abs(f.MeanError[j]))
			lo, hi = math.Min(lo, f.SDRatio[j]), math.Max(hi, f.SDRatio[j])
		}
		copy(row[off:], []string{strconv.Itoa(f.Draws), g(worst), g(lo), g(hi), g(f.VarianceRatio), g(f.MeanPValue), g(f.KSPValue)})
	}
	return row
}

// utilityHTML is the utility section's body (empty without figures).
func utilityHTML(r *audit.Report) template.HTML {
	header, rows := utilityRows(r)
	if header == nil {
		if r.UtilityNote != "" {
			return HTMLText("note", r.UtilityNote)
		}
		return ""
	}
	for i := range header {
		if i == 0 {
			header[i] = "<" + header[i]
		}
	}
	return HTMLTable(header, rows, r.Headline) + HTMLText("note", strings.Join(utilityLegend(r), " "))
}

// warningsHTML renders the warnings, one paragraph each.
func warningsHTML(r *audit.Report) template.HTML {
	var out template.HTML
	for _, s := range UtilityWarnings(r) {
		out += HTMLText("warning", "Warning: "+s)
	}
	return out
}

// iterationsCell writes the iterations since the previous release, or
// unknown when they are not known (0: a program that declared release
// labels only).
func iterationsCell(n int, unknown string) string {
	if n == 0 {
		return unknown
	}
	return strconv.Itoa(n)
}
