package epsilon

import (
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Report is the JSON written by "audit epsilon --json".
type Report struct {
	Counts     stats.Counts    `json:"counts"`
	Delta      float64         `json:"delta"`
	Confidence float64         `json:"confidence"`
	Region     stats.Estimate  `json:"region"`
	GDP        stats.Estimate  `json:"gdp"`
	Ceiling    stats.JSONFloat `json:"ceiling"`
	Point      stats.Estimate  `json:"point"`
	Note       string          `json:"note"`
}

const epsilonNote = "region is the rigorous lower bound (Heller-Fetaya eq. 12): each error rate is " +
	"replaced by its one-sided Clopper-Pearson upper bound at level alpha/2, alpha = 1 - confidence. " +
	"gdp.mu is a rigorous lower bound on the GDP parameter; gdp.epsilon holds only if the trade-off " +
	"curve is Gaussian. ceiling is the largest region bound these run counts can give. point is a " +
	"plug-in estimate with no guarantee."

// MaxCount bounds every count of "audit epsilon": the largest number of
// runs an audit can have (audit.MaxTrials = 10⁸). Counts beyond it are
// not only impossible for an audit of this tool, the Clopper–Pearson
// quantiles lose accuracy there (at n = 10⁸ and k = 3 the bound is within
// 3·10⁻⁸ of scipy's, at n = 10¹² already 3·10⁻⁴ below it), and sums of
// int64-sized counts overflow.
const MaxCount = audit.MaxTrials

// MaxCanaries bounds the counts of "audit epsilon --one-run": the f-DP test
// walks over up to v correct guesses for each μ it tries, which takes about
// 3 s at 10⁷ canaries on one core (and 25 s at 10⁸).
const MaxCanaries = 10_000_000

func printEpsilon(e *cli.Env, c stats.Counts, delta, conf float64, region, gdp, ceil, point stats.Estimate) {
	w := e.Stdout
	fmt.Fprintf(w, "ε_lb = %s  (%s; confidence %g; δ = %g; %d runs: %d on D, %d on D′)\n",
		stats.FormatFloat(region.Epsilon), region.Estimator, conf, delta,
		c.Negatives+c.Positives, c.Negatives, c.Positives)
	fmt.Fprintf(w, "FP %d/%d (FPR %s), FN %d/%d (FNR %s); each rate bounded at one-sided level α/2 = %.6g\n\n",
		c.FP, c.Negatives, rate(point.FPR), c.FN, c.Positives, rate(point.FNR), (1-conf)/2)
	// The ε that μ_lb implies is not a lower bound on ε unless the
	// trade-off curve is Gaussian (randomized response puts it above the
	// true ε): it has a column of its own, never the ε column.
	t := cli.NewTable(w, "estimate", "ε", "μ", "ε if Gaussian", "FPR used", "FNR used", "meaning")
	f := stats.FormatFloat
	t.Append("region bound (eq. 12)", f(region.Epsilon), "", "", rate(region.FPR), rate(region.FNR),
		fmt.Sprintf("ε ≥ this with probability ≥ %g", conf))
	t.Append("GDP μ_lb", "", f(gdp.Mu), f(gdp.Epsilon), rate(gdp.FPR), rate(gdp.FNR),
		"μ ≥ μ_lb rigorously; its ε only for a Gaussian curve")
	t.Append("ceiling", f(ceil.Epsilon), "", "", rate(ceil.FPR), rate(ceil.FNR),
		"largest region bound these run counts allow")
	t.Append("point estimate (eq. 11)", f(point.Epsilon), "", "", rate(point.FPR), rate(point.FNR),
		"observed rates; no guarantee")
	t.Render()
	if region.Epsilon >= ceil.Epsilon*(1-1e-12) && ceil.Epsilon > 0 {
		fmt.Fprintln(w, "\nThe region bound is at its ceiling: more evaluation runs could show a larger ε.")
	}
}

// rate formats an error rate to six significant digits.
func rate(x float64) string { return fmt.Sprintf("%.6g", x) }

// OneRunReport is the JSON written by "audit epsilon --one-run
// --json": like Report, each estimate carries its ε with estimator,
// confidence, δ and counts.
type OneRunReport struct {
	Counts     stats.OneRunCounts   `json:"counts"`
	Delta      float64              `json:"delta"`
	Confidence float64              `json:"confidence"`
	OneRun     stats.OneRunEstimate `json:"one_run"`
	FDP        stats.OneRunEstimate `json:"fdp"`
	Ceiling    stats.JSONFloat      `json:"ceiling"`
	Note       string               `json:"note"`
}

const epsilonOneRunNote = "one_run is the rigorous lower bound of Steinke, Nasr & Jagielski 2023 (Thm 3.1; " +
	"App. D for delta > 0) for add/remove of one canary, valid when the number of guesses was fixed before " +
	"looking at the outcome. fdp.mu is a rigorous lower bound on the GDP parameter from the f-DP test of " +
	"Mahloujifar, Melis & Chaudhuri 2024 (audit with cap); fdp.epsilon holds only if the trade-off curve is " +
	"Gaussian. ceiling is the one_run bound if all guesses were correct."

// OneRun bounds ε from a one-run canary audit's counts c (Steinke et al.
// 2023, and the f-DP μ of Mahloujifar et al. 2024) at δ and confidence
// conf, and writes the table (unless the JSON goes to stdout) and the JSON
// to outs.JSON.
func OneRun(e *cli.Env, c stats.OneRunCounts, delta, conf float64, outs cli.OutputFlags) error {
	if c.Guesses > c.Canaries {
		return cli.Usagef("--guesses: must be in [0, canaries=%d], got %d", c.Canaries, c.Guesses)
	}
	if c.Correct > c.Guesses {
		return cli.Usagef("--correct: must be in [0, guesses=%d], got %d", c.Guesses, c.Correct)
	}
	if err := stats.CheckOneRunConfidence(conf); err != nil {
		return cli.Usagef("--confidence: must be in [%g, 1) with --one-run, got %g", stats.MinOneRunConfidence, conf)
	}
	out := cli.Output(outs.JSON)
	if err := outs.Check(e, nil); err != nil {
		return err
	}
	steinke, err := stats.OneRunEpsilon(c, delta, conf)
	if err != nil {
		return err
	}
	fdp, err := stats.OneRunFDP(c, delta, conf)
	if err != nil {
		return err
	}
	all := c
	all.Correct = c.Guesses
	ceil, err := stats.OneRunEpsilon(all, delta, conf)
	if err != nil {
		return err
	}
	if !out.ToStdout() {
		printEpsilonOneRun(e, c, delta, conf, steinke, fdp, ceil)
	}
	return out.WriteJSON(e, OneRunReport{
		Counts: c, Delta: delta, Confidence: conf, OneRun: steinke, FDP: fdp,
		Ceiling: stats.JSONFloat(ceil.Epsilon), Note: epsilonOneRunNote,
	})
}

func printEpsilonOneRun(e *cli.Env, c stats.OneRunCounts, delta, conf float64, steinke, fdp, ceil stats.OneRunEstimate) {
	w := e.Stdout
	fmt.Fprintf(w, "ε_lb = %s  (%s; confidence %g; δ = %g; one run, %d canaries, %d of %d guesses correct)\n",
		stats.FormatFloat(steinke.Epsilon), steinke.Estimator, conf, delta, c.Canaries, c.Correct, c.Guesses)
	fmt.Fprintf(w, "μ_lb = %s, ε(δ) = %s if the trade-off curve is Gaussian  (%s; confidence %g)\n\n",
		stats.FormatFloat(fdp.Mu), stats.FormatFloat(fdp.Epsilon), fdp.Estimator, conf)
	t := cli.NewTable(w, "estimate", "ε", "μ", "ε if Gaussian", "meaning")
	f := stats.FormatFloat
	t.Append("one-run bound (Steinke et al.)", f(steinke.Epsilon), "", "",
		fmt.Sprintf("ε ≥ this with probability ≥ %g", conf))
	t.Append("f-DP μ_lb", "", f(fdp.Mu), f(fdp.Epsilon),
		"μ ≥ μ_lb rigorously; its ε only for a Gaussian curve")
	t.Append("ceiling", f(ceil.Epsilon), "", "",
		fmt.Sprintf("one-run bound if all %d guesses were correct", c.Guesses))
	t.Render()
	fmt.Fprintln(w, "\nValid for add/remove of one canary when the number of guesses was fixed before looking at the outcome.")
}

// Counts bounds ε from an attack's error counts c on evaluation runs (the
// region bound, Heller & Fetaya eq. 12; the GDP μ; the ceiling these run
// counts allow; the plug-in point estimate) at δ and confidence conf, and
// writes the table (unless the JSON goes to stdout) and the JSON to
// outs.JSON.
func Counts(e *cli.Env, c stats.Counts, delta, conf float64, outs cli.OutputFlags) error {
	if c.FP > c.Negatives {
		return cli.Usagef("--fp: must be in [0, negatives=%d], got %d", c.Negatives, c.FP)
	}
	if c.FN > c.Positives {
		return cli.Usagef("--fn: must be in [0, positives=%d], got %d", c.Positives, c.FN)
	}
	out := cli.Output(outs.JSON)
	if err := outs.Check(e, nil); err != nil {
		return err
	}

	region, err := stats.RegionBound(c, delta, conf)
	if err != nil {
		return cli.UsageError{Msg: err.Error()}
	}
	gdp, err := stats.GDPBound(c, delta, conf)
	if err != nil {
		return err
	}
	ceil, err := stats.Ceiling(c.Negatives, c.Positives, delta, conf)
	if err != nil {
		return err
	}
	point, err := stats.Point(c, delta)
	if err != nil {
		return err
	}

	if !out.ToStdout() {
		printEpsilon(e, c, delta, conf, region, gdp, ceil, point)
	}
	return out.WriteJSON(e, Report{
		Counts: c, Delta: delta, Confidence: conf,
		Region: region, GDP: gdp, Ceiling: stats.JSONFloat(ceil.Epsilon), Point: point,
		Note: epsilonNote,
	})
}
