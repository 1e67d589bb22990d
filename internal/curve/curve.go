package curve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/pool"
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
type Params struct {
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
type SGLDBound struct {
	Source  string           `json:"source"`
	Applies bool             `json:"applies"`
	Epsilon *stats.JSONFloat `json:"epsilon,omitempty"`
	Reason  string           `json:"reason,omitempty"`
}

// curvePosterior is the posterior's ε (Lemma IV.4), constant over epochs.
type Posterior struct {
	Applies bool            `json:"applies"`
	Epsilon stats.JSONFloat `json:"epsilon,omitempty"`
	Order   float64         `json:"order,omitempty"`
	Source  string          `json:"source"`
	Reason  string          `json:"reason,omitempty"`
}

// Errs bounds, per curve, how far the exact ε can lie above the one
// reported (its numerical error).
type Errs struct {
	Chernoff  stats.JSONFloat `json:"chernoff"`
	Tail      stats.JSONFloat `json:"tail"`
	Threshold stats.JSONFloat `json:"threshold"`
	Profile   stats.JSONFloat `json:"profile"`
}

// Row is one epoch of the curves in "audit curve --json".
type Row struct {
	Epoch        int             `json:"epoch"`
	EpsChernoff  stats.JSONFloat `json:"eps_chernoff"`
	EpsTail      stats.JSONFloat `json:"eps_tail"`
	EpsThreshold stats.JSONFloat `json:"eps_threshold"`
	EpsProfile   stats.JSONFloat `json:"eps_profile"`
	Err          Errs            `json:"err"`
	ProfileExact bool            `json:"profile_exact"`
	// EpsConvergenceLB is the ε that Bertazzi et al. Prop. 3.3 / A.3 proves
	// from convergence alone (closedform.Counterexample.Transfer): the
	// posteriors' exact profile minus (1 + e^ε)·TV to them; 0 where it
	// proves nothing.
	EpsConvergenceLB stats.JSONFloat `json:"eps_convergence_lb"`
}

// curveCrossing is one step size at which --solve-eta's quantity crosses
// the target.
type Crossing struct {
	Eta    float64 `json:"eta"`
	Scale  float64 `json:"eta_scale"`
	Rising bool    `json:"rising"`
}

// curveSolve records how --solve-c or --solve-eta chose c or η.
type Solve struct {
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
	AtZero    float64    `json:"at_zero,omitempty"`
	Crossings []Crossing `json:"crossings,omitempty"`
	PeakEta   float64    `json:"peak_eta,omitempty"`
	PeakEps   float64    `json:"peak_epsilon,omitempty"`
}

// Report is the JSON document of "audit curve" (the curves and
// --construct).
type Report struct {
	Params    Params    `json:"params"`
	Posterior Posterior `json:"posterior"`
	// Solve is set with --solve-c or --solve-eta.
	Solve *Solve `json:"solve,omitempty"`
	// Construction is set with --construct.
	Construction *Construction `json:"construction,omitempty"`
	// SGLDBounds lists the theoretical upper bounds for SGLD itself on this
	// configuration, each with the assumption that fails when it does not
	// apply (at the last epoch's iteration count).
	SGLDBounds []SGLDBound `json:"sgld_upper_bounds"`
	Rows       []Row       `json:"rows"`
	Note       string      `json:"note"`
}

const curveNote = "Each eps_* is a lower bound on the epsilon of (epsilon, delta)-DP for releasing the SGLD iterate " +
	"after that many epochs, rounded down by its numerical error; err.* bounds how far the exact value can lie above it. " +
	"eps_chernoff: the paper's Fig. 1 quantity (event theta > mu_j, Chernoff bound of Lemma IV.5); eps_tail: the same event " +
	"with its exact probability; eps_threshold: the best half-line theta > t or theta < t, both directions; " +
	"eps_profile: the exact privacy profile (hockey-stick divergence between the Gaussian and the n-component mixture, " +
	"both directions; exact when profile_exact). posterior.epsilon is an upper bound for one posterior draw " +
	"(Lemma A.1 + Lemma IV.4, minimised over the Renyi order)."

// runCurves computes and writes the four curves for c and η given or
// solved for.
func runCurves(ctx context.Context, o *Options, e *cli.Env) error {
	rep, err := cli.UntilInterrupted(ctx, func() (Report, error) {
		ce, err := o.counterexample()
		if err != nil {
			return Report{}, err
		}
		return o.report(ctx, ce)
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
var errCurveInterrupted = cli.InterruptedError{Msg: "interrupted; nothing was written"}

// counterexample resolves c and η — given, or solved for — into the
// configuration whose curves are printed.
func (o *Options) counterexample() (closedform.Counterexample, error) {
	p := &o.Params
	ce := closedform.Counterexample{N: p.N, Alpha: p.Alpha, Beta: p.Beta, XH: p.XH, C: p.C}
	p.S = ce.S()
	dom := closedform.LinRegDomain{N: p.N, Alpha: p.Alpha, Beta: p.Beta, Gamma1: p.Gamma1, XH: p.XH, XL: p.XL}
	// η first: it does not depend on c, except with --solve-eta.
	if o.Set["eta"] {
		ce.Eta, p.EtaScale, p.EtaSrc = p.Eta, 0, "--eta"
	} else {
		ce.Eta = ce.EtaScaled(p.EtaScale)
		p.EtaSrc = "--eta-scale"
	}
	switch {
	case o.Set["c-max-private"]:
		c, err := dom.MaxPrivateC(o.CMaxPrivate, p.Delta, o.Variant)
		if err != nil {
			return ce, cli.Usagef("--c-max-private: %v", err)
		}
		if math.IsInf(c, 1) {
			return ce, cli.Usagef("--c-max-private: every c gives an (%g, %g)-DP posterior", o.CMaxPrivate, p.Delta)
		}
		ce.C = c
		p.CSource = fmt.Sprintf("largest c with a (%g, %g)-DP posterior (Lemma A.1 %s + Lemma IV.4)", o.CMaxPrivate, p.Delta, o.Variant)
	case o.SolveC:
		ce.C = 1 // any valid c: the solver replaces it
		if err := o.validEta(ce); err != nil {
			return ce, err
		}
		sol, err := ce.SolveC(o.Quantity, o.AtEpoch, p.Delta, o.EpsTarget)
		if err != nil {
			return ce, solveErr("--solve-c", err)
		}
		ce.C = sol.C
		p.CSource = fmt.Sprintf("solved: ε_%s at epoch %d = %g", o.Quantity, o.AtEpoch, o.EpsTarget)
		o.solved = &Solve{Unknown: "c", Quantity: o.Quantity.String(), Target: o.EpsTarget, Epoch: o.AtEpoch,
			Value: sol.C, Epsilon: stats.JSONFloat(sol.Bound.Epsilon), Unique: sol.Unique, AtZero: sol.AtZero}
	default:
		p.CSource = "--c"
	}
	if o.SolveEta {
		sol, err := ce.SolveEta(o.Quantity, o.AtEpoch, p.Delta, o.EpsTarget)
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
		p.EtaSrc = fmt.Sprintf("solved: smallest η with ε_%s at epoch %d = %g", o.Quantity, o.AtEpoch, o.EpsTarget)
		b, err := ce.QuantityAt(o.Quantity, o.AtEpoch, p.Delta)
		if err != nil {
			return ce, cli.UsageError{Msg: "--" + err.Error()}
		}
		s := &Solve{Unknown: "eta", Quantity: o.Quantity.String(), Target: o.EpsTarget, Epoch: o.AtEpoch,
			Value: first.Eta, Epsilon: stats.JSONFloat(b.Epsilon), PeakEta: sol.PeakEta, PeakEps: sol.PeakEpsilon}
		for _, x := range sol.Crossings {
			s.Crossings = append(s.Crossings, Crossing{Eta: x.Eta, Scale: x.Scale, Rising: x.Rising})
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
func (o *Options) validEta(ce closedform.Counterexample) error {
	err := ce.Validate()
	if err == nil {
		return nil
	}
	name := strings.SplitN(err.Error(), ":", 2)[0]
	if name == "eta" && !o.Set["eta"] && !o.SolveEta {
		return cli.Usagef("--eta-scale: η = %g/s² = %g is not in (0, 2/s) = (0, %g); k must be below 2s = %g",
			o.Params.EtaScale, ce.Eta, 2/o.Params.S, 2*o.Params.S)
	}
	return cli.UsageError{Msg: "--" + err.Error()}
}

// solveErr turns a solver error into a one-line usage error naming the flag.
func solveErr(flagName string, err error) error {
	msg := err.Error()
	if errors.Is(err, closedform.ErrUnreachable) {
		return cli.Usagef("%s: %s", flagName, msg)
	}
	if i := strings.Index(msg, ":"); i > 0 && !strings.Contains(msg[:i], " ") {
		return cli.UsageError{Msg: "--" + msg}
	}
	return cli.Usagef("%s: %s", flagName, msg)
}

// report computes the posterior's ε, the SGLD theorems' verdicts and
// the rows.
func (o *Options) report(ctx context.Context, ce closedform.Counterexample) (Report, error) {
	p := o.Params
	rep := Report{Params: p, Note: curveNote, Solve: o.solved}
	dom := closedform.LinRegDomain{N: p.N, Alpha: p.Alpha, Beta: p.Beta, Gamma1: p.Gamma1, XH: p.XH, XL: p.XL, C: p.C}
	g := dom.PosteriorGuarantee(o.Variant)
	rep.Posterior.Source = g.Source + " (" + g.Variant + " reading)"
	if g.Applies {
		eps, nu, err := dom.PosteriorDP(p.Delta, o.Variant)
		if err != nil {
			return rep, cli.UsageError{Msg: "--" + err.Error()}
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
		b := SGLDBound{Source: mechanisms.GuaranteeLabel(g), Applies: g.Applies, Reason: g.Reason}
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

// curveRows evaluates the four curves at each epoch, concurrently on the
// command's pool (the result does not depend on the number of workers). It stops at the next
// epoch once ctx is cancelled, returning ctx's error.
func curveRows(ctx context.Context, ce closedform.Counterexample, epochs []int, delta float64) ([]Row, error) {
	// One evaluation up front turns parameter errors (e.g. a c too large
	// for float64) into usage errors before any work is spread out.
	for _, ep := range []int{epochs[0], epochs[len(epochs)-1]} {
		if _, err := ce.Moments(ep); err != nil {
			return nil, cli.UsageError{Msg: "--" + err.Error()}
		}
	}
	rows := make([]Row, len(epochs))
	err := pool.Each(ctx, len(epochs), 0, func(_ context.Context, i int) error {
		c, err := ce.Curves(epochs[i], delta)
		if err != nil {
			return err
		}
		rows[i] = Row{
			Epoch:        c.Epoch,
			EpsChernoff:  stats.JSONFloat(c.Chernoff.Epsilon),
			EpsTail:      stats.JSONFloat(c.Tail.Epsilon),
			EpsThreshold: stats.JSONFloat(c.Threshold.Epsilon),
			EpsProfile:   stats.JSONFloat(c.Profile.Epsilon),
			Err: Errs{stats.JSONFloat(c.Chernoff.Err), stats.JSONFloat(c.Tail.Err),
				stats.JSONFloat(c.Threshold.Err), stats.JSONFloat(c.Profile.Err)},
			ProfileExact: c.ProfileExact,
		}
		tr, err := ce.Transfer(epochs[i], delta)
		if err != nil {
			return err
		}
		rows[i].EpsConvergenceLB = stats.JSONFloat(tr.NotDPEpsilon)
		return nil
	})
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if err != nil {
		// Only parameter errors are returned, e.g. a c too large for float64.
		return nil, cli.UsageError{Msg: "--" + err.Error()}
	}
	return rows, nil
}
