package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// maxEpochRows bounds the number of epochs one run of "audit curve"
// evaluates. All four curves cost 2–5 ms per epoch on one core (Fig. 1
// parameters), so 2,000 epochs take at most about 10 s on two cores;
// longer ranges are covered with a STEP in --epochs.
const maxEpochRows = 2000

// curveParams is the "params" object of "audit curve --json".
type curveParams struct {
	N        int     `json:"n"`
	Alpha    float64 `json:"alpha"`
	Beta     float64 `json:"beta"`
	XH       float64 `json:"xh"`
	XL       float64 `json:"xl"`
	Gamma1   float64 `json:"gamma1"`
	C        float64 `json:"c"`
	CSource  string  `json:"c_source"`
	Eta      float64 `json:"eta"`
	EtaScale float64 `json:"eta_scale,omitempty"`
	EtaSrc   string  `json:"eta_source"`
	Delta    float64 `json:"delta"`
	From     int     `json:"epoch_from"`
	To       int     `json:"epoch_to"`
	Step     int     `json:"epoch_step"`
	LemmaA1  string  `json:"lemma_a1"`
	// Derived.
	S              float64 `json:"s"`
	OneMinusLambda float64 `json:"one_minus_lambda"`
	LambdaPowN     float64 `json:"lambda_pow_n"`
}

// curveSGLDBound is one theorem's verdict on SGLD for the counterexample.
type curveSGLDBound struct {
	Source  string           `json:"source"`
	Applies bool             `json:"applies"`
	Epsilon *stats.JSONFloat `json:"epsilon,omitempty"`
	Reason  string           `json:"reason,omitempty"`
}

// curvePosterior is the posterior's ε (Lemma IV.4), constant over epochs.
type curvePosterior struct {
	Applies bool            `json:"applies"`
	Epsilon stats.JSONFloat `json:"epsilon,omitempty"`
	Order   float64         `json:"order,omitempty"`
	Source  string          `json:"source"`
	Reason  string          `json:"reason,omitempty"`
}

type curveErrs struct {
	Chernoff  stats.JSONFloat `json:"chernoff"`
	Tail      stats.JSONFloat `json:"tail"`
	Threshold stats.JSONFloat `json:"threshold"`
	Profile   stats.JSONFloat `json:"profile"`
}

type curveRow struct {
	Epoch        int             `json:"epoch"`
	EpsChernoff  stats.JSONFloat `json:"eps_chernoff"`
	EpsTail      stats.JSONFloat `json:"eps_tail"`
	EpsThreshold stats.JSONFloat `json:"eps_threshold"`
	EpsProfile   stats.JSONFloat `json:"eps_profile"`
	Err          curveErrs       `json:"err"`
	ProfileExact bool            `json:"profile_exact"`
	// EpsConvergenceLB is the ε that Bertazzi et al. Prop. 3.3 / A.3 proves
	// from convergence alone (closedform.Counterexample.Transfer): the
	// posteriors' exact profile minus (1 + e^ε)·TV to them; 0 where it
	// proves nothing.
	EpsConvergenceLB stats.JSONFloat `json:"eps_convergence_lb"`
}

// curveCrossing is one step size at which --solve-eta's quantity crosses
// the target.
type curveCrossing struct {
	Eta    float64 `json:"eta"`
	Scale  float64 `json:"eta_scale"`
	Rising bool    `json:"rising"`
}

// curveSolve records how --solve-c or --solve-eta chose c or η.
type curveSolve struct {
	Unknown  string  `json:"unknown"` // "c" or "eta"
	Quantity string  `json:"quantity"`
	Target   float64 `json:"target"`
	Epoch    int     `json:"epoch"`
	Value    float64 `json:"value"`
	// Epsilon is the quantity at the solution.
	Epsilon stats.JSONFloat `json:"epsilon"`
	// Unique (for c) says the quantity is proven increasing in c.
	Unique bool `json:"unique,omitempty"`
	// AtZero (for c) is the quantity's limit as c → 0.
	AtZero    float64         `json:"at_zero,omitempty"`
	Crossings []curveCrossing `json:"crossings,omitempty"`
	PeakEta   float64         `json:"peak_eta,omitempty"`
	PeakEps   float64         `json:"peak_epsilon,omitempty"`
}

type curveReport struct {
	Params    curveParams    `json:"params"`
	Posterior curvePosterior `json:"posterior"`
	// Solve is set with --solve-c or --solve-eta.
	Solve *curveSolve `json:"solve,omitempty"`
	// Construction is set with --construct.
	Construction *curveConstruction `json:"construction,omitempty"`
	// SGLDBounds lists the theoretical upper bounds for SGLD itself on this
	// configuration, each with the assumption that fails when it does not
	// apply (at the last epoch's iteration count).
	SGLDBounds []curveSGLDBound `json:"sgld_upper_bounds"`
	Rows       []curveRow       `json:"rows"`
	Note       string           `json:"note"`
}

const curveNote = "Each eps_* is a lower bound on the epsilon of (epsilon, delta)-DP for releasing the SGLD iterate " +
	"after that many epochs, rounded down by its numerical error; err.* bounds how far the exact value can lie above it. " +
	"eps_chernoff: the paper's Fig. 1 quantity (event theta > mu_j, Chernoff bound of Lemma IV.5); eps_tail: the same event " +
	"with its exact probability; eps_threshold: the best half-line theta > t or theta < t, both directions; " +
	"eps_profile: the exact privacy profile (hockey-stick divergence between the Gaussian and the n-component mixture, " +
	"both directions; exact when profile_exact). posterior.epsilon is an upper bound for one posterior draw " +
	"(Lemma A.1 + Lemma IV.4, minimised over the Renyi order)."

// curveMode is what one invocation of "audit curve" computes.
type curveMode int

const (
	modeCurves    curveMode = iota // the four curves for given or solved c, η
	modeConstruct                  // Theorem IV.1's construction, checked
	modeNMin                       // eq. 33 and Algorithm 1
)

// curveOpts is the parsed command line.
type curveOpts struct {
	mode       curveMode
	p          curveParams
	set        map[string]bool
	variant    closedform.LemmaA1Variant
	epochsFlag string
	// c and η.
	cMaxPrivate float64
	solveC      bool
	solveEta    bool
	epsTarget   float64
	atEpoch     int
	quantity    closedform.Quantity
	solved      *curveSolve
	// Theorem IV.1 and Algorithm 1.
	epsPosterior     float64
	gamma2           float64
	rho1, rho2, rho3 float64
	mBreve           float64
	runs             int
	seed             uint64
	maxWork          float64
	// Outputs.
	out      outputFlags
	logScale bool
}

// curveSynopsis is the first line of "audit curve -h".
const curveSynopsis = "curve [--c C | --c-max-private EPS | --solve-c] [--eta-scale K | --eta ETA | --solve-eta] [flags]\n" +
	"       audit curve --construct --eps-posterior EPS --eps-target EPS′ [--gamma1 G1] [--gamma2 G2] [flags]\n" +
	"       audit curve --n-min --eps-posterior EPS [--rho1 R1] [--rho2 R2] [--rho3 R3] [--runs R] [--max-work W] [flags]\n" +
	"       output flags: [--epochs FROM:TO[:STEP]] [--json FILE] [--csv FILE] [--plot FILE.svg|.png] [--log-scale] [--html FILE]"

const curveAbout = "Exact lower bounds on the privacy loss of cyclic SGLD in the interim region (Heller & Fetaya §IV.B):\n" +
	"D1 = n copies of (x_h, c·x_h), D2 replaces one by (x_h/2, c·x_h/2); the output after each epoch is a Gaussian\n" +
	"(D1) versus a uniform mixture of n Gaussians (D2). Defaults are the Fig. 1 caption's parameters.\n" +
	"Three modes: the curves (c and η given, or solved for so that a quantity reaches --eps-target at --at-epoch);\n" +
	"--construct, Theorem IV.1's construction (App. A-A) checked with the exact curves; --n-min, n_min of eq. 33\n" +
	"and runs of Algorithm 1 (propose-test-sample) on the datasets of eq. 9."

// curveFlagGroups orders the flags of "audit curve -h".
var curveFlagGroups = []struct {
	title string
	names []string
}{
	{"Model and datasets", []string{"n", "alpha", "beta", "xh", "xl", "gamma1", "delta", "lemma-a1"}},
	{"c (one of)", []string{"c", "c-max-private", "solve-c"}},
	{"η (one of)", []string{"eta-scale", "eta", "solve-eta"}},
	{"Solving (--solve-c, --solve-eta)", []string{"eps-target", "at-epoch", "quantity"}},
	{"Theorem IV.1 (--construct)", []string{"construct", "eps-posterior", "gamma2"}},
	{"Algorithm 1 and eq. 33 (--n-min)", []string{"n-min", "rho1", "rho2", "rho3", "m-breve", "runs", "seed", "max-work"}},
	{"Output", []string{"epochs", "json", "csv", "plot", "log-scale", "html"}},
}

// curveUsage prints the flags of "audit curve" in groups.
func curveUsage(w io.Writer, fs *flagSet) {
	fmt.Fprintf(w, "Usage: audit %s\n\n%s\n", curveSynopsis, curveAbout)
	for _, g := range curveFlagGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			fl := fs.Lookup(name)
			def := ""
			if _, isBool := fl.Value.(interface{ IsBoolFlag() bool }); !isBool && fl.DefValue != "" && fl.DefValue != "0" {
				def = fmt.Sprintf(" (default %s)", fl.DefValue)
			}
			fmt.Fprintf(w, "  --%-14s %s%s\n", fl.Name, fl.Usage, def)
		}
	}
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--h", "-help", "--help":
			return true
		}
	}
	return false
}

// parseCurveFlags defines, parses and cross-checks the flags.
func parseCurveFlags(args []string, e *env) (*curveOpts, error) {
	fs := newFlagSet(curveSynopsis, curveAbout)
	o := &curveOpts{}
	p := &o.p
	var variant, quantity string
	var nMinFlag, construct bool
	var seed int
	fs.intVar(&p.N, "n", 17864389, 1, 1<<53, "dataset size n (n_1 of Algorithm 1 with --n-min), integer in")
	fs.floatVar(&p.Alpha, "alpha", 2, "(0, ∞)", positive, "prior precision α, in")
	fs.floatVar(&p.Beta, "beta", 1, "(0, ∞)", positive, "noise precision β, in")
	fs.floatVar(&p.XH, "xh", 1.8, "(0, ∞)", positive, "covariate x_h of D1, in")
	fs.floatVar(&p.XL, "xl", 0, "(0, x_h]", positive, "lower covariate bound x_l of the domain (default x_h/2), in")
	fs.floatVar(&p.Gamma1, "gamma1", 0.1, "(0, 0.5)", func(x float64) bool { return x > 0 && x < 0.5 },
		"domain exponent γ1 (|y/x − c| ≤ n^γ1), in")
	fs.floatVar(&p.Delta, "delta", 0.001, "(0, 1)", inUnitOpen, "δ of the (ε, δ) statements, in")
	fs.StringVar(&variant, "lemma-a1", "conservative", "reading of Lemma A.1 for the posterior ε: conservative or printed")
	fs.floatVar(&p.C, "c", 0, "(0, ∞)", positive, "slope c of the data, y = c·x, in")
	fs.floatVar(&o.cMaxPrivate, "c-max-private", 0, "(0, ∞)", positive,
		"use the largest c whose posterior is (EPS, δ)-DP by Lemma A.1 + IV.4; EPS in")
	fs.BoolVar(&o.solveC, "solve-c", false, "use the c at which --quantity at --at-epoch equals --eps-target")
	fs.floatVar(&p.EtaScale, "eta-scale", 2, "(0, 2s)", positive, "step size η = k/s², s = α + n·x_h²·β; k in")
	fs.floatVar(&p.Eta, "eta", 0, "(0, 2/s)", positive, "step size η directly, in")
	fs.BoolVar(&o.solveEta, "solve-eta", false, "use the smallest η at which --quantity at --at-epoch reaches --eps-target (needs --c)")
	fs.floatVar(&o.epsTarget, "eps-target", 0, "(0, ∞)", positive, "target ε′ for --solve-c, --solve-eta and --construct, in")
	fs.intVar(&o.atEpoch, "at-epoch", 0, 1, math.MaxInt32, "epoch K at which --solve-c or --solve-eta reaches the target, in")
	fs.StringVar(&quantity, "quantity", "chernoff", "quantity to solve for: chernoff (the paper's Fig. 1), tail, threshold or profile")
	fs.BoolVar(&construct, "construct", false, "Theorem IV.1's construction (App. A-A) for --eps-posterior, --eps-target, --delta, --gamma1, --gamma2")
	fs.floatVar(&o.epsPosterior, "eps-posterior", 0, "(0, ∞)", positive, "ε of the posterior (--construct) or of Algorithm 1 (--n-min), in")
	fs.floatVar(&o.gamma2, "gamma2", 0, "(1 + γ1, 1.5)", func(x float64) bool { return x > 1 && x < 1.5 },
		"c_p = n_p^γ2 (default the γ2 minimising n_p), in")
	fs.BoolVar(&nMinFlag, "n-min", false, "n_min of eq. 33 and Algorithm 1 on eq. 9's datasets D3, D4 (--n is n_1)")
	fs.floatVar(&o.rho1, "rho1", 1.01, "(1, 1.5)", func(x float64) bool { return x > 1 && x < 1.5 }, "Algorithm 1's ρ1, in")
	fs.floatVar(&o.rho2, "rho2", 0.05, "(0, γ1)", func(x float64) bool { return x > 0 && x < 0.5 }, "Algorithm 1's ρ2, in")
	fs.floatVar(&o.rho3, "rho3", 1.005, "(1, ρ1)", func(x float64) bool { return x > 1 && x < 1.5 }, "slope n_1^ρ3 of eq. 9's datasets, in")
	fs.floatVar(&o.mBreve, "m-breve", 0, "[0, ∞)", func(x float64) bool { return x >= 0 }, "noisy slope m̆ at which eq. 33 is shown (default n_1^ρ3), in")
	fs.intVar(&o.runs, "runs", 1000, 0, 10000000, "runs of Algorithm 1 on each of D3 and D4, in")
	fs.intVar(&seed, "seed", 1, 0, math.MaxInt, "seed of those runs, in")
	fs.floatVar(&o.maxWork, "max-work", 0, "[0, ∞)", func(x float64) bool { return x >= 0 },
		fmt.Sprintf("refuse runs whose estimated work exceeds this many units of a few ns each (0: the default %g, about 10 s), in", curveDefaultMaxWork))
	fs.StringVar(&o.epochsFlag, "epochs", "1:70", "epochs FROM:TO or FROM:TO:STEP, at most 2000 of them; epoch 0 is the prior draw (ε = 0); "+
		"with --construct: 1 to twice Lemma A.9's epoch")
	o.out.register(fs, outputHelp{
		json: "write params and rows as JSON to FILE (- for stdout)",
		csv:  "write the rows as CSV to FILE (- for stdout)",
		plot: "plot the curves to FILE.svg or FILE.png",
		html: "write a self-contained HTML report (table and plot) to FILE (- for stdout)",
	})
	fs.BoolVar(&o.logScale, "log-scale", false, "use a logarithmic ε axis in --plot (points with ε = 0 are left out)")
	if wantsHelp(args) {
		curveUsage(e.stdout, fs)
		return nil, errHelp
	}
	if err := fs.parse(args, e, 0); err != nil {
		return nil, err
	}
	o.seed = uint64(seed)
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })

	switch {
	case construct && nMinFlag:
		return nil, usagef("--construct and --n-min are exclusive")
	case construct:
		o.mode = modeConstruct
	case nMinFlag:
		o.mode = modeNMin
	}
	var err error
	if o.variant, err = parseLemmaA1(variant); err != nil {
		return nil, err
	}
	if o.quantity, err = closedform.ParseQuantity(quantity); err != nil {
		return nil, usageError{"--" + err.Error()}
	}
	p.LemmaA1 = o.variant.String()
	if !o.set["xl"] {
		p.XL = p.XH / 2
	}
	if p.XL > p.XH {
		return nil, usagef("--xl: must be in (0, x_h] = (0, %g], got %g", p.XH, p.XL)
	}
	if err := o.checkModeFlags(); err != nil {
		return nil, err
	}
	// The output flags, with the checks every command makes: each output
	// writable and a regular file, at most one on stdout, no two on the
	// same file.
	if err := o.out.checkPlotExt(); err != nil {
		return nil, err
	}
	if err := o.out.check(e, nil); err != nil {
		return nil, err
	}
	return o, nil
}

func parseLemmaA1(s string) (closedform.LemmaA1Variant, error) {
	switch s {
	case "conservative":
		return closedform.A1Conservative, nil
	case "printed":
		return closedform.A1Printed, nil
	}
	return 0, usagef("--lemma-a1: must be conservative or printed, got %q", s)
}

// curveModeSpec is one mode of "audit curve": the check of the flags it
// uses, refuses and requires, and what it runs. The modes share the model
// flags and the output flags (--json, --csv, --plot, --html).
type curveModeSpec struct {
	check func(o *curveOpts) error
	run   func(ctx context.Context, o *curveOpts, e *env) error
}

// curveModes are the modes, by the flag that chooses them.
var curveModes = [...]curveModeSpec{
	modeCurves:    {(*curveOpts).checkCurvesFlags, runCurves},
	modeConstruct: {(*curveOpts).checkConstructFlags, runConstruct},
	modeNMin:      {(*curveOpts).checkNMinFlags, runNMin},
}

// checkModeFlags refuses flags that the chosen mode does not use and
// requires those it needs, then parses --epochs where it applies.
func (o *curveOpts) checkModeFlags() error {
	if err := curveModes[o.mode].check(o); err != nil {
		return err
	}
	if o.mode != modeNMin || o.set["epochs"] {
		var err error
		o.p.From, o.p.To, o.p.Step, err = parseEpochs(o.epochsFlag)
		if err != nil {
			return err
		}
	}
	return nil
}

// unused refuses the first of the flags that was given: the mode (as
// said by mode, e.g. "with --n-min") does not use it.
func (o *curveOpts) unused(mode string, names ...string) error {
	for _, n := range names {
		if o.set[n] {
			return usagef("--%s: not used %s", n, mode)
		}
	}
	return nil
}

// required refuses the first of the flags that was not given.
func (o *curveOpts) required(mode string, names ...string) error {
	for _, n := range names {
		if !o.set[n] {
			return usagef("--%s is required %s", n, mode)
		}
	}
	return nil
}

// checkConstructFlags checks the flags of --construct.
func (o *curveOpts) checkConstructFlags() error {
	const m = "with --construct (the construction sets n, c, η and x_l = x_h/2)"
	if err := o.unused(m, "n", "xl", "c", "c-max-private", "solve-c", "eta", "eta-scale", "solve-eta", "at-epoch", "quantity",
		"rho1", "rho2", "rho3", "m-breve", "runs", "seed", "max-work"); err != nil {
		return err
	}
	if err := o.required("with --construct", "eps-posterior", "eps-target"); err != nil {
		return err
	}
	if o.set["gamma2"] && !(o.gamma2 > 1+o.p.Gamma1) {
		return usagef("--gamma2: must be in (1 + γ1, 1.5) = (%g, 1.5), got %g", 1+o.p.Gamma1, o.gamma2)
	}
	return nil
}

// checkNMinFlags checks the flags of --n-min.
func (o *curveOpts) checkNMinFlags() error {
	const m = "with --n-min"
	if err := o.unused(m, "c", "c-max-private", "solve-c", "eta", "eta-scale", "solve-eta", "eps-target", "at-epoch", "quantity",
		"gamma2", "epochs", "csv", "plot", "log-scale", "html", "lemma-a1"); err != nil {
		return err
	}
	if err := o.required(m, "eps-posterior"); err != nil {
		return err
	}
	if !(o.rho2 < o.p.Gamma1) {
		return usagef("--rho2: must be in (0, γ1) = (0, %g) (Algorithm 1 needs γ1 ∈ (ρ2, 1/2)), got %g", o.p.Gamma1, o.rho2)
	}
	if !(o.rho3 < o.rho1) {
		return usagef("--rho3: must be in (1, ρ1) = (1, %g) (eq. 9), got %g", o.rho1, o.rho3)
	}
	return nil
}

// checkCurvesFlags checks the flags of the curves: one way to choose c,
// at most one to choose η, and the target when solving for either.
func (o *curveOpts) checkCurvesFlags() error {
	if err := o.unused("without --construct or --n-min", "eps-posterior", "gamma2", "rho1", "rho2", "rho3", "m-breve", "runs", "seed", "max-work"); err != nil {
		return err
	}
	if err := o.checkCAndEta(); err != nil {
		return err
	}
	if o.solveC || o.solveEta {
		return o.required("with --solve-c or --solve-eta", "eps-target", "at-epoch")
	}
	return o.unused("without --solve-c or --solve-eta", "eps-target", "at-epoch", "quantity")
}

// checkCAndEta requires exactly one of --c, --c-max-private and
// --solve-c, and at most one of --eta, --eta-scale and --solve-eta, which
// needs a given c.
func (o *curveOpts) checkCAndEta() error {
	nc := 0
	for _, f := range []string{"c", "c-max-private", "solve-c"} {
		if o.set[f] {
			nc++
		}
	}
	switch {
	case nc > 1:
		return usagef("--c, --c-max-private and --solve-c are exclusive")
	case nc == 0:
		return usagef("--c, --c-max-private or --solve-c is required")
	case o.set["eta"] && o.set["eta-scale"], o.set["eta"] && o.solveEta, o.set["eta-scale"] && o.solveEta:
		return usagef("--eta, --eta-scale and --solve-eta are exclusive")
	case o.solveEta && !o.set["c"]:
		return usagef("--solve-eta needs --c (solving for both c and η has no single answer)")
	}
	return nil
}

// parseEpochs parses FROM:TO or FROM:TO:STEP.
func parseEpochs(s string) (from, to, step int, err error) {
	bad := usagef("--epochs: must be FROM:TO or FROM:TO:STEP with integers 0 ≤ FROM ≤ TO, STEP ≥ 1, got %q", s)
	parts := strings.Split(s, ":")
	if len(parts) != 2 && len(parts) != 3 {
		return 0, 0, 0, bad
	}
	var v [3]int
	v[2] = 1
	for i, part := range parts {
		x, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return 0, 0, 0, bad
		}
		v[i] = x
	}
	from, to, step = v[0], v[1], v[2]
	if from < 0 || to < from || step < 1 || to > math.MaxInt32 {
		return 0, 0, 0, bad
	}
	if rows := (to-from)/step + 1; rows > maxEpochRows {
		return 0, 0, 0, usagef("--epochs: at most %d epochs per run (each costs a few ms), got %d in %q; use FROM:TO:STEP, e.g. %d:%d:%d",
			maxEpochRows, rows, s, from, to, (to-from)/(maxEpochRows-1)+1)
	}
	return from, to, step, nil
}

// epochList expands FROM:TO:STEP.
func epochList(p curveParams) []int {
	var out []int
	for e := p.From; e <= p.To; e += p.Step {
		out = append(out, e)
	}
	return out
}

func runCurve(args []string, e *env) error {
	// SIGINT and SIGTERM end every mode with exit 130 and one line, and
	// nothing written: the loops check ctx, and a closed-form step that
	// cannot (a solver) is left after interruptGrace.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o, err := parseCurveFlags(args, e)
	if err != nil {
		return err
	}
	return curveModes[o.mode].run(ctx, o, e)
}

// runCurves computes and writes the four curves for c and η given or
// solved for.
func runCurves(ctx context.Context, o *curveOpts, e *env) error {
	rep, err := untilInterrupted(ctx, func() (curveReport, error) {
		ce, err := o.counterexample()
		if err != nil {
			return curveReport{}, err
		}
		return o.curveReport(ctx, ce)
	})
	if ctx.Err() != nil {
		return errCurveInterrupted
	}
	if err != nil {
		return err
	}
	return o.render(ctx, e, rep, printCurve)
}

// errCurveInterrupted ends "audit curve" stopped by SIGINT or SIGTERM before
// it wrote anything.
var errCurveInterrupted = interruptedError{"interrupted; nothing was written"}

// counterexample resolves c and η — given, or solved for — into the
// configuration whose curves are printed.
func (o *curveOpts) counterexample() (closedform.Counterexample, error) {
	p := &o.p
	ce := closedform.Counterexample{N: p.N, Alpha: p.Alpha, Beta: p.Beta, XH: p.XH, C: p.C}
	p.S = ce.S()
	dom := closedform.LinRegDomain{N: p.N, Alpha: p.Alpha, Beta: p.Beta, Gamma1: p.Gamma1, XH: p.XH, XL: p.XL}
	// η first: it does not depend on c, except with --solve-eta.
	if o.set["eta"] {
		ce.Eta, p.EtaScale, p.EtaSrc = p.Eta, 0, "--eta"
	} else {
		ce.Eta = ce.EtaScaled(p.EtaScale)
		p.EtaSrc = "--eta-scale"
	}
	switch {
	case o.set["c-max-private"]:
		c, err := dom.MaxPrivateC(o.cMaxPrivate, p.Delta, o.variant)
		if err != nil {
			return ce, usagef("--c-max-private: %v", err)
		}
		if math.IsInf(c, 1) {
			return ce, usagef("--c-max-private: every c gives an (%g, %g)-DP posterior", o.cMaxPrivate, p.Delta)
		}
		ce.C = c
		p.CSource = fmt.Sprintf("largest c with a (%g, %g)-DP posterior (Lemma A.1 %s + Lemma IV.4)", o.cMaxPrivate, p.Delta, o.variant)
	case o.solveC:
		ce.C = 1 // any valid c: the solver replaces it
		if err := o.validEta(ce); err != nil {
			return ce, err
		}
		sol, err := ce.SolveC(o.quantity, o.atEpoch, p.Delta, o.epsTarget)
		if err != nil {
			return ce, solveErr("--solve-c", err)
		}
		ce.C = sol.C
		p.CSource = fmt.Sprintf("solved: ε_%s at epoch %d = %g", o.quantity, o.atEpoch, o.epsTarget)
		o.solved = &curveSolve{Unknown: "c", Quantity: o.quantity.String(), Target: o.epsTarget, Epoch: o.atEpoch,
			Value: sol.C, Epsilon: stats.JSONFloat(sol.Bound.Epsilon), Unique: sol.Unique, AtZero: sol.AtZero}
	default:
		p.CSource = "--c"
	}
	if o.solveEta {
		sol, err := ce.SolveEta(o.quantity, o.atEpoch, p.Delta, o.epsTarget)
		if err != nil {
			return ce, solveErr("--solve-eta", err)
		}
		var first *closedform.EtaCrossing
		for i := range sol.Crossings {
			if sol.Crossings[i].Rising {
				first = &sol.Crossings[i]
				break
			}
		}
		if first == nil {
			// The quantity is above the target from the smallest η scanned.
			first = &sol.Crossings[0]
		}
		ce.Eta, p.EtaScale = first.Eta, first.Scale
		p.EtaSrc = fmt.Sprintf("solved: smallest η with ε_%s at epoch %d = %g", o.quantity, o.atEpoch, o.epsTarget)
		b, err := ce.QuantityAt(o.quantity, o.atEpoch, p.Delta)
		if err != nil {
			return ce, usageError{"--" + err.Error()}
		}
		s := &curveSolve{Unknown: "eta", Quantity: o.quantity.String(), Target: o.epsTarget, Epoch: o.atEpoch,
			Value: first.Eta, Epsilon: stats.JSONFloat(b.Epsilon), PeakEta: sol.PeakEta, PeakEps: sol.PeakEpsilon}
		for _, x := range sol.Crossings {
			s.Crossings = append(s.Crossings, curveCrossing{Eta: x.Eta, Scale: x.Scale, Rising: x.Rising})
		}
		o.solved = s
	}
	p.C, p.Eta = ce.C, ce.Eta
	if err := o.validEta(ce); err != nil {
		return ce, err
	}
	p.OneMinusLambda = ce.Eta * p.S / 2
	p.LambdaPowN = math.Exp(float64(p.N) * math.Log1p(-p.OneMinusLambda))
	return ce, nil
}

// validEta checks the configuration, naming --eta-scale when η came from it.
func (o *curveOpts) validEta(ce closedform.Counterexample) error {
	err := ce.Validate()
	if err == nil {
		return nil
	}
	name := strings.SplitN(err.Error(), ":", 2)[0]
	if name == "eta" && !o.set["eta"] && !o.solveEta {
		return usagef("--eta-scale: η = %g/s² = %g is not in (0, 2/s) = (0, %g); k must be below 2s = %g",
			o.p.EtaScale, ce.Eta, 2/o.p.S, 2*o.p.S)
	}
	return usageError{"--" + err.Error()}
}

// solveErr turns a solver error into a one-line usage error naming the flag.
func solveErr(flagName string, err error) error {
	msg := err.Error()
	if errors.Is(err, closedform.ErrUnreachable) {
		return usagef("%s: %s", flagName, msg)
	}
	if i := strings.Index(msg, ":"); i > 0 && !strings.Contains(msg[:i], " ") {
		return usageError{"--" + msg}
	}
	return usagef("%s: %s", flagName, msg)
}

// curveReport computes the posterior's ε, the SGLD theorems' verdicts and
// the rows.
func (o *curveOpts) curveReport(ctx context.Context, ce closedform.Counterexample) (curveReport, error) {
	p := o.p
	rep := curveReport{Params: p, Note: curveNote, Solve: o.solved}
	dom := closedform.LinRegDomain{N: p.N, Alpha: p.Alpha, Beta: p.Beta, Gamma1: p.Gamma1, XH: p.XH, XL: p.XL, C: p.C}
	g := dom.PosteriorGuarantee(o.variant)
	rep.Posterior.Source = g.Source + " (" + g.Variant + " reading)"
	if g.Applies {
		eps, nu, err := dom.PosteriorDP(p.Delta, o.variant)
		if err != nil {
			return rep, usageError{"--" + err.Error()}
		}
		rep.Posterior.Applies, rep.Posterior.Epsilon, rep.Posterior.Order = true, stats.JSONFloat(eps), nu
	} else {
		rep.Posterior.Reason = g.Reason
	}

	// The SGLD theorems, for cyclic batch-1 SGLD on this model and pair: the
	// records whose gradients matter are the two kinds in D1 ∪ D2.
	sg := &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: ce.Eta}, Batch: 1, Scheme: mechanisms.Cyclic, Epochs: max(p.To, 1)}
	recs := []dataset.Record{{X: []float64{p.XH}, Y: p.C * p.XH}, {X: []float64{p.XH / 2}, Y: p.C * p.XH / 2}}
	// T = epochs · n iterations: n ≤ 2^53 and epochs ≤ 2^31 may overflow an
	// int. The theorems are then listed, each saying why it gives no
	// number, rather than evaluated at a wrapped-around T.
	iters, ok := mechanisms.MulCount(max(p.To, 1), p.N)
	tooLong := ""
	if !ok {
		tooLong = fmt.Sprintf("not evaluated: %d epochs of n = %d records are %s iterations, more than an int counts",
			max(p.To, 1), p.N, fmtG(float64(max(p.To, 1))*float64(p.N)))
		iters = 1
	}
	for _, g := range mechanisms.SamplerGuarantees(sg, mechanisms.Setting{Model: mechanisms.NewLinReg1D(p.Alpha, p.Beta), Records: recs, Adjacency: dataset.ReplaceOne, N: p.N, Iterations: iters}) {
		b := curveSGLDBound{Source: mechanisms.GuaranteeLabel(g), Applies: g.Applies, Reason: g.Reason}
		if tooLong != "" {
			b.Applies, b.Reason = false, tooLong
		}
		if b.Applies {
			if eps, err := g.Epsilon(p.Delta); err == nil {
				v := stats.JSONFloat(eps)
				b.Epsilon = &v
			}
		}
		rep.SGLDBounds = append(rep.SGLDBounds, b)
	}
	rows, err := curveRows(ctx, ce, epochList(p), p.Delta)
	if err != nil {
		return rep, err
	}
	rep.Rows = rows
	return rep, nil
}

// curveRows evaluates the four curves at each epoch, concurrently (the
// result does not depend on the number of workers). It stops at the next
// epoch once ctx is cancelled, returning ctx's error.
func curveRows(ctx context.Context, ce closedform.Counterexample, epochs []int, delta float64) ([]curveRow, error) {
	// One evaluation up front turns parameter errors (e.g. a c too large
	// for float64) into usage errors before any work is spread out.
	for _, ep := range []int{epochs[0], epochs[len(epochs)-1]} {
		if _, err := ce.Moments(ep); err != nil {
			return nil, usageError{"--" + err.Error()}
		}
	}
	rows := make([]curveRow, len(epochs))
	errs := make([]error, len(epochs))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := ce.Curves(epochs[i], delta)
				if err != nil {
					errs[i] = err
					continue
				}
				rows[i] = curveRow{
					Epoch:        c.Epoch,
					EpsChernoff:  stats.JSONFloat(c.Chernoff.Epsilon),
					EpsTail:      stats.JSONFloat(c.Tail.Epsilon),
					EpsThreshold: stats.JSONFloat(c.Threshold.Epsilon),
					EpsProfile:   stats.JSONFloat(c.Profile.Epsilon),
					Err: curveErrs{stats.JSONFloat(c.Chernoff.Err), stats.JSONFloat(c.Tail.Err),
						stats.JSONFloat(c.Threshold.Err), stats.JSONFloat(c.Profile.Err)},
					ProfileExact: c.ProfileExact,
				}
				tr, err := ce.Transfer(epochs[i], delta)
				if err != nil {
					errs[i] = err
					continue
				}
				rows[i].EpsConvergenceLB = stats.JSONFloat(tr.NotDPEpsilon)
			}
		}()
	}
feed:
	for i := range epochs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			// Only parameter errors are returned, e.g. a c too large for float64.
			return nil, usageError{"--" + err.Error()}
		}
	}
	return rows, nil
}
