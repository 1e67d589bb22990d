package main

import (
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

func runEpsilon(args []string, e *env) error {
	fs := newFlagSet("epsilon --fp K --negatives N --fn K --positives N [--delta D] [--confidence C] [--json FILE]",
		"Turns an attack's error counts on evaluation runs into an ε lower bound.\n"+
			"Negatives are runs on D, positives runs on D′; FP = runs on D attributed to D′, FN = runs on D′ attributed to D.")
	var c stats.Counts
	var delta, conf float64
	var jsonOut string
	fs.intVar(&c.FP, "fp", 0, 0, maxCount, "false positives: runs on D attributed to D′,")
	fs.intVar(&c.Negatives, "negatives", 0, 1, maxCount, "evaluation runs on D,")
	fs.intVar(&c.FN, "fn", 0, 0, maxCount, "false negatives: runs on D′ attributed to D,")
	fs.intVar(&c.Positives, "positives", 0, 1, maxCount, "evaluation runs on D′,")
	fs.floatVar(&delta, "delta", 1e-5, "[0, 1)", inDelta, "δ of the (ε, δ) statement, in")
	fs.floatVar(&conf, "confidence", 0.95, "(0, 1)", inUnitOpen, "confidence 1−α of the bound, in")
	fs.StringVar(&jsonOut, "json", "", "write the results as JSON to FILE (- for stdout)")
	fs.required = []string{"fp", "negatives", "fn", "positives"}
	if err := fs.parse(args, e, 0); err != nil {
		return err
	}
	if c.FP > c.Negatives {
		return usagef("--fp: must be in [0, negatives=%d], got %d", c.Negatives, c.FP)
	}
	if c.FN > c.Positives {
		return usagef("--fn: must be in [0, positives=%d], got %d", c.Positives, c.FN)
	}
	out := output(jsonOut)
	if err := checkOutputs(e, []namedOutput{{out, "json"}}, nil); err != nil {
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
	t := newTable(w, "estimate", "ε", "μ", "FPR used", "FNR used", "meaning")
	f := stats.FormatFloat
	t.Append("region bound (eq. 12)", f(region.Epsilon), "", rate(region.FPR), rate(region.FNR),
		fmt.Sprintf("ε ≥ this with probability ≥ %g", conf))
	t.Append("GDP μ_lb → ε(δ)", f(gdp.Epsilon), f(gdp.Mu), rate(gdp.FPR), rate(gdp.FNR),
		"μ ≥ μ_lb rigorously; ε assumes a Gaussian trade-off")
	t.Append("ceiling", f(ceil.Epsilon), "", rate(ceil.FPR), rate(ceil.FNR),
		"largest region bound these run counts allow")
	t.Append("point estimate (eq. 11)", f(point.Epsilon), "", rate(point.FPR), rate(point.FNR),
		"observed rates; no guarantee")
	t.Render()
	if region.Epsilon >= ceil.Epsilon*(1-1e-12) && ceil.Epsilon > 0 {
		fmt.Fprintln(w, "\nThe region bound is at its ceiling: more evaluation runs could show a larger ε.")
	}
}

// rate formats an error rate to six significant digits.
func rate(x float64) string { return fmt.Sprintf("%.6g", x) }
