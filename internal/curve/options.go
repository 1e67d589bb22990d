package curve

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
)

// curveMode is what one invocation of "audit curve" computes.
type Mode int

const (
	ModeCurves    Mode = iota // the four curves for given or solved c, η
	ModeConstruct             // Theorem IV.1's construction, checked
	ModeNMin                  // eq. 33 and Algorithm 1
)

// Options are the flags of "audit curve", as parsed, and what Check
// resolves from them.
type Options struct {
	// Params are the model's and the datasets' flags (--n, --alpha, --beta,
	// --xh, --xl, --gamma1, --delta, --c, --eta-scale, --eta), filled in
	// further as c and η are resolved.
	Params Params
	// Set holds the names of the flags given on the command line.
	Set map[string]bool
	// LemmaA1 is --lemma-a1 (conservative or printed), QuantityName
	// --quantity, Epochs --epochs FROM:TO[:STEP].
	LemmaA1, QuantityName, Epochs string
	// Construct is --construct, NMin --n-min: the mode (neither: the
	// curves).
	Construct, NMin bool
	// c and η.
	CMaxPrivate float64
	SolveC      bool
	SolveEta    bool
	EpsTarget   float64
	AtEpoch     int
	// Theorem IV.1 and Algorithm 1.
	EpsPosterior     float64
	Gamma2           float64
	Rho1, Rho2, Rho3 float64
	MBreve           float64
	Runs             int
	Seed             int
	MaxWork          float64
	// Outputs.
	Out      cli.OutputFlags
	LogScale bool

	// Resolved by Check.
	Mode     Mode
	Variant  closedform.LemmaA1Variant
	Quantity closedform.Quantity
	seed     uint64
	solved   *Solve
}

// curveSynopsis is the first line of "audit curve -h".
const Synopsis = "curve [--c C | --c-max-private EPS | --solve-c] [--eta-scale K | --eta ETA | --solve-eta] [flags]\n" +
	"       audit curve --construct --eps-posterior EPS --eps-target EPS′ [--gamma1 G1] [--gamma2 G2] [flags]\n" +
	"       audit curve --n-min --eps-posterior EPS [--rho1 R1] [--rho2 R2] [--rho3 R3] [--runs R] [--max-work W] [flags]\n" +
	"       output flags: [--epochs FROM:TO[:STEP]] [--json FILE] [--csv FILE] [--plot FILE.svg|.png] [--log-scale] [--html FILE]"

// About is the text of "audit curve -h" under its synopsis.
const About = "Exact lower bounds on the privacy loss of cyclic SGLD in the interim region (Heller & Fetaya §IV.B):\n" +
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
func Usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: audit %s\n\n%s\n", Synopsis, About)
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

// WantsHelp reports whether args ask for help before any "--".
func WantsHelp(args []string) bool {
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

func parseLemmaA1(s string) (closedform.LemmaA1Variant, error) {
	switch s {
	case "conservative":
		return closedform.A1Conservative, nil
	case "printed":
		return closedform.A1Printed, nil
	}
	return 0, cli.Usagef("--lemma-a1: must be conservative or printed, got %q", s)
}

// curveModeSpec is one mode of "audit curve": the check of the flags it
// uses, refuses and requires, and what it runs. The modes share the model
// flags and the output flags (--json, --csv, --plot, --html).
type curveModeSpec struct {
	check func(o *Options) error
	run   func(ctx context.Context, o *Options, e *cli.Env) error
}

// curveModes are the modes, by the flag that chooses them.
var curveModes = [...]curveModeSpec{
	ModeCurves:    {(*Options).checkCurvesFlags, runCurves},
	ModeConstruct: {(*Options).checkConstructFlags, runConstruct},
	ModeNMin:      {(*Options).checkNMinFlags, runNMin},
}

// checkModeFlags refuses flags that the chosen mode does not use and
// requires those it needs, then parses --epochs where it applies.
func (o *Options) checkModeFlags() error {
	if err := curveModes[o.Mode].check(o); err != nil {
		return err
	}
	if o.Mode != ModeNMin || o.Set["epochs"] {
		var err error
		o.Params.From, o.Params.To, o.Params.Step, err = parseEpochs(o.Epochs)
		if err != nil {
			return err
		}
	}
	return nil
}

// unused refuses the first of the flags that was given: the mode (as
// said by mode, e.g. "with --n-min") does not use it.
func (o *Options) unused(mode string, names ...string) error {
	for _, n := range names {
		if o.Set[n] {
			return cli.Usagef("--%s: not used %s", n, mode)
		}
	}
	return nil
}

// required refuses the first of the flags that was not given.
func (o *Options) required(mode string, names ...string) error {
	for _, n := range names {
		if !o.Set[n] {
			return cli.Usagef("--%s is required %s", n, mode)
		}
	}
	return nil
}

// checkConstructFlags checks the flags of --construct.
func (o *Options) checkConstructFlags() error {
	const m = "with --construct (the construction sets n, c, η and x_l = x_h/2)"
	if err := o.unused(m, "n", "xl", "c", "c-max-private", "solve-c", "eta", "eta-scale", "solve-eta", "at-epoch", "quantity",
		"rho1", "rho2", "rho3", "m-breve", "runs", "seed", "max-work"); err != nil {
		return err
	}
	if err := o.required("with --construct", "eps-posterior", "eps-target"); err != nil {
		return err
	}
	if o.Set["gamma2"] && !(o.Gamma2 > 1+o.Params.Gamma1) {
		return cli.Usagef("--gamma2: must be in (1 + γ1, 1.5) = (%g, 1.5), got %g", 1+o.Params.Gamma1, o.Gamma2)
	}
	return nil
}

// checkNMinFlags checks the flags of --n-min.
func (o *Options) checkNMinFlags() error {
	const m = "with --n-min"
	if err := o.unused(m, "c", "c-max-private", "solve-c", "eta", "eta-scale", "solve-eta", "eps-target", "at-epoch", "quantity",
		"gamma2", "epochs", "csv", "plot", "log-scale", "html", "lemma-a1"); err != nil {
		return err
	}
	if err := o.required(m, "eps-posterior"); err != nil {
		return err
	}
	if !(o.Rho2 < o.Params.Gamma1) {
		return cli.Usagef("--rho2: must be in (0, γ1) = (0, %g) (Algorithm 1 needs γ1 ∈ (ρ2, 1/2)), got %g", o.Params.Gamma1, o.Rho2)
	}
	if !(o.Rho3 < o.Rho1) {
		return cli.Usagef("--rho3: must be in (1, ρ1) = (1, %g) (eq. 9), got %g", o.Rho1, o.Rho3)
	}
	return nil
}

// checkCurvesFlags checks the flags of the curves: one way to choose c,
// at most one to choose η, and the target when solving for either.
func (o *Options) checkCurvesFlags() error {
	if err := o.unused("without --construct or --n-min", "eps-posterior", "gamma2", "rho1", "rho2", "rho3", "m-breve", "runs", "seed", "max-work"); err != nil {
		return err
	}
	if err := o.checkCAndEta(); err != nil {
		return err
	}
	if o.SolveC || o.SolveEta {
		return o.required("with --solve-c or --solve-eta", "eps-target", "at-epoch")
	}
	return o.unused("without --solve-c or --solve-eta", "eps-target", "at-epoch", "quantity")
}

// checkCAndEta requires exactly one of --c, --c-max-private and
// --solve-c, and at most one of --eta, --eta-scale and --solve-eta, which
// needs a given c.
func (o *Options) checkCAndEta() error {
	nc := 0
	for _, f := range []string{"c", "c-max-private", "solve-c"} {
		if o.Set[f] {
			nc++
		}
	}
	switch {
	case nc > 1:
		return cli.Usagef("--c, --c-max-private and --solve-c are exclusive")
	case nc == 0:
		return cli.Usagef("--c, --c-max-private or --solve-c is required")
	case o.Set["eta"] && o.Set["eta-scale"], o.Set["eta"] && o.SolveEta, o.Set["eta-scale"] && o.SolveEta:
		return cli.Usagef("--eta, --eta-scale and --solve-eta are exclusive")
	case o.SolveEta && !o.Set["c"]:
		return cli.Usagef("--solve-eta needs --c (solving for both c and η has no single answer)")
	}
	return nil
}

// parseEpochs parses FROM:TO or FROM:TO:STEP.
func parseEpochs(s string) (from, to, step int, err error) {
	bad := cli.Usagef("--epochs: must be FROM:TO or FROM:TO:STEP with integers 0 ≤ FROM ≤ TO, STEP ≥ 1, got %q", s)
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
		return 0, 0, 0, cli.Usagef("--epochs: at most %d epochs per run (each costs a few ms), got %d in %q; use FROM:TO:STEP, e.g. %d:%d:%d",
			maxEpochRows, rows, s, from, to, (to-from)/(maxEpochRows-1)+1)
	}
	return from, to, step, nil
}

// epochList expands FROM:TO:STEP.
func epochList(p Params) []int {
	var out []int
	for e := p.From; e <= p.To; e += p.Step {
		out = append(out, e)
	}
	return out
}

// Check resolves the mode, --lemma-a1 and --quantity, and refuses what
// the flags given (Set) do not allow: the flags the mode does not use or
// needs, --xl above --xh, --epochs out of range, and outputs that cannot
// be written (each writable and a regular file, at most one on stdout, no
// two on the same file).
func (o *Options) Check(e *cli.Env) error {
	o.seed = uint64(o.Seed)
	switch {
	case o.Construct && o.NMin:
		return cli.Usagef("--construct and --n-min are exclusive")
	case o.Construct:
		o.Mode = ModeConstruct
	case o.NMin:
		o.Mode = ModeNMin
	}
	var err error
	if o.Variant, err = parseLemmaA1(o.LemmaA1); err != nil {
		return err
	}
	if o.Quantity, err = closedform.ParseQuantity(o.QuantityName); err != nil {
		return cli.UsageError{Msg: "--" + err.Error()}
	}
	p := &o.Params
	p.LemmaA1 = o.Variant.String()
	if !o.Set["xl"] {
		p.XL = p.XH / 2
	}
	if p.XL > p.XH {
		return cli.Usagef("--xl: must be in (0, x_h] = (0, %g], got %g", p.XH, p.XL)
	}
	if err := o.checkModeFlags(); err != nil {
		return err
	}
	if err := o.Out.CheckPlotExt(); err != nil {
		return err
	}
	return o.Out.Check(e, nil)
}

// Run computes what the mode asks for and writes it: the table on stdout
// (unless a document goes there), and the JSON, CSV, plot and HTML asked
// for. A cancelled ctx (SIGINT, SIGTERM) ends it with an
// InterruptedError, nothing written.
func Run(ctx context.Context, e *cli.Env, o *Options) error {
	return curveModes[o.Mode].run(ctx, o, e)
}
