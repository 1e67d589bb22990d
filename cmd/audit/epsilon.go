package main

import (
	"flag"

	"github.com/mcmcaudit/mcmcaudit/internal/epsilon"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// fpfnFlags and oneRunFlags are the flags of the two modes of "audit
// epsilon"; each mode refuses the other's.
var (
	fpfnFlags   = []string{"fp", "negatives", "fn", "positives"}
	oneRunFlags = []string{"canaries", "guesses", "correct"}
)

// runEpsilon is "audit epsilon".
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
	fs.intVar(&c.FP, "fp", 0, 0, epsilon.MaxCount, "false positives: runs on D attributed to D′ (required without --one-run),")
	fs.intVar(&c.Negatives, "negatives", 0, 1, epsilon.MaxCount, "evaluation runs on D (required without --one-run),")
	fs.intVar(&c.FN, "fn", 0, 0, epsilon.MaxCount, "false negatives: runs on D′ attributed to D (required without --one-run),")
	fs.intVar(&c.Positives, "positives", 0, 1, epsilon.MaxCount, "evaluation runs on D′ (required without --one-run),")
	fs.BoolVar(&oneRun, "one-run", false, "bound a one-run canary audit from --canaries, --guesses and --correct")
	fs.intVar(&oc.Canaries, "canaries", 0, 1, epsilon.MaxCanaries, "with --one-run: canaries M, each in the run with probability 1/2,")
	fs.intVar(&oc.Guesses, "guesses", 0, 0, epsilon.MaxCanaries, "with --one-run: guesses R (at most M), their number fixed in advance,")
	fs.intVar(&oc.Correct, "correct", 0, 0, epsilon.MaxCanaries, "with --one-run: correct guesses V (at most R),")
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
		return epsilon.OneRun(e.cli(), oc, delta, conf, outs.OutputFlags)
	}
	return epsilon.Counts(e.cli(), c, delta, conf, outs.OutputFlags)
}
