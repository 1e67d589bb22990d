package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

func f4(x float64) string { return stats.FormatFloat(x) }

func counts(k, n int) string { return fmt.Sprintf("%d/%d", k, n) }

// notTested is the claim cell of a release a claim covers but was not
// tested at (its one test is at the release chosen for it).
const notTested = "not tested"

// upperBound formats the claims' ε at δ and their verdicts for point k;
// the tightest covering claim's ε is followed by the release's
// ε_lb/ε_ub in parentheses (tightnessCell), which keeps the table's width.
func upperBound(r *audit.Report, k int) (string, string) {
	var ub, verdict []string
	for ci, c := range r.Points[k].Claims {
		ref := r.ClaimTestAt(k, ci)
		switch {
		case !c.Covered:
			ub, verdict = append(ub, "n/a"), append(verdict, "n/a")
		case c.Test != "":
			ub, verdict = append(ub, f4(float64(c.EpsilonAtDelta))), append(verdict, guessClaimCell(r, k, c))
		case ref == nil:
			ub, verdict = append(ub, f4(float64(c.EpsilonAtDelta))), append(verdict, notTested)
		case ref.Refuted:
			ub, verdict = append(ub, f4(float64(c.EpsilonAtDelta))), append(verdict, refutedCell(ref))
		default:
			ub, verdict = append(ub, f4(float64(c.EpsilonAtDelta))), append(verdict, "ok")
		}
	}
	if i, ok := r.Points[k].TightestClaim(); ok {
		ub[i] += " (" + tightnessCell(&r.Points[k]) + ")"
	}
	return strings.Join(ub, "; "), strings.Join(verdict, "; ")
}

// refutedCell is a refuted claim's cell: the (ε, δ) pair of its profile
// that the whole-profile test refuted, which need not be at the report's δ.
func refutedCell(ref *audit.Refutation) string {
	return fmt.Sprintf("REFUTED at (%.4g, %.3g)", ref.Epsilon, ref.Delta)
}

// WriteTable prints the human report: what was audited, the per-point
// table and the headline with its provenance.
func WriteTable(w io.Writer, r *audit.Report) error {
	writeSetting(w, r)
	if err := writePointTable(w, r); err != nil {
		return err
	}
	writeLegend(w, r)
	if err := writeConvergenceLegend(w, r); err != nil {
		return err
	}
	if err := writeGaussianEpsilon(w, r); err != nil {
		return err
	}
	if err := writeDescriptive(w, r); err != nil {
		return err
	}
	if err := writeUtilityTable(w, r); err != nil {
		return err
	}
	writeHeadline(w, r)
	writeWarnings(w, r)
	return nil
}

// RunsLine describes the split of the runs: the attacks are trained on
// the training runs, each attack's threshold is chosen on the
// threshold-selection runs — or, when the split has none, on the training
// runs — and the bounds are computed on the evaluation runs.
func RunsLine(r *audit.Report) string {
	sel := fmt.Sprintf("%d train, %d threshold-selection (each attack's threshold chosen on them)", r.TrainRuns, r.SelectRuns)
	if r.SelectRuns == 0 {
		sel = fmt.Sprintf("%d train (attacks fitted and thresholds chosen on them)", r.TrainRuns)
	}
	return fmt.Sprintf("%d (seed %d): %s, %d evaluation (%d on D, %d on D′; the bounds are computed on them)",
		r.Trials, r.Seed, sel, r.EvalRuns, r.EvalNegatives, r.EvalPositives)
}

// reLongNumber matches a decimal number with more than six significant
// digits, as a parameter written to full float64 precision.
var reLongNumber = regexp.MustCompile(`\d*\.\d{6,}(?:[eE][-+]?\d+)?|\d+\.\d+[eE][-+]?\d+`)

// DisplayName shortens the numbers of a mechanism's name to six
// significant digits for display ("eta=0.0016899675500270416" reads
// "eta=0.00168997"); the JSON report and the scenario keep them in full.
func DisplayName(name string) string {
	return reLongNumber.ReplaceAllStringFunc(name, func(m string) string {
		v, err := strconv.ParseFloat(m, 64)
		if err != nil {
			return m
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	})
}

// DatasetsLine describes the audited pair in one line.
func DatasetsLine(r *audit.Report) string {
	if r.D == nil || r.DPrime == nil {
		return "owned by the mechanism (no datasets given to the audit)"
	}
	if r.Adjacency == "" { // datasets described by the caller of a program (audit.DescribedPair)
		nd := fmt.Sprintf("D = %s (%d records), D′ = %s (%d records), given to the sampler by its caller; adjacency not stated",
			r.D.Name, r.D.Records, r.DPrime.Name, r.DPrime.Records)
		if r.PairNote != "" {
			nd += ": " + r.PairNote
		}
		return nd
	}
	nd := fmt.Sprintf("D = %s (%d records), D′ = %s, %s", r.D.Name, r.D.Records, r.DPrime.Name, r.Adjacency)
	if r.PairNote != "" {
		nd += ": " + r.PairNote
	}
	return nd
}

// writeSetting prints what was audited and how, each field wrapped to the
// width of the report.
func writeSetting(w io.Writer, r *audit.Report) {
	field := func(name, text string) { _ = WriteWrapped(w, fmt.Sprintf("%-11s", name), text, textWidth) }
	field("scenario", fmt.Sprintf("%s (config %.12s)", ClipName(r.Name, NameRunes), r.ConfigHash))
	field("mechanism", DisplayName(r.Mechanism))
	for _, l := range describeDesign(r).setting {
		field(l[0], l[1])
	}
	stat := fmt.Sprintf("δ = %g, confidence %g; %s", r.Delta, r.Confidence, r.Multiplicity)
	if r.SelectionConfidence != 0 {
		stat += fmt.Sprintf("; rules chosen on training runs at confidence %g", r.SelectionConfidence)
	}
	field("statistics", stat)
	for _, n := range r.Notes {
		field("note", n)
	}
	if acc := r.Info.AcceptanceRate(); !math.IsNaN(acc) {
		fmt.Fprintf(w, "sampler    acceptance rate %.4f", acc)
		if r.Info.ClippedLLRs > 0 || r.Info.ClippedGrads > 0 {
			fmt.Fprintf(w, ", clipped llrs %d, clipped gradients %d", r.Info.ClippedLLRs, r.Info.ClippedGrads)
		}
		fmt.Fprintln(w)
	} else if r.Info.ClippedGrads > 0 && r.Info.GradEvals > 0 {
		fmt.Fprintf(w, "sampler    clipped gradients: %d of %d\n", r.Info.ClippedGrads, r.Info.GradEvals)
	} else if r.Info.ClippedGrads > 0 { // a program that counts clips but not evaluations
		fmt.Fprintf(w, "sampler    clipped gradients: %d\n", r.Info.ClippedGrads)
	}
	fmt.Fprintln(w)
}

// pointRows returns the header and rows of the per-point table.
func pointRows(r *audit.Report) ([]any, [][]any) {
	// With one attack its name is on the "features" line above the table.
	oneAttack := len(r.Attacks) == 1
	ev := evidenceHeader(r)
	header := []any{"release", "attack", ev[0], ev[1], "ε_lb", "μ_lb"}
	if oneAttack {
		header = append(header[:1:1], header[2:]...)
	}
	extra := extraEstimators(r)
	for _, name := range extra {
		header = append(header, name)
	}
	header = append(header, "ceiling")
	if r.HasExact() {
		header = append(header, "exact ε")
	}
	for _, h := range convergenceHeader(r) {
		header = append(header, h)
	}
	if r.HasAccuracy() {
		header = append(header, "test acc.")
	}
	if len(r.Claims) > 0 {
		header = append(header, "upper bound", "claim")
	}
	var rows [][]any
	for k, pr := range r.Points {
		label := pr.Point.Label
		if k == r.Headline {
			label += " *"
		}
		row := []any{label}
		if !oneAttack {
			row = append(row, pr.Attacks[bestAttack(pr, pr.Primary())].Attack)
		}
		ev := evidenceCells(pr)
		row = append(row, ev[0], ev[1], f4(pr.EpsilonBound().Epsilon), f4(pr.MuBound().Mu))
		for _, name := range extra {
			v, _ := estimatorValue(pr, name)
			row = append(row, f4(v))
		}
		row = append(row, f4(pr.Ceiling.Epsilon))
		if r.HasExact() {
			row = append(row, f4(float64(*pr.Exact)))
		}
		for _, c := range convergenceCells(r, pr) {
			row = append(row, c)
		}
		if r.HasAccuracy() {
			row = append(row, fmt.Sprintf("%.4f", *pr.TestAccuracy))
		}
		if len(r.Claims) > 0 {
			ub, v := upperBound(r, k)
			row = append(row, ub, v)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// writePointTable prints one row per release point.
func writePointTable(w io.Writer, r *audit.Report) error {
	header, rows := pointRows(r)
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header(header...)
	for _, row := range rows {
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	return t.Render()
}

// writeLegend explains the columns.
func writeLegend(w io.Writer, r *audit.Report) {
	guesses := fromGuesses(r)
	switch {
	case guesses:
		_ = WriteWrapped(w, "", GuessLegend, textWidth)
	case !regionHeadline(r):
		_ = WriteWrapped(w, "", otherHeadlineLegend(r), textWidth)
		_ = WriteWrapped(w, "", DirectionNote, textWidth)
	default:
		fmt.Fprintln(w, "ε_lb: Clopper-Pearson region bound (Heller-Fetaya eq. 12) on the evaluation runs, at the test confidence;")
		fmt.Fprintln(w, "μ_lb: GDP lower bound on μ (rigorous, no shape assumed), with its own threshold chosen on training runs;")
		fmt.Fprintln(w, "the ε it would imply is shown apart below. ceiling: the largest ε_lb these run counts allow.")
		_ = WriteWrapped(w, "", DirectionNote, textWidth)
	}
	for _, name := range extraEstimators(r) {
		_, b := estimatorValue(r.Points[0], name)
		fmt.Fprintf(w, "%s: %s on the evaluation runs, at the test confidence", name, b.Estimator)
		if b.Assumption != "" {
			fmt.Fprintf(w, "; assumes %s", b.Assumption)
		}
		fmt.Fprintln(w, ".")
	}
	if r.HasAccuracy() {
		runs := fmt.Sprintf("all %d runs", r.Trials)
		if c := r.Canaries; c != nil && c.References > 0 {
			runs = fmt.Sprintf("the %d run(s), not the %d reference runs", c.Runs, c.References)
		}
		fmt.Fprintf(w, "test acc.: mean accuracy of the released models on %d held-out records, over %s.\n", r.TestSize, runs)
	}
	switch {
	case r.HasExact() && r.ExactSource != "":
		fmt.Fprintf(w, "exact ε: the true ε at δ of each release, %s: every valid lower bound lies below it.\n", r.ExactSource)
	case r.HasExact():
		fmt.Fprintln(w, "exact ε: the true ε at δ of each release, from the closed form of the counterexample (the privacy profile of")
		fmt.Fprintln(w, "Gaussian vs n-component mixture): every valid lower bound lies below it.")
	}
	if r.Headline >= 0 && len(r.Points) > 1 {
		if guesses {
			fmt.Fprintln(w, "* the release fixed in advance (the last), on which the headline and verdict rest.")
		} else if len(r.Claims) > 0 {
			fmt.Fprintln(w, "* the release point chosen on training runs, on which the headline rests (each claim is tested once, at the")
			fmt.Fprintln(w, "release chosen for it on the selection runs; \"not tested\" elsewhere).")
		} else {
			fmt.Fprintln(w, "* the release point chosen on training runs, on which the headline and verdict rest.")
		}
	}
	if len(r.Claims) > 0 {
		fmt.Fprintf(w, "upper bound: the claim's ε at δ = %g (%s).\n", r.Delta, strings.Join(r.Claims, "; "))
		_ = WriteWrapped(w, "", TightnessCellLegend, textWidth)
		if guesses {
			_ = WriteWrapped(w, "", guessClaimLegend, textWidth)
		} else {
			_ = WriteWrapped(w, "", ClaimLegend, textWidth)
		}
	}
	fmt.Fprintln(w)
}

// textWidth is the width of the text report's prose lines.
const textWidth = 110

// ClaimLegend explains the claim column: the claim is tested over its
// whole profile, so it can be refuted while ε_lb lies below its ε at δ.
const ClaimLegend = "claim: \"REFUTED at (ε, δ)\" names the pair of the claimed profile δ(ε) that the whole-profile test " +
	"refutes: a rule chosen on selection runs has error rates (upper confidence bounds) with FPR + e^ε·FNR < 1 − δ(ε) " +
	"or its mirror, which no (ε, δ(ε))-DP mechanism allows (Heller & Fetaya eq. 10). The pair can lie at another δ " +
	"than the upper-bound column's, so a claim can be refuted while ε_lb is below its ε at δ; the rule and its error " +
	"counts are in the verdict."

// DirectionNote explains the error columns, whose extremes swap between
// releases: a threshold rule is one-sided, and the side kept is the one
// whose inequality of Heller & Fetaya eq. 10 proves the larger ε.
const DirectionNote = "FP/neg, FN/pos: the errors of the attack's rule on the evaluation runs (runs on D taken for D′, " +
	"runs on D′ taken for D). A rule bounds ε through one of two inequalities — few false positives against the " +
	"false negatives, or the mirror — and keeps the direction that proves the larger ε on the training runs, so one " +
	"count is small and the other large, and they can swap from one release to the next as the attack changes direction."

// GaussianEpsilonTitle heads the ε that μ_lb implies, which is no lower
// bound on ε: it holds only if the trade-off curve is Gaussian (Dong, Roth
// & Su 2019, Cor. 2.13), and it overstates ε on other mechanisms, e.g.
// randomized response.
const GaussianEpsilonTitle = "ε implied by μ_lb — valid only if the trade-off curve is Gaussian; NOT a lower bound on ε"

// GaussianEpsilonNote says why.
const GaussianEpsilonNote = "μ_lb converted by the μ-GDP profile: a mechanism whose trade-off curve is not Gaussian (randomized response, for one) can have a true ε far below it. The lower bound on ε is ε_lb."

// writeGaussianEpsilon prints μ_lb and the ε it implies per release, set
// apart from the ε bounds.
func writeGaussianEpsilon(w io.Writer, r *audit.Report) error {
	fmt.Fprintln(w, GaussianEpsilonTitle)
	if err := WriteWrapped(w, "", GaussianEpsilonNote, 110); err != nil {
		return err
	}
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header("release", "μ_lb", "ε(μ_lb) if Gaussian")
	for _, pr := range r.Points {
		if err := t.Append(pr.Point.Label, f4(pr.MuBound().Mu), f4(pr.MuBound().Epsilon)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// Headline states the headline bound with its provenance in one line.
func Headline(r *audit.Report) string {
	where := "over all release points (Bonferroni)"
	if r.Headline >= 0 {
		where = "at " + r.Points[r.Headline].Point.Label
	}
	if r.Headline >= 0 && fromGuesses(r) {
		where += " (the last release, fixed in advance)"
	}
	e := r.Epsilon
	return fmt.Sprintf("ε_lb = %s %s  [%s; confidence %.6g; δ = %g; %s%s]",
		f4(e.Epsilon), where, e.Estimator, e.Confidence, e.Delta, describeDesign(r).evidence, assumes(e))
}

// writeHeadline prints the headline and the verdict.
func writeHeadline(w io.Writer, r *audit.Report) {
	_ = WriteWrapped(w, "", Headline(r), textWidth)
	if l := TightnessLine(r); l != "" {
		_ = WriteWrapped(w, "", l, textWidth)
	}
	switch r.Verdict {
	case audit.VerdictViolation:
		fmt.Fprintf(w, "verdict: VIOLATION\n")
		for _, v := range r.Violations {
			_ = WriteWrapped(w, "  ", v, textWidth)
		}
	case audit.VerdictNotRefuted:
		if r.ClaimsTested > 1 {
			fmt.Fprintf(w, "verdict: not refuted — the audit found no evidence against the claims (this does not prove them)\n")
		} else {
			fmt.Fprintf(w, "verdict: not refuted — the audit found no evidence against the claim (this does not prove the claim)\n")
		}
	default:
		fmt.Fprintf(w, "verdict: no claim tested (add a claim to the scenario or on the command line)\n")
	}
	if l := r.ClaimLevel(); l != "" {
		_ = WriteWrapped(w, "  level: ", l, textWidth)
	}
	for _, l := range ClaimTestLines(r) {
		_ = WriteWrapped(w, "  ", l, textWidth)
	}
	if l := ReleaseChoiceNote(r); l != "" {
		_ = WriteWrapped(w, "  release: ", l, textWidth)
	}
}

// ReleaseChoiceNote says why a claim was tested at another release than
// the one the headline ε_lb rests on (empty when every claim was tested
// there, or when the headline rests on no one release): the headline's
// release is chosen on the training runs by ε_lb alone, before and
// whatever the claims — a claim added or removed does not move it — and
// each claim's on the selection runs by its own test, so a claim is
// tested where it is most likely to be refuted. Neither sees an
// evaluation run, so both hold at their confidence.
func ReleaseChoiceNote(r *audit.Report) string {
	if r.Headline < 0 || r.Headline >= len(r.Points) || fromGuesses(r) {
		return ""
	}
	var others []string
	for _, ct := range r.ClaimTests {
		if ct.Covered && ct.Point != r.Headline {
			others = append(others, fmt.Sprintf("%s at %s", ct.Name, ct.Release))
		}
	}
	if len(others) == 0 {
		return ""
	}
	verb := "was"
	if len(others) > 1 {
		verb = "were"
	}
	return fmt.Sprintf("%s %s tested, not at the headline's %s: the headline's release is chosen on the training runs by ε_lb alone, "+
		"whatever the claims (a claim added or removed does not move it); each claim's, with its attack and rule, on the selection runs by that claim's own test, "+
		"where it is most likely to be refuted. Neither choice sees an evaluation run, so the headline and each test hold at their stated confidence.",
		strings.Join(others, "; "), verb, r.Points[r.Headline].Point.Label)
}

// ClaimTestLines says, for each claim not refuted, where its one test was
// made and what it found, and why it stands although the headline ε_lb
// exceeds its ε at δ (a refuted claim's test is in its violation line).
func ClaimTestLines(r *audit.Report) []string {
	var out []string
	for _, ct := range r.ClaimTests {
		ref := ct.Refutation
		if !ct.Covered || ref.Refuted {
			continue
		}
		l := fmt.Sprintf("%s: tested at %s (chosen on the selection runs): evaluation errors %s, FPR ≤ %.4g, FNR ≤ %.4g at confidence %.6g; not refuted (margin %.4g at ε = %.4g)",
			ct.Name, ct.Describe(), ref.CountsText(), ref.FPR, ref.FNR, ref.Confidence, ref.Margin, ref.Epsilon)
		if ct.Note != "" {
			l += " — " + ct.Note
		}
		out = append(out, l)
	}
	return out
}
