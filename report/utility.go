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

// pValue formats a p-value: two significant digits, and "<1e-4" below
// 1e-4, where the exact tiny value (often 0 in float64) says no more.
func pValue(p float64) string {
	if p < 1e-4 {
		return "<1e-4"
	}
	return fmt.Sprintf("%.2g", p)
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
	return fmt.Sprintf("%.3g", worst), sd, pValue(f.MeanPValue) + " / " + pValue(f.KSPValue)
}

// utilityColumn is one column of the utility table: its header and its
// cell at each release point.
type utilityColumn struct {
	header string
	cells  []string
}

// uniform returns the value every cell of the column shares, if any.
func (c utilityColumn) uniform() (string, bool) {
	for _, v := range c.cells {
		if v != c.cells[0] {
			return "", false
		}
	}
	return c.cells[0], len(c.cells) > 0
}

// utilityPresent says which optional utility figures some release has,
// and the sides of the posterior fit in the order first met.
func utilityPresent(r *audit.Report) (acc, grad, llr bool, sides []string) {
	seen := map[string]bool{}
	for _, pr := range r.Points {
		u := pr.Utility
		if u == nil {
			continue
		}
		acc = acc || u.AcceptanceRate != nil
		grad = grad || u.ClippedGradFraction != nil
		llr = llr || u.ClippedLLRFraction != nil
		for _, f := range u.Posterior {
			if !seen[f.Side] {
				seen[f.Side] = true
				sides = append(sides, f.Side)
			}
		}
	}
	return acc, grad, llr, sides
}

// foldNote returns the note that replaces a column whose cells are all
// one value (note formats it), for a table of n > 1 rows; ok is false
// when the column must stay. A clipped fraction of 0 reads "no … clipped".
func foldNote(c utilityColumn, note string, n int) (string, bool) {
	v, same := c.uniform()
	if !same || n < 2 {
		return "", false
	}
	if v == "0" && strings.HasPrefix(note, "clipped ") {
		return "no " + strings.TrimSuffix(strings.TrimPrefix(note, "clipped "), " fraction %s at every release") + " clipped", true
	}
	return fmt.Sprintf(note, v), true
}

// utilityTables returns the utility table's columns: the release, then
// the columns shared by both sides (iterations, acceptance, clipped
// fractions, whether the chain moves) and the posterior fit per side (in
// the order first met); columns no release has a value for are left
// out, and columns with one value at every release are folded into notes
// (said once, above the table). ok is false without utility figures.
func utilityTables(r *audit.Report) (release utilityColumn, shared []utilityColumn, sides map[string][]utilityColumn, sideOrder, folded []string, ok bool) {
	if !r.HasUtility() {
		return
	}
	acc, grad, llr, sideOrder := utilityPresent(r)
	release.header = "release"
	iters := utilityColumn{header: "iterations"}
	accC := utilityColumn{header: "acceptance"}
	gradC := utilityColumn{header: "clipped grads"}
	llrC := utilityColumn{header: "clipped llrs"}
	startC := utilityColumn{header: "acceptance since start"}
	moves := utilityColumn{header: "moves"}
	sides = map[string][]utilityColumn{}
	fits := sides
	for _, sd := range sideOrder {
		fits[sd] = []utilityColumn{{header: sd + ": |mean err|/sd"}, {header: sd + ": sd ratio"}, {header: sd + ": p mean / KS"}}
	}
	for k, pr := range r.Points {
		label := pr.Point.Label
		if k == r.Headline {
			label += " *"
		}
		release.cells = append(release.cells, label)
		u := pr.Utility
		if u == nil {
			u = &audit.Utility{}
		}
		iters.cells = append(iters.cells, iterationsCell(u.Iterations, "?"))
		accC.cells = append(accC.cells, optFrac(u.AcceptanceRate))
		gradC.cells = append(gradC.cells, optFrac(u.ClippedGradFraction))
		llrC.cells = append(llrC.cells, optFrac(u.ClippedLLRFraction))
		startC.cells = append(startC.cells, optFrac(u.AcceptanceSinceStart))
		m := "yes"
		if u.BarelyMoves {
			m = "BARELY"
		}
		moves.cells = append(moves.cells, m)
		for _, sd := range sideOrder {
			cells := []string{"n/a", "n/a", "n/a"}
			for _, f := range u.Posterior {
				if f.Side == sd {
					cells[0], cells[1], cells[2] = fitSummary(f)
				}
			}
			for i := range cells {
				fits[sd][i].cells = append(fits[sd][i].cells, cells[i])
			}
		}
	}
	fold := func(c utilityColumn, note string) bool {
		text, ok := foldNote(c, note, len(r.Points))
		if ok {
			folded = append(folded, text)
		}
		return ok
	}
	if !fold(iters, "%s iterations between releases") {
		shared = append(shared, iters)
	}
	for _, c := range []struct {
		on   bool
		col  utilityColumn
		note string
	}{{acc, accC, "acceptance rate %s at every release"}, {sinceStart(r), startC, "acceptance since the start %s at every release"}, {grad, gradC, "clipped gradient fraction %s at every release"}, {llr, llrC, "clipped llr fraction %s at every release"}} {
		if c.on && !fold(c.col, c.note) {
			shared = append(shared, c.col)
		}
	}
	if v, same := moves.uniform(); !(same && v == "yes" && len(r.Points) > 1) {
		shared = append(shared, moves)
	} else {
		folded = append(folded, "the chain moves at every release")
	}
	return release, shared, fits, sideOrder, folded, true
}

// utilityRows returns the header and rows of one table of the given
// columns; nil without utility figures.
func tableOf(cols []utilityColumn) ([]string, [][]string) {
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.header
	}
	var rows [][]string
	for k := range cols[0].cells {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = c.cells[k]
		}
		rows = append(rows, row)
	}
	return header, rows
}

// utilityRows returns the header and rows of the utility table in one
// piece (the HTML page's), its folded notes, and nil without figures.
func utilityRows(r *audit.Report) ([]string, [][]string, []string) {
	release, shared, sides, order, folded, ok := utilityTables(r)
	if !ok {
		return nil, nil, nil
	}
	cols := append([]utilityColumn{release}, shared...)
	for _, sd := range order {
		cols = append(cols, sides[sd]...)
	}
	h, rows := tableOf(cols)
	return h, rows, folded
}

// maxTextWidth is the widest line the text report prints, in runes.
const maxTextWidth = 120

// renderBox renders a boxed table into a string.
func renderBox(header []string, rows [][]string) (string, error) {
	var b strings.Builder
	t := tablewriter.NewTable(&b, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
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
			return "", err
		}
	}
	err := t.Render()
	return b.String(), err
}

// widest is the number of runes of the longest line of s.
func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, runes(l))
	}
	return n
}

// utilityLayout renders the utility columns in as few tables as fit
// maxTextWidth: one table; else one per side (D, D′), the shared columns
// with the first; else the shared columns and each side apart. Every table
// starts with the release column.
func utilityLayout(release utilityColumn, shared []utilityColumn, sides map[string][]utilityColumn, order []string) (string, error) {
	var one []utilityColumn
	one = append(one, shared...)
	for _, sd := range order {
		one = append(one, sides[sd]...)
	}
	perSide := make([][]utilityColumn, len(order))
	for i, sd := range order {
		perSide[i] = sides[sd]
	}
	if len(perSide) > 0 {
		perSide[0] = append(append([]utilityColumn(nil), shared...), perSide[0]...)
	}
	apart := [][]utilityColumn{shared}
	for _, sd := range order {
		apart = append(apart, sides[sd])
	}
	var out string
	for _, layout := range [][][]utilityColumn{{one}, perSide, apart} {
		out = ""
		fits := true
		for _, group := range layout {
			if len(group) == 0 {
				continue
			}
			t, err := renderBox(tableOf(append([]utilityColumn{release}, group...)))
			if err != nil {
				return "", err
			}
			fits = fits && widest(t) <= maxTextWidth
			out += t
		}
		if fits {
			break
		}
	}
	return out, nil
}

// writeUtilityTable prints the utility table and its legend, if the report
// has utility figures, in as few tables as fit 120 columns
// (utilityLayout).
func writeUtilityTable(w io.Writer, r *audit.Report) error {
	release, shared, sides, order, folded, ok := utilityTables(r)
	if !ok {
		if r.UtilityNote != "" {
			fmt.Fprintf(w, "utility: %s.\n\n", r.UtilityNote)
		}
		return nil
	}
	title := "Utility per release (" + utilityScope(r) + ")"
	if len(folded) > 0 {
		title += "; " + strings.Join(folded, "; ")
	}
	if err := WriteWrapped(w, "", title+":", textWidth); err != nil {
		return err
	}
	out, err := utilityLayout(release, shared, sides, order)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, out); err != nil {
		return err
	}
	for _, line := range utilityLegend(r) {
		if err := WriteWrapped(w, "", line, textWidth); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	return nil
}

// utilityScope says over what the utility figures are taken: every run
// of the multi-run design on each side, or the canary design's run(s).
func utilityScope(r *audit.Report) string {
	switch {
	case r.Canaries == nil:
		return "counts summed over all runs; distances over up to 20,000 runs on each side"
	case r.Canaries.Runs == 1:
		return "counts of the design's one run"
	}
	return fmt.Sprintf("counts summed over the design's %d runs", r.Canaries.Runs)
}

// utilityLegend explains the utility columns: the posterior's columns and
// rule where the design can have them (the canary design, whose runs
// train on D plus canaries, has no posterior to compare with), and the
// rule on few proposals where a release used it.
func utilityLegend(r *audit.Report) []string {
	iters := "iterations: since the previous release (? where the sampler declared release labels only); acceptance and clipped fractions are over those iterations. "
	var line string
	if r.Canaries == nil {
		line = iters +
			"|mean err|/sd: the largest error of the releases' mean, per coordinate, in posterior standard deviations; " +
			"sd ratio: the releases' standard deviation over the posterior's; p mean / KS: p-values of the χ² test of the " +
			"whitened mean and of the Kolmogorov-Smirnov test of the whitened squared radii against χ² (exact draws give " +
			"uniform p-values; <1e-4: below 1e-4). " +
			fmt.Sprintf("moves: BARELY when the acceptance is below %g or the released variance below %g of the posterior's.", audit.MinAcceptance, audit.MinVarianceRatio)
	} else {
		line = iters + fmt.Sprintf("moves: BARELY when the acceptance is below %g.", audit.MinAcceptance)
	}
	if sinceStart(r) {
		line += fmt.Sprintf(" acceptance since start: of every proposal since the start of the run(s), shown where fewer than %d were made since the previous release (n/a elsewhere); moves then judges it instead (the release depends on every proposal).", audit.MinJudgedProposals)
	}
	out := []string{line}
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
	header, rows, folded := utilityRows(r)
	if header == nil {
		if r.UtilityNote != "" {
			return HTMLText("note", r.UtilityNote)
		}
		return ""
	}
	header[0] = "<" + header[0]
	var pre template.HTML
	if len(folded) > 0 {
		pre = HTMLText("note", "At every release: "+strings.Join(folded, "; ")+".")
	}
	return pre + HTMLTable(header, rows, r.Headline) + HTMLText("note", strings.Join(utilityLegend(r), " "))
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

// sinceStart reports whether a release judged the acceptance since the
// start (audit.Utility.AcceptanceSinceStart).
func sinceStart(r *audit.Report) bool {
	for _, pr := range r.Points {
		if pr.Utility != nil && pr.Utility.AcceptanceSinceStart != nil {
			return true
		}
	}
	return false
}
