package main

import (
	"flag"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// epsilonReport is the JSON written by "audit epsilon --json".
type epsilonReport struct {
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

// maxCount bounds every count of "audit epsilon": the largest number of
// runs an audit can have (audit.MaxTrials = 10⁸). Counts beyond it are
// not only impossible for an audit of this tool, the Clopper–Pearson
// quantiles lose accuracy there (at n = 10⁸ and k = 3 the bound is within
// 3·10⁻⁸ of scipy's, at n = 10¹² already 3·10⁻⁴ below it), and sums of
// int64-sized counts overflow.
const maxCount = audit.MaxTrials

// maxCanaries bounds the counts of "audit epsilon --one-run": the f-DP test
// walks over up to v correct guesses for each μ it tries, which takes about
// 3 s at 10⁷ canaries on one core (and 25 s at 10⁸).
const maxCanaries = 10_000_000

// fpfnFlags and oneRunFlags are the flags of the two modes of "audit
// epsilon"; each mode refuses the other's.
var (
	fpfnFlags   = []string{"fp", "negatives", "fn", "positives"}
	oneRunFlags = []string{"canaries", "guesses", "correct"}
)

func runEpsilon(args []string, e *env) error {
	fs := newFlagSet("epsilon --fp K --negatives N --fn K --positives N [--delta D] [--confidence C] [--json FILE]\n"+
		"       audit epsilon --one-run --canaries M --guesses R --correct V [--delta D] [--confidence C] [--json FILE]",
		"Turns an attack's error counts on evaluation runs into an ε lower bound.\n"+
			"Negatives are runs on D, positives runs on D′; FP = runs on D attributed to D′, FN = runs on D′ attributed to D.\n"+
			"With --one-run: turns a one-run canary audit (M canaries, each in the run with probability 1/2; R guesses\n"+
			"fixed in advance, V of them correct) into the bounds of Steinke et al. 2023 and of the f-DP test of\n"+
			"Mahloujifar et al. 2024.")
	var c stats.Counts
	var oc stats.OneRunCounts
	var oneRun bool
	var delta, conf float64
	var outs outputFlags
	fs.intVar(&c.FP, "fp", 0, 0, maxCount, "false positives: runs on D attributed to D′ (required without --one-run),")
	fs.intVar(&c.Negatives, "negatives", 0, 1, maxCount, "evaluation runs on D (required without --one-run),")
	fs.intVar(&c.FN, "fn", 0, 0, maxCount, "false negatives: runs on D′ attributed to D (required without --one-run),")
	fs.intVar(&c.Positives, "positives", 0, 1, maxCount, "evaluation runs on D′ (required without --one-run),")
	fs.BoolVar(&oneRun, "one-run", false, "bound a one-run canary audit from --canaries, --guesses and --correct")
	fs.intVar(&oc.Canaries, "canaries", 0, 1, maxCanaries, "with --one-run: canaries M, each in the run with probability 1/2,")
	fs.intVar(&oc.Guesses, "guesses", 0, 0, maxCanaries, "with --one-run: guesses R (at most M), their number fixed in advance,")
	fs.intVar(&oc.Correct, "correct", 0, 0, maxCanaries, "with --one-run: correct guesses V (at most R),")
	fs.floatVar(&delta, "delta", 1e-5, "[0, 1)", inDelta, "δ of the (ε, δ) statement, in")
	fs.floatVar(&conf, "confidence", 0.95, "(0, 1)", inUnitOpen, "confidence 1−α of the bound, in")
	outs.register(fs, outputHelp{json: "write the results as JSON to FILE (- for stdout)"})
	if err := fs.parse(args, e, 0); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	mine, theirs := fpfnFlags, oneRunFlags
	if oneRun {
		mine, theirs = oneRunFlags, fpfnFlags
	}
	for _, name := range theirs {
		if set[name] {
			if oneRun {
				return usagef("--%s: not allowed with --one-run (it belongs to the FP/FN counts)", name)
			}
			return usagef("--%s: only with --one-run", name)
		}
	}
	for _, name := range mine {
		if !set[name] {
			if oneRun {
				return usagef("--%s is required with --one-run", name)
			}
			return usagef("--%s is required", name)
		}
	}
	if oneRun {
		return runEpsilonOneRun(e, oc, delta, conf, outs)
	}
	if c.FP > c.Negatives {
		return usagef("--fp: must be in [0, negatives=%d], got %d", c.Negatives, c.FP)
	}
	if c.FN > c.Positives {
		return usagef("--fn: must be in [0, positives=%d], got %d", c.Positives, c.FN)
	}
	out := output(outs.json)
	if err := outs.check(e, nil); err != nil {
		return err
	}

	region, err := stats.RegionBound(c, delta, conf)
	if err != nil {
		return usageError{err.Error()}
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

	if !out.toStdout() {
		printEpsilon(e, c, delta, conf, region, gdp, ceil, point)
	}
	return out.writeJSON(e, epsilonReport{
		Counts: c, Delta: delta, Confidence: conf,
		Region: region, GDP: gdp, Ceiling: stats.JSONFloat(ceil.Epsilon), Point: point,
		Note: epsilonNote,
	})
}

func printEpsilon(e *env, c stats.Counts, delta, conf float64, region, gdp, ceil, point stats.Estimate) {
	w := e.stdout
	fmt.Fprintf(w, "ε_lb = %s  (%s; confidence %g; δ = %g; %d runs: %d on D, %d on D′)\n",
		stats.FormatFloat(region.Epsilon), region.Estimator, conf, delta,
		c.Negatives+c.Positives, c.Negatives, c.Positives)
	fmt.Fprintf(w, "FP %d/%d (FPR %s), FN %d/%d (FNR %s); each rate bounded at one-sided level α/2 = %.6g\n\n",
		c.FP, c.Negatives, rate(point.FPR), c.FN, c.Positives, rate(point.FNR), (1-conf)/2)
	// The ε that μ_lb implies is not a lower bound on ε unless the
	// trade-off curve is Gaussian (randomized response puts it above the
	// true ε): it has a column of its own, never the ε column.
	t := newTable(w, "estimate", "ε", "μ", "ε if Gaussian", "FPR used", "FNR used", "meaning")
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

// epsilonOneRunReport is the JSON written by "audit epsilon --one-run
// --json": like epsilonReport, each estimate carries its ε with estimator,
// confidence, δ and counts.
type epsilonOneRunReport struct {
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

func runEpsilonOneRun(e *env, c stats.OneRunCounts, delta, conf float64, outs outputFlags) error {
	if c.Guesses > c.Canaries {
		return usagef("--guesses: must be in [0, canaries=%d], got %d", c.Canaries, c.Guesses)
	}
	if c.Correct > c.Guesses {
		return usagef("--correct: must be in [0, guesses=%d], got %d", c.Guesses, c.Correct)
	}
	if err := stats.CheckOneRunConfidence(conf); err != nil {
		return usagef("--confidence: must be in [%g, 1) with --one-run, got %g", stats.MinOneRunConfidence, conf)
	}
	out := output(outs.json)
	if err := outs.check(e, nil); err != nil {
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
	if !out.toStdout() {
		printEpsilonOneRun(e, c, delta, conf, steinke, fdp, ceil)
	}
	return out.writeJSON(e, epsilonOneRunReport{
		Counts: c, Delta: delta, Confidence: conf, OneRun: steinke, FDP: fdp,
		Ceiling: stats.JSONFloat(ceil.Epsilon), Note: epsilonOneRunNote,
	})
}

func printEpsilonOneRun(e *env, c stats.OneRunCounts, delta, conf float64, steinke, fdp, ceil stats.OneRunEstimate) {
	w := e.stdout
	fmt.Fprintf(w, "ε_lb = %s  (%s; confidence %g; δ = %g; one run, %d canaries, %d of %d guesses correct)\n",
		stats.FormatFloat(steinke.Epsilon), steinke.Estimator, conf, delta, c.Canaries, c.Correct, c.Guesses)
	fmt.Fprintf(w, "μ_lb = %s, ε(δ) = %s if the trade-off curve is Gaussian  (%s; confidence %g)\n\n",
		stats.FormatFloat(fdp.Mu), stats.FormatFloat(fdp.Epsilon), fdp.Estimator, conf)
	t := newTable(w, "estimate", "ε", "μ", "ε if Gaussian", "meaning")
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
