package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/internal/curve"
)

// parseCurveFlags defines and parses the flags of "audit curve" and
// checks them (curve.Options.Check).
func parseCurveFlags(args []string, e *env) (*curve.Options, error) {
	fs := newFlagSet(curve.Synopsis, curve.About)
	o := &curve.Options{}
	p := &o.Params
	fs.intVar(&p.N, "n", 17864389, 1, 1<<53, "dataset size n (n_1 of Algorithm 1 with --n-min), integer in")
	fs.floatVar(&p.Alpha, "alpha", 2, "(0, ∞)", positive, "prior precision α, in")
	fs.floatVar(&p.Beta, "beta", 1, "(0, ∞)", positive, "noise precision β, in")
	fs.floatVar(&p.XH, "xh", 1.8, "(0, ∞)", positive, "covariate x_h of D1, in")
	fs.floatVar(&p.XL, "xl", 0, "(0, x_h]", positive, "lower covariate bound x_l of the domain (default x_h/2), in")
	fs.floatVar(&p.Gamma1, "gamma1", 0.1, "(0, 0.5)", func(x float64) bool { return x > 0 && x < 0.5 },
		"domain exponent γ1 (|y/x − c| ≤ n^γ1), in")
	fs.floatVar(&p.Delta, "delta", 0.001, "(0, 1)", inUnitOpen, "δ of the (ε, δ) statements, in")
	fs.StringVar(&o.LemmaA1, "lemma-a1", "conservative", "reading of Lemma A.1 for the posterior ε: conservative or printed")
	fs.floatVar(&p.C, "c", 0, "(0, ∞)", positive, "slope c of the data, y = c·x, in")
	fs.floatVar(&o.CMaxPrivate, "c-max-private", 0, "(0, ∞)", positive,
		"use the largest c whose posterior is (EPS, δ)-DP by Lemma A.1 + IV.4; EPS in")
	fs.BoolVar(&o.SolveC, "solve-c", false, "use the c at which --quantity at --at-epoch equals --eps-target")
	fs.floatVar(&p.EtaScale, "eta-scale", 2, "(0, 2s)", positive, "step size η = k/s², s = α + n·x_h²·β; k in")
	fs.floatVar(&p.Eta, "eta", 0, "(0, 2/s)", positive, "step size η directly, in")
	fs.BoolVar(&o.SolveEta, "solve-eta", false, "use the smallest η at which --quantity at --at-epoch reaches --eps-target (needs --c)")
	fs.floatVar(&o.EpsTarget, "eps-target", 0, "(0, ∞)", positive, "target ε′ for --solve-c, --solve-eta and --construct, in")
	fs.intVar(&o.AtEpoch, "at-epoch", 0, 1, math.MaxInt32, "epoch K at which --solve-c or --solve-eta reaches the target, in")
	fs.StringVar(&o.QuantityName, "quantity", "chernoff", "quantity to solve for: chernoff (the paper's Fig. 1), tail, threshold or profile")
	fs.BoolVar(&o.Construct, "construct", false, "Theorem IV.1's construction (App. A-A) for --eps-posterior, --eps-target, --delta, --gamma1, --gamma2")
	fs.floatVar(&o.EpsPosterior, "eps-posterior", 0, "(0, ∞)", positive, "ε of the posterior (--construct) or of Algorithm 1 (--n-min), in")
	fs.floatVar(&o.Gamma2, "gamma2", 0, "(1 + γ1, 1.5)", func(x float64) bool { return x > 1 && x < 1.5 },
		"c_p = n_p^γ2 (default the γ2 minimising n_p), in")
	fs.BoolVar(&o.NMin, "n-min", false, "n_min of eq. 33 and Algorithm 1 on eq. 9's datasets D3, D4 (--n is n_1)")
	fs.floatVar(&o.Rho1, "rho1", 1.01, "(1, 1.5)", func(x float64) bool { return x > 1 && x < 1.5 }, "Algorithm 1's ρ1, in")
	fs.floatVar(&o.Rho2, "rho2", 0.05, "(0, γ1)", func(x float64) bool { return x > 0 && x < 0.5 }, "Algorithm 1's ρ2, in")
	fs.floatVar(&o.Rho3, "rho3", 1.005, "(1, ρ1)", func(x float64) bool { return x > 1 && x < 1.5 }, "slope n_1^ρ3 of eq. 9's datasets, in")
	fs.floatVar(&o.MBreve, "m-breve", 0, "[0, ∞)", func(x float64) bool { return x >= 0 }, "noisy slope m̆ at which eq. 33 is shown (default n_1^ρ3), in")
	fs.intVar(&o.Runs, "runs", 1000, 0, 10000000, "runs of Algorithm 1 on each of D3 and D4, in")
	fs.intVar(&o.Seed, "seed", 1, 0, math.MaxInt, "seed of those runs, in")
	fs.floatVar(&o.MaxWork, "max-work", 0, "[0, ∞)", func(x float64) bool { return x >= 0 },
		fmt.Sprintf("refuse runs whose estimated work exceeds this many units of a few ns each (0: the default %g, about 10 s), in", curve.DefaultMaxWork))
	fs.StringVar(&o.Epochs, "epochs", "1:70", "epochs FROM:TO or FROM:TO:STEP, at most 2000 of them; epoch 0 is the prior draw (ε = 0); "+
		"with --construct: 1 to twice Lemma A.9's epoch")
	outs := outputFlags{}
	outs.register(fs, outputHelp{
		json: "write params and rows as JSON to FILE (- for stdout)",
		csv:  "write the rows as CSV to FILE (- for stdout)",
		plot: "plot the curves to FILE.svg or FILE.png",
		html: "write a self-contained HTML report (table and plot) to FILE (- for stdout)",
	})
	fs.BoolVar(&o.LogScale, "log-scale", false, "use a logarithmic ε axis in --plot (points with ε = 0 are left out)")
	if curve.WantsHelp(args) {
		curve.Usage(e.stdout, fs.FlagSet.FlagSet)
		return nil, errHelp
	}
	if err := fs.parse(args, e, 0); err != nil {
		return nil, err
	}
	o.Out = outs.OutputFlags
	o.Set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.Set[f.Name] = true })
	return o, o.Check(e.cli())
}

// runCurve is "audit curve".
func runCurve(args []string, e *env) error {
	// SIGINT and SIGTERM end every mode with exit 130 and one line, and
	// nothing written: the loops check ctx, and a closed-form step that
	// cannot (a solver) is left after the grace period of
	// cli.UntilInterrupted.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o, err := parseCurveFlags(args, e)
	if err != nil {
		return err
	}
	return curve.Run(ctx, e.cli(), o)
}
