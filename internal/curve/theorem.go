package curve

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// curveConstruction is the "construction" object of "audit curve
// --construct --json": Theorem IV.1's construction (App. A-A) and its
// check with the exact curves.
type Construction struct {
	Epsilon      float64 `json:"epsilon"`
	EpsilonPrime float64 `json:"epsilon_prime"`
	Delta        float64 `json:"delta"`
	Gamma1       float64 `json:"gamma1"`
	Gamma2       float64 `json:"gamma2"`
	Gamma2Chosen bool    `json:"gamma2_chosen"`
	Alpha        float64 `json:"alpha"`
	Beta         float64 `json:"beta"`
	XH           float64 `json:"xh"`
	XL           float64 `json:"xl"`
	Nu1          float64 `json:"nu1"`
	V1           float64 `json:"v1"`
	// The lower bounds on n (n_2 by its five terms, eq16 the SGLD bound)
	// and their maximum n_p; +Inf where float64 overflows (log10_n_p
	// still gives the order of magnitude).
	N1      stats.JSONFloat    `json:"n_1"`
	N2      [5]stats.JSONFloat `json:"n_2_terms"`
	N3      stats.JSONFloat    `json:"n_3"`
	Eq16    stats.JSONFloat    `json:"eq16"`
	Binding string             `json:"binding"`
	Log10NP float64            `json:"log10_n_p"`
	NP      stats.JSONFloat    `json:"n_p"`
	CP      stats.JSONFloat    `json:"c_p"`
	Eta     stats.JSONFloat    `json:"eta"`
	// MinGamma2 and Log10MinNP give the γ2 minimising n_p.
	MinGamma2  float64  `json:"min_gamma2"`
	Log10MinNP float64  `json:"log10_min_n_p"`
	Readings   []string `json:"readings"`
	// Limits is not empty when no instance can be built; Check is then nil.
	Limits []string      `json:"limits,omitempty"`
	Check  *TheoremCheck `json:"check,omitempty"`
}

// curveTheoremCheck is closedform.TheoremIV1Check for JSON.
type TheoremCheck struct {
	LemmaA1             string             `json:"lemma_a1"`
	PosteriorEpsilon    float64            `json:"posterior_epsilon"`
	PosteriorOrder      float64            `json:"posterior_order"`
	PosteriorEpsilonNu1 float64            `json:"posterior_epsilon_at_nu1"`
	PosteriorHolds      bool               `json:"posterior_holds"`
	Epoch               int                `json:"epoch"`
	LemmaA9             float64            `json:"lemma_a9"`
	LemmaA9Checks       []closedform.Check `json:"lemma_a9_checks"`
	EpsChernoff         stats.JSONFloat    `json:"eps_chernoff"`
	EpsTail             stats.JSONFloat    `json:"eps_tail"`
	EpsThreshold        stats.JSONFloat    `json:"eps_threshold"`
	EpsProfile          stats.JSONFloat    `json:"eps_profile"`
	// ProofHolds: ε_chernoff > ε′ (the proof's route); ClaimHolds:
	// ε_profile > ε′ (the theorem's claim for this pair).
	ProofHolds bool `json:"proof_holds"`
	ClaimHolds bool `json:"claim_holds"`
}

// runConstruct computes Theorem IV.1's construction, checks it with the
// exact quantities and prints it with the curves of the instance.
func runConstruct(ctx context.Context, o *Options, e *cli.Env) error {
	type result struct {
		cons Construction
		body *Report // nil when no instance can be built
	}
	r, err := cli.UntilInterrupted(ctx, func() (result, error) {
		cons, body, err := o.construct(ctx)
		return result{cons, body}, err
	})
	if ctx.Err() != nil {
		return errCurveInterrupted
	}
	if err != nil {
		return err
	}
	if r.body == nil {
		// No instance: the construction is the answer; there are no curves.
		if o.Out.JSON != "-" {
			printConstruction(e.Stdout, r.cons)
		}
		return cli.Output(o.Out.JSON).WriteJSON(e, struct {
			Construction Construction `json:"construction"`
		}{r.cons})
	}
	return o.render(ctx, e, *r.body, printCurve)
}

// construct builds Theorem IV.1's construction and, when an instance can
// be built, checks it and computes the curves of the instance.
func (o *Options) construct(ctx context.Context) (Construction, *Report, error) {
	p := &o.Params
	th, err := closedform.NewTheoremIV1(closedform.TheoremIV1Params{
		Epsilon: o.EpsPosterior, EpsilonPrime: o.EpsTarget, Delta: p.Delta, Gamma1: p.Gamma1, Gamma2: o.Gamma2,
		Alpha: p.Alpha, Beta: p.Beta, XH: p.XH})
	if err != nil {
		return Construction{}, nil, constructErr(err)
	}
	cons := newCurveConstruction(th)
	if len(th.Limits) > 0 {
		for _, f := range []string{"csv", "plot", "html", "epochs"} {
			if o.Set[f] {
				return cons, nil, cli.Usagef("--%s: no curves, since no instance of the construction can be built: %s", f, th.Limits[0])
			}
		}
		return cons, nil, nil
	}
	chk, err := th.Verify(o.Variant)
	if err != nil {
		return cons, nil, cli.Usagef("--construct: %v", err)
	}
	cons.Check = &TheoremCheck{
		LemmaA1: o.Variant.String(), PosteriorEpsilon: chk.PosteriorEpsilon, PosteriorOrder: chk.PosteriorOrder,
		PosteriorEpsilonNu1: chk.PosteriorEpsilonNu1, PosteriorHolds: chk.PosteriorHolds, Epoch: chk.Epoch,
		LemmaA9: chk.LemmaA9, LemmaA9Checks: chk.LemmaA9Checks,
		EpsChernoff: stats.JSONFloat(chk.Curves.Chernoff.Epsilon), EpsTail: stats.JSONFloat(chk.Curves.Tail.Epsilon),
		EpsThreshold: stats.JSONFloat(chk.Curves.Threshold.Epsilon), EpsProfile: stats.JSONFloat(chk.Curves.Profile.Epsilon),
		ProofHolds: chk.ProofHolds, ClaimHolds: chk.ClaimHolds,
	}
	ce, _, err := th.Instance()
	if err != nil {
		return cons, nil, cli.Usagef("--construct: %v", err)
	}
	// The curves of the instance: by default from epoch 1 to twice Lemma
	// A.9's epoch.
	if !o.Set["epochs"] {
		p.From, p.To, p.Step = 1, 2*chk.Epoch, 1
	}
	p.N, p.C, p.Eta, p.EtaScale, p.XL = ce.N, ce.C, ce.Eta, 2, th.XL
	p.CSource = fmt.Sprintf("c_p = n_p^γ2, γ2 = %.6g", th.Gamma2)
	p.EtaSrc = "Theorem IV.1: η = 2/s²"
	p.S = ce.S()
	p.OneMinusLambda = ce.Eta * p.S / 2
	p.LambdaPowN = math.Exp(float64(p.N) * math.Log1p(-p.OneMinusLambda))
	body, err := o.report(ctx, ce)
	if err != nil {
		return cons, nil, err
	}
	body.Construction = &cons
	return cons, &body, nil
}

// constructErr names the flag of a construction parameter error.
func constructErr(err error) error {
	msg := err.Error()
	for from, to := range map[string]string{"epsilon-prime:": "eps-target:", "epsilon:": "eps-posterior:"} {
		if strings.HasPrefix(msg, from) {
			msg = to + strings.TrimPrefix(msg, from)
			break
		}
	}
	return cli.UsageError{Msg: "--" + msg}
}

func newCurveConstruction(th closedform.TheoremIV1) Construction {
	ex := func(l float64) stats.JSONFloat { return stats.JSONFloat(math.Exp(l)) }
	c := Construction{
		Epsilon: th.Epsilon, EpsilonPrime: th.EpsilonPrime, Delta: th.Delta, Gamma1: th.Gamma1, Gamma2: th.Gamma2,
		Gamma2Chosen: th.Gamma2Chosen, Alpha: th.Alpha, Beta: th.Beta, XH: th.XH, XL: th.XL, Nu1: th.Nu1, V1: th.V1,
		N1: ex(th.LnN1), N3: ex(th.LnN3), Eq16: ex(th.LnNSGLD), Binding: th.Binding,
		Log10NP: th.LnNP / math.Ln10, NP: stats.JSONFloat(th.NP), CP: stats.JSONFloat(th.CP), Eta: stats.JSONFloat(th.Eta),
		MinGamma2: th.MinGamma2, Log10MinNP: th.MinLnNP / math.Ln10, Readings: th.Readings, Limits: th.Limits,
	}
	for i, l := range th.LnN2 {
		c.N2[i] = ex(l)
	}
	return c
}

// magnitude10 writes 10^x readably, also beyond float64.
func magnitude10(log10 float64) string {
	if log10 < 300 {
		return fmtG(math.Pow(10, log10))
	}
	ex := math.Floor(log10)
	return fmt.Sprintf("%.4ge%+d", math.Pow(10, log10-ex), int(ex))
}

func jf(x stats.JSONFloat) string { return fmtG(float64(x)) }

// printConstruction prints the construction and its check.
func printConstruction(w io.Writer, c Construction) {
	fmt.Fprintf(w, "Theorem IV.1 (Heller & Fetaya, construction of App. A-A): one posterior draw (%g, %g)-DP, cyclic SGLD not (%g, %g)-DP\n",
		c.Epsilon, c.Delta, c.EpsilonPrime, c.Delta)
	g2 := fmt.Sprintf("γ2 = %.6g", c.Gamma2)
	if c.Gamma2Chosen {
		g2 += " (chosen to minimise n_p)"
	}
	fmt.Fprintf(w, "γ1 = %g, %s, α = %g, β = %g, x_h = %g, x_l = x_h/2 = %g; ν1 = 2 ln(1/δ)/ε + 1 = %.6g, v1 = %g\n",
		c.Gamma1, g2, c.Alpha, c.Beta, c.XH, c.XL, c.Nu1, c.V1)
	var n2 []string
	for _, x := range c.N2 {
		n2 = append(n2, jf(x))
	}
	fmt.Fprintf(w, "lower bounds on n: n_1 = %s (Lemma A.9), n_2 = max{%s} (Claim D.28), n_3 = %s (Lemma A.1 at ν1), eq. 16 = %s (ε′)\n",
		jf(c.N1), strings.Join(n2, ", "), jf(c.N3), jf(c.Eq16))
	np := magnitude10(c.Log10NP)
	if x := float64(c.NP); x <= 1<<53 {
		np = fmt.Sprintf("%.0f", x)
	}
	fmt.Fprintf(w, "n_p = %s, set by %s; c_p = n_p^γ2 = %s; η = 2/s² = %s\n", np, c.Binding, jf(c.CP), jf(c.Eta))
	if !c.Gamma2Chosen {
		fmt.Fprintf(w, "(the γ2 minimising n_p is %.6g, with n_p = %s)\n", c.MinGamma2, magnitude10(c.Log10MinNP))
	}
	fmt.Fprintln(w, "readings of the printed formulas:")
	for _, r := range c.Readings {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	if len(c.Limits) > 0 {
		fmt.Fprintln(w, "NO INSTANCE can be built, so the construction cannot be checked with the exact curves:")
		for _, l := range c.Limits {
			fmt.Fprintf(w, "  - %s\n", l)
		}
		return
	}
	k := c.Check
	if k == nil {
		return
	}
	yes := func(b bool) string {
		if b {
			return "holds"
		}
		return "FAILS"
	}
	fmt.Fprintln(w, "check with exact quantities:")
	fmt.Fprintf(w, "  posterior: ε = %.6g ≤ %g (Lemma A.1 %s + Lemma IV.4, minimised over the order, at ν = %.5g; %.6g at ν1): %s\n",
		k.PosteriorEpsilon, c.Epsilon, k.LemmaA1, k.PosteriorOrder, k.PosteriorEpsilonNu1, yes(k.PosteriorHolds))
	fmt.Fprintf(w, "  SGLD at Lemma A.9's epoch %d (⌈k̇⌉ + 1): Lemma A.9's bound %.10g; exact ε_chernoff %s, ε_tail %s, ε_threshold %s, ε_profile %s\n",
		k.Epoch, k.LemmaA9, jf(k.EpsChernoff), jf(k.EpsTail), jf(k.EpsThreshold), jf(k.EpsProfile))
	fmt.Fprintf(w, "  the theorem's claim \"not (ε′, δ)-DP\" is ε_profile > ε′ for this pair: %s; the proof's route ε_chernoff ≥ Lemma A.9 ≥ ε′: %s\n",
		yes(k.ClaimHolds), yes(k.ProofHolds))
	for _, ch := range k.LemmaA9Checks {
		if !ch.Holds {
			fmt.Fprintf(w, "  Lemma A.9's condition fails: %s (%s)\n", ch.Name, ch.Detail)
		}
	}
}

// constructionVerdict is the HTML page's one-line summary.
func constructionVerdict(c Construction) string {
	k := c.Check
	if k == nil {
		return "No instance of Theorem IV.1's construction can be built: " + strings.Join(c.Limits, "; ")
	}
	return fmt.Sprintf("Theorem IV.1's instance (n_p = %s, c_p = %s, η = 2/s²): the posterior is (%.4g, %g)-DP (≤ %g: %v); "+
		"at epoch %d the SGLD iterate is not (%s, %g)-DP by the exact profile (> ε′ = %g: %v).",
		magnitude10(c.Log10NP), jf(c.CP), k.PosteriorEpsilon, c.Delta, c.Epsilon, k.PosteriorHolds,
		k.Epoch, jf(k.EpsProfile), c.Delta, c.EpsilonPrime, k.ClaimHolds)
}

// nminReport is the JSON of "audit curve --n-min".
type NMinReport struct {
	Params struct {
		N1     int     `json:"n1"`
		Eps    float64 `json:"epsilon"`
		Delta  float64 `json:"delta"`
		XL     float64 `json:"xl"`
		XH     float64 `json:"xh"`
		Alpha  float64 `json:"alpha"`
		Beta   float64 `json:"beta"`
		Gamma1 float64 `json:"gamma1"`
		Rho1   float64 `json:"rho1"`
		Rho2   float64 `json:"rho2"`
		Rho3   float64 `json:"rho3"`
		MBreve float64 `json:"m_breve"`
		Runs   int     `json:"runs"`
		Seed   uint64  `json:"seed"`
	} `json:"params"`
	NMin struct {
		Nu     float64            `json:"nu"`
		B1     [7]stats.JSONFloat `json:"n_b1_terms"`
		B2     [2]float64         `json:"n_b2_terms"`
		N1Term stats.JSONFloat    `json:"n1_term"`
		Value  stats.JSONFloat    `json:"value"`
	} `json:"n_min"`
	Datasets []NMinRuns `json:"datasets"`
	Note     string     `json:"note"`
}

// nminRuns counts where the runs of Algorithm 1 on one dataset ended.
type NMinRuns struct {
	Name   string  `json:"name"`
	Slope  float64 `json:"slope"`
	Line14 int     `json:"null_line14"`
	// Line23Empty counts the runs stopped at line 23 with W empty (m̆ far
	// from every slope), Line23 the others.
	Line23Empty int `json:"null_line23_w_empty"`
	Line23      int `json:"null_line23"`
	// EmptyW25 counts the runs that passed line 22 with W empty (null).
	EmptyW25 int `json:"null_line25_w_empty"`
	Released int `json:"released"`
	// MeanNMin is the mean of n_min over the runs that reached line 22.
	MeanNMin float64 `json:"mean_n_min,omitempty"`
}

const nminNote = "n_min is eq. 33 at m-breve; the runs use each run's own noisy slope. Algorithm 1 is (5 epsilon, 2 delta)-DP (Claim IV.8). " +
	"D3 = n1 records (x_h, n1^rho3 x_h), D4 replaces one by (x_h/2, n1^rho3 x_h/2) (eq. 9). " +
	"Readings of the paper are listed in docs/derivations/interim-region.md."

// nminRunWork is the work of one run of Algorithm 1 on a dataset of one
// or two weighted points, in the units of docs/derivations/work-limits.md
// (a few ns each): 1.2 to 1.5 µs of CPU was measured per run (audit curve
// --n-min --eps-posterior 1 --runs 1000000: 2.7 s of CPU for its 2·10⁶
// runs; BenchmarkNMinRuns: 1.5 s of CPU for 10⁶), dominated by the powers
// and logarithms of eq. 33 and the Laplace and normal draws. At 4 to 5 ns
// per unit, 300.
const nminRunWork = 300

// curveDefaultMaxWork is the work limit of "audit curve --n-min" without
// --max-work: about 10 s of CPU at 4 ns per unit, the budget the epoch
// limit (maxEpochRows) gives the curves.
const DefaultMaxWork = 2.5e9

// nminWork is the estimated work of runs runs of Algorithm 1 on each of
// the two datasets.
func nminWork(runs int) float64 { return 2 * float64(runs) * nminRunWork }

// checkNMinWork refuses, before any run, runs whose estimated work exceeds
// maxWork (0: curveDefaultMaxWork), naming --max-work and the limit.
func checkNMinWork(runs int, maxWork float64) error {
	if maxWork == 0 {
		maxWork = DefaultMaxWork
	}
	if w := nminWork(runs); w > maxWork {
		return cli.Usagef("--max-work: 2 × %d runs of Algorithm 1 × %d units is estimated at %.3g work units, beyond the limit of %.3g "+
			"(a unit takes a few nanoseconds; raise --max-work to run it on purpose, or give fewer --runs)", runs, nminRunWork, w, maxWork)
	}
	return nil
}

// nminDataset is one of eq. 9's datasets.
type nminDataset struct {
	name string
	d    []closedform.WeightedPoint
}

// simulateNMin runs Algorithm 1 runs times on each dataset, dataset k from
// the stream (seed, k), and counts where the runs ended. It checks ctx
// every nminCheckEvery runs and returns its error once cancelled.
func simulateNMin(ctx context.Context, a closedform.ProposeTestSample, sets []nminDataset, slope float64, runs int, seed uint64) ([]NMinRuns, error) {
	var out []NMinRuns
	for k, s := range sets {
		// One stream per dataset, so that either's counts do not depend on
		// the other's.
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		res := NMinRuns{Name: s.name, Slope: slope}
		var sumNMin float64
		reached := 0
		for i := range runs {
			if i%nminCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			run, err := a.Run(s.d, rng)
			if err != nil {
				return nil, cli.UsageError{Msg: "--" + err.Error()}
			}
			switch {
			case run.Line == 14:
				res.Line14++
			case run.Line == 23 && run.SizeW == 0:
				res.Line23Empty++
			case run.Line == 23:
				res.Line23++
			case !run.Released:
				res.EmptyW25++
			default:
				res.Released++
			}
			if run.Line >= 23 {
				sumNMin += run.NMin.Value
				reached++
			}
		}
		if reached > 0 {
			res.MeanNMin = sumNMin / float64(reached)
		}
		out = append(out, res)
	}
	return out, nil
}

// nminCheckEvery is how many runs of Algorithm 1 pass between two looks at
// the context: about a millisecond.
const nminCheckEvery = 1024

// runNMin evaluates eq. 33 and runs Algorithm 1 on eq. 9's datasets.
func runNMin(ctx context.Context, o *Options, e *cli.Env) error {
	p := o.Params
	a := closedform.ProposeTestSample{Epsilon: o.EpsPosterior, Delta: p.Delta, XL: p.XL, XH: p.XH, Alpha: p.Alpha, Beta: p.Beta,
		Rho1: o.Rho1, Rho2: o.Rho2, Gamma1: p.Gamma1, N1: float64(p.N)}
	if err := a.Validate(); err != nil {
		name, rest, _ := strings.Cut(err.Error(), ":")
		switch name {
		case "epsilon":
			name = "eps-posterior"
		case "n1":
			name = "n"
		}
		return cli.UsageError{Msg: "--" + name + ":" + rest}
	}
	if err := checkNMinWork(o.Runs, o.MaxWork); err != nil {
		return err
	}
	slope := math.Pow(float64(p.N), o.Rho3)
	m := slope
	if o.Set["m-breve"] {
		m = o.MBreve
	}
	nm, err := a.NMin(m)
	if err != nil {
		return cli.UsageError{Msg: "--" + err.Error()}
	}
	var r NMinReport
	r.Params.N1, r.Params.Eps, r.Params.Delta, r.Params.XL, r.Params.XH = p.N, o.EpsPosterior, p.Delta, p.XL, p.XH
	r.Params.Alpha, r.Params.Beta, r.Params.Gamma1 = p.Alpha, p.Beta, p.Gamma1
	r.Params.Rho1, r.Params.Rho2, r.Params.Rho3, r.Params.MBreve = o.Rho1, o.Rho2, o.Rho3, m
	r.Params.Runs, r.Params.Seed = o.Runs, o.seed
	r.NMin.Nu, r.NMin.B2, r.NMin.N1Term, r.NMin.Value = nm.Nu, nm.B2, stats.JSONFloat(nm.N1Term), stats.JSONFloat(nm.Value)
	for i, x := range nm.B1 {
		r.NMin.B1[i] = stats.JSONFloat(x)
	}
	r.Note = nminNote
	n := float64(p.N)
	sets := []nminDataset{
		{"D3", []closedform.WeightedPoint{{X: p.XH, Y: slope * p.XH, Count: n}}},
		{"D4", []closedform.WeightedPoint{{X: p.XH, Y: slope * p.XH, Count: n - 1}, {X: p.XH / 2, Y: slope * p.XH / 2, Count: 1}}},
	}
	r.Datasets, err = simulateNMin(ctx, a, sets, slope, o.Runs, o.seed)
	if ctx.Err() != nil {
		return errCurveInterrupted
	}
	if err != nil {
		return err
	}
	if o.Out.JSON != "-" {
		printNMin(e.Stdout, r)
	}
	return cli.Output(o.Out.JSON).WriteJSON(e, r)
}

func printNMin(w io.Writer, r NMinReport) {
	p := r.Params
	fmt.Fprintf(w, "Algorithm 1 (Heller & Fetaya §IV-C, propose–test–sample): ε = %g, δ = %g, x_l = %g, x_h = %g, α = %g, β = %g, γ1 = %g, ρ1 = %g, ρ2 = %g, n_1 = %d\n",
		p.Eps, p.Delta, p.XL, p.XH, p.Alpha, p.Beta, p.Gamma1, p.Rho1, p.Rho2, p.N1)
	fmt.Fprintf(w, "n_min of eq. 33 at m̆ = %s (ν = 2 ln(1/δ)/ε + 1 = %.6g):\n", fmtG(p.MBreve), r.NMin.Nu)
	var b1 []string
	for _, x := range r.NMin.B1 {
		b1 = append(b1, jf(x))
	}
	fmt.Fprintf(w, "  n_b1 = max{%s}\n", strings.Join(b1, ", "))
	fmt.Fprintf(w, "  n_b2 = max{%s, %s}\n", fmtG(r.NMin.B2[0]), fmtG(r.NMin.B2[1]))
	fmt.Fprintf(w, "  n_1^(ρ2/γ1) = %s\n", jf(r.NMin.N1Term))
	fmt.Fprintf(w, "  n_min = %s\n", jf(r.NMin.Value))
	if float64(r.NMin.Value) > float64(p.N1) {
		fmt.Fprintf(w, "  n_min > n_1: line 22 stops every run (up to the Laplace noise on |W|); a larger n_1 or γ1 further from 1/2 is needed\n")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%d runs on each of eq. 9's datasets (slope n_1^ρ3 = %s, ρ3 = %g; seed %d):\n", p.Runs, fmtG(r.Datasets[0].Slope), p.Rho3, p.Seed)
	t := cli.NewTable(w, "dataset", "null: line 14", "null: line 23, W empty", "null: line 23", "null: line 25, W empty", "released", "mean n_min")
	for _, d := range r.Datasets {
		mn := "–"
		if d.MeanNMin > 0 {
			mn = fmtG(d.MeanNMin)
		}
		t.Append(d.Name, fmt.Sprint(d.Line14), fmt.Sprint(d.Line23Empty), fmt.Sprint(d.Line23), fmt.Sprint(d.EmptyW25), fmt.Sprint(d.Released), mn)
	}
	t.Render()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "line 14: n_2 ≤ 1 (too few records under the slope cap); line 23: n_W < n_min — W is empty when the noisy slope m̆ lands")
	fmt.Fprintln(w, "farther than n_2^ρ2 from the data's slope; line 25 with W empty returns null, as the proof of Claim IV.9 assumes.")
	fmt.Fprintln(w, "Algorithm 1 is (5ε, 2δ)-DP (Claim IV.8); with line 25 replaced by SGLD at η = 1/(α + n_1 x_h² β)², Claim IV.9 shows it is not DP at some step.")
	fmt.Fprintln(w, "eq. 33 depends on the data only through the noisy slope m̆ of line 18: it is shown at --m-breve (default n_1^ρ3), and each run uses its own.")
}
