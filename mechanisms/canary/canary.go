package canary

import (
	"errors"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/floats"
)

// The canary construction of Heller & Fetaya §V, adapted:
// train M models on D, pick a record (x⁰, y⁰) on which they all agree
// (AgreedRecords), move x⁰ by a minimal perturbation to an x* that every
// model misclassifies (CraftCanary, after DeepFool: Moosavi-Dezfooli, Fawzi
// & Frossard, CVPR 2016), and audit D against D′ = D with (x⁰, y⁰)
// replaced by (x*, y⁰), with the features p(y*|x*,θ), p(y⁰|x*,θ),
// p(y*|x⁰,θ), p(y⁰|x⁰,θ) of each released θ (CraftedCanary.Features).

// DefaultCanaryMargin is the logit margin κ CraftCanary uses when
// CanaryOptions.Margin is 0: every model must rank y* above every other
// class by at least κ, i.e. p(y*|x*,θ)/p(j|x*,θ) ≥ e^κ.
const DefaultMargin = 1e-3

// DefaultCanaryMaxIter is the number of linearisations CraftCanary allows
// a nonlinear classifier when CanaryOptions.MaxIter is 0.
const DefaultMaxIter = 200

// CanaryOptions configures CraftCanary.
type Options struct {
	// Margin is the logit margin κ ≥ 0 by which every model must prefer
	// y* to every other class at x*; 0 means DefaultCanaryMargin. It plays
	// the part of DeepFool's overshoot: κ > 0 puts x* strictly inside the
	// region every model assigns to y*, not on its boundary.
	Margin float64 `yaml:"margin,omitempty" json:"margin,omitempty"`
	// Clamp keeps every feature of x* in [Lower, Upper] (e.g. [0, 1] for
	// the digits divided by 16), as a constraint of the minimisation, not
	// by clipping afterwards.
	Clamp bool `yaml:"clamp,omitempty" json:"clamp,omitempty"`
	// Lower and Upper are the feature bounds used with Clamp.
	Lower float64 `yaml:"lower,omitempty" json:"lower,omitempty"`
	Upper float64 `yaml:"upper,omitempty" json:"upper,omitempty"`
	// Targets lists the candidate classes y*; empty means every class
	// other than y⁰. The closest feasible target wins.
	Targets []int `yaml:"targets,omitempty" json:"targets,omitempty"`
	// MaxIter bounds the linearise-and-solve iterations for classifiers
	// whose logits are not affine in x (the MLP); 0 means
	// DefaultCanaryMaxIter. Affine classifiers need exactly one.
	MaxIter int `yaml:"max_iter,omitempty" json:"max_iter,omitempty"`
}

func (o Options) check(k, y0 int) error {
	if !(o.Margin >= 0) || math.IsInf(o.Margin, 0) {
		return fmt.Errorf("margin: must be finite and ≥ 0 (0 = %g), got %g", DefaultMargin, o.Margin)
	}
	if o.Clamp {
		if math.IsNaN(o.Lower) || math.IsInf(o.Lower, 0) {
			return fmt.Errorf("lower: must be finite, got %g", o.Lower)
		}
		if !(o.Upper > o.Lower) || math.IsInf(o.Upper, 0) {
			return fmt.Errorf("upper: must be finite and > lower = %g, got %g", o.Lower, o.Upper)
		}
	}
	if o.MaxIter < 0 || o.MaxIter > 10000 {
		return fmt.Errorf("max_iter: must be in [0, 10000] (0 = %d), got %d", DefaultMaxIter, o.MaxIter)
	}
	for _, t := range o.Targets {
		if t < 0 || t >= k || t == y0 {
			return fmt.Errorf("targets: class %d must be in [0, %d) and differ from the record's label %d", t, k, y0)
		}
	}
	return nil
}

// CraftedCanary is the outcome of CraftCanary: the record (x⁰, y⁰) of D at
// Index and the crafted features x*, which every model classifies as
// YStar ≠ y⁰.
type Canary struct {
	// Index is the position of (x⁰, y⁰) in D.
	Index int `json:"index"`
	// X0 and Y0 are the record's features x⁰ and label y⁰ (a copy).
	X0 []float64 `json:"x0"`
	Y0 int       `json:"y0"`
	// XStar is the crafted x*.
	XStar []float64 `json:"x_star"`
	// YStar is the class every model assigns to XStar.
	YStar int `json:"y_star"`
	// Norm is ‖x* − x⁰‖₂.
	Norm float64 `json:"norm"`
	// MinMargin is min over models of f_{y*}(x*) − max_{j≠y*} f_j(x*),
	// the logit margin actually achieved: κ up to rounding for affine
	// classifiers, at least κ/2 (κ at convergence) for the MLP.
	MinMargin float64 `json:"min_margin"`
	// Iterations is the number of linearisations used for YStar.
	Iterations int `json:"iterations"`
	// Converged reports that the search for YStar reached a fixed point:
	// for the MLP a KKT point of the true problem; for affine classifiers
	// that the least-distance solution passed its KKT check. When false,
	// x* is valid but may not be (locally) minimal.
	Converged bool `json:"converged"`
	// Exact reports that x* is the exact minimum-norm point (to rounding,
	// certified by checking the KKT conditions at run time) of the set where
	// every model prefers some y* ≠ y⁰ by the margin (and, with Clamp,
	// inside the box): true for classifiers affine in x. For the MLP, x*
	// is a local solution found by linearising.
	Exact bool `json:"exact"`
}

// Record returns the canary record (x*, y⁰): Heller & Fetaya keep the
// label of the record they replace.
func (c Canary) Record() dataset.Record {
	return dataset.Record{X: append([]float64(nil), c.XStar...), Y: float64(c.Y0)}
}

// Pair returns D and D′ = D with record Index replaced by (x*, y⁰).
func (c Canary) Pair(d *dataset.Dataset) (dataset.Pair, error) {
	p, err := dataset.Canary(d, c.Index, c.Record())
	if err != nil {
		return dataset.Pair{}, err
	}
	p.Note = fmt.Sprintf("record %d (label %d) replaced by its DeepFool canary: features moved by %.4g, classified as %d by every model", c.Index, c.Y0, c.Norm, c.YStar)
	return p, nil
}

// Features writes the four attack features of Heller & Fetaya §V for the
// released parameters θ into out (allocated when shorter than 4) and
// returns it: p(y*|x*,θ), p(y⁰|x*,θ), p(y*|x⁰,θ), p(y⁰|x⁰,θ).
func (c Canary) Features(m mechanisms.Classifier, theta, out []float64) []float64 {
	out = c.LogFeatures(m, theta, out)
	for i := range out {
		out[i] = math.Exp(out[i])
	}
	return out
}

// LogFeatures is Features on the log scale (ln p), which keeps its
// resolution where the probabilities are within rounding of 0 or 1.
func (c Canary) LogFeatures(m mechanisms.Classifier, theta, out []float64) []float64 {
	if cap(out) < 4 {
		out = make([]float64, 4)
	}
	out = out[:4]
	out[0] = mechanisms.ClassLogProb(m, theta, c.XStar, c.YStar)
	out[1] = mechanisms.ClassLogProb(m, theta, c.XStar, c.Y0)
	out[2] = mechanisms.ClassLogProb(m, theta, c.X0, c.YStar)
	out[3] = mechanisms.ClassLogProb(m, theta, c.X0, c.Y0)
	return out
}

// checkThetas validates an ensemble of parameter vectors for c.
func checkThetas(c mechanisms.Classifier, thetas [][]float64) error {
	if len(thetas) == 0 {
		return fmt.Errorf("models: need at least 1 parameter vector, got 0")
	}
	for i, th := range thetas {
		if len(th) != c.Dim() {
			return fmt.Errorf("models[%d]: must have %d parameters (%s), got %d", i, c.Dim(), c.Name(), len(th))
		}
		for _, v := range th {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("models[%d]: parameters must be finite", i)
			}
		}
	}
	return nil
}

// AgreedRecords returns the indices of the records of d that every model
// θ₁…θ_M assigns to the same class (the most probable one), and, if
// correct is set, to the record's own label: the candidates for (x⁰, y⁰)
// in Heller & Fetaya §V.
func AgreedRecords(c mechanisms.Classifier, thetas [][]float64, d *dataset.Dataset, correct bool) ([]int, error) {
	if err := checkThetas(c, thetas); err != nil {
		return nil, err
	}
	if err := d.Validate(c.DataDim()); err != nil {
		return nil, err
	}
	var out []int
	for i, r := range d.Records {
		cls := mechanisms.PredictClass(c, thetas[0], r.X)
		ok := !correct || float64(cls) == r.Y
		for _, th := range thetas[1:] {
			if !ok {
				break
			}
			ok = mechanisms.PredictClass(c, th, r.X) == cls
		}
		if ok {
			out = append(out, i)
		}
	}
	return out, nil
}

// LinearDeepFool is DeepFool's closed form for one affine classifier
// (Moosavi-Dezfooli, Fawzi & Frossard, CVPR 2016, the subsection on affine
// multiclass classifiers; its equation numbers were not checked here):
// with g_k = f_k(x) − f_{y⁰}(x) and w′_k = w_k − w_{y⁰}, the nearest point
// where some class k ≠ y⁰ ties with y⁰ is at distance
//
//	dist = min_{k≠y⁰} |g_k| / ‖w′_k‖,  reached by r = (|g_k|/‖w′_k‖²)·w′_k
//
// for the minimising k. For x classified as y⁰ the region of y⁰ is the
// polyhedron {g_k ≤ 0 ∀k}, whose distance to its complement is this
// minimum, so r is the exact minimal perturbation (x + r lies on the
// boundary; any overshoot crosses it). Classes with w′_k = 0 cannot be
// reached by moving x and are skipped; k = −1 and dist = +Inf when none
// can.
func LinearDeepFool(m mechanisms.Softmax, theta, x []float64, y0 int) (r []float64, k int, dist float64) {
	kk, d := m.Classes, m.Features
	f := make([]float64, kk)
	m.Logits(theta, x, f)
	k, dist = -1, math.Inf(1)
	w0 := theta[y0*d : (y0+1)*d]
	wd := make([]float64, d)
	for c := 0; c < kk; c++ {
		if c == y0 {
			continue
		}
		var n2 float64
		for j, w := range theta[c*d : (c+1)*d] {
			e := w - w0[j]
			n2 += e * e
		}
		if n2 == 0 {
			continue
		}
		if dc := math.Abs(f[c]-f[y0]) / math.Sqrt(n2); dc < dist {
			k, dist = c, dc
		}
	}
	r = make([]float64, d)
	if k < 0 {
		return r, k, dist
	}
	var n2 float64
	for j := range wd {
		wd[j] = theta[k*d+j] - w0[j]
		n2 += wd[j] * wd[j]
	}
	s := math.Abs(f[k]-f[y0]) / n2
	for j := range r {
		r[j] = s * wd[j]
	}
	return r, k, dist
}

// affineLogits is implemented by classifiers whose logits are affine in x,
// for which one linearisation is exact.
type affineLogits interface{ LogitsAffineInX() bool }

// CraftCanary turns record index of d into a canary that every model
// θ₁…θ_M misclassifies, by the smallest change of its features it can
// find. The record must be classified as its own label y⁰ by every model
// (pick it from AgreedRecords with correct = true).
//
// For each candidate class y*, the set where every model prefers y* to
// every other class by the margin κ,
//
//	C(y*) = {x : f^m_{y*}(x) − f^m_j(x) ≥ κ for all models m and classes j ≠ y*},
//
// is an intersection of half-spaces when the logits are affine in x
// (Softmax). The nearest point of C(y*) to x⁰ (optionally also within the
// box [Lower, Upper]) is then a least-distance problem, solved exactly by
// numeric.LeastDistance; the best y* is the one with the nearest set. With
// one model and κ → 0 this is DeepFool's closed form (LinearDeepFool); with
// several it replaces DeepFool's overshoot-until-every-model-flips by the
// exact minimum over the ensemble.
//
// For nonlinear classifiers (MLP) the constraints are linearised and the
// same least-distance problem is solved repeatedly: first DeepFool's
// iteration applied to the whole ensemble (step from the current point to
// the nearest point of the linearised set, with margin 1.5κ as overshoot,
// until every model's margin is ≥ κ), then a refinement that re-solves for
// the nearest point to x⁰ and moves towards it while every margin stays
// ≥ κ/2 and the distance shrinks, until a fixed point (a KKT point of the
// true problem) or MaxIter linearisations. The result is a local solution:
// valid, but not certified to be the global minimum.
func Craft(c mechanisms.Classifier, thetas [][]float64, d *dataset.Dataset, index int, opts Options) (Canary, error) {
	rec, y0, err := craftRecord(c, thetas, d, index, opts)
	if err != nil {
		return Canary{}, err
	}
	targets := craftTargets(opts.Targets, c.NumClasses(), y0)
	cr := newCrafter(c, thetas, rec.X, opts)
	affine := cr.affine
	best := Canary{Norm: math.Inf(1)}
	for _, t := range targets {
		x, margin, iters, converged, found, err := cr.target(t)
		if err != nil {
			return Canary{}, err
		}
		if !found {
			continue
		}
		var n2 float64
		for j := range x {
			e := x[j] - rec.X[j]
			n2 += e * e
		}
		if n := math.Sqrt(n2); n < best.Norm {
			best = Canary{Index: index, X0: append([]float64(nil), rec.X...), Y0: y0,
				XStar: x, YStar: t, Norm: n, MinMargin: margin, Iterations: iters,
				Converged: converged, Exact: affine && converged}
		}
	}
	if math.IsInf(best.Norm, 1) {
		return Canary{}, fmt.Errorf("index: no canary found for record %d: for every target class the constraints are infeasible or %d linearisations did not reach a point that all %d models misclassify (try a larger max_iter, no clamp, a smaller margin or fewer models)", index, cr.opts.MaxIter, len(thetas))
	}
	return best, nil
}

// craftRecord checks Craft's inputs and returns the record to turn into a
// canary and its class y⁰: the models fit the classifier, the dataset its
// data dimension, index is a record, whose label is a class, the options
// are valid, and every model classifies the record as its label.
func craftRecord(c mechanisms.Classifier, thetas [][]float64, d *dataset.Dataset, index int, opts Options) (dataset.Record, int, error) {
	if err := checkThetas(c, thetas); err != nil {
		return dataset.Record{}, 0, err
	}
	if err := d.Validate(c.DataDim()); err != nil {
		return dataset.Record{}, 0, err
	}
	if index < 0 || index >= d.Len() {
		return dataset.Record{}, 0, fmt.Errorf("index: must be in [0, %d], got %d", d.Len()-1, index)
	}
	k := c.NumClasses()
	rec := d.Records[index]
	y0, ok := dataset.ClassIndex(rec.Y, k)
	if !ok {
		return dataset.Record{}, 0, fmt.Errorf("index: record %d label must be a class index in [0, %d), got %g", index, k, rec.Y)
	}
	if err := opts.check(k, y0); err != nil {
		return dataset.Record{}, 0, err
	}
	logits := make([]float64, k)
	for m, th := range thetas {
		c.Logits(th, rec.X, logits)
		if mg := classMargin(logits, y0); !(mg > 0) {
			return dataset.Record{}, 0, fmt.Errorf("index: record %d is not classified as its label %d by model %d (margin %.3g); choose one from AgreedRecords with correct = true", index, y0, m, mg)
		}
	}
	return rec, y0, nil
}

// craftTargets returns the candidate classes y* of Craft: those asked for,
// or every class of the k but the record's own y⁰.
func craftTargets(targets []int, k, y0 int) []int {
	if len(targets) > 0 {
		return targets
	}
	for t := 0; t < k; t++ {
		if t != y0 {
			targets = append(targets, t)
		}
	}
	return targets
}

// newCrafter returns the crafter of one Craft call from record features
// x0, with the options' defaults filled in (DefaultMargin, DefaultMaxIter)
// and a single linearisation when the logits are affine in x (then exact).
func newCrafter(c mechanisms.Classifier, thetas [][]float64, x0 []float64, opts Options) crafter {
	al, affine := c.(affineLogits)
	affine = affine && al.LogitsAffineInX()
	cr := crafter{c: c, thetas: thetas, x0: x0, opts: opts, affine: affine}
	if cr.opts.Margin == 0 {
		cr.opts.Margin = DefaultMargin
	}
	if cr.opts.MaxIter == 0 {
		cr.opts.MaxIter = DefaultMaxIter
	}
	if affine {
		cr.opts.MaxIter = 1
	}
	return cr
}

// classMargin returns f_t − max_{j≠t} f_j.
func classMargin(f []float64, t int) float64 {
	other := math.Inf(-1)
	for j, v := range f {
		if j != t {
			other = math.Max(other, v)
		}
	}
	return f[t] - other
}

// crafter holds one CraftCanary call's inputs.
type crafter struct {
	c      mechanisms.Classifier
	thetas [][]float64
	x0     []float64
	opts   Options
	affine bool

	rows        [][]float64
	rhs         []float64
	logits, jac []float64
	lastKKT     bool // the last solve's KKT certificate held
}

// minMargin returns the smallest margin of class t over the models at x.
func (cr *crafter) minMargin(x []float64, t int) float64 {
	f := make([]float64, cr.c.NumClasses())
	mg := math.Inf(1)
	for _, th := range cr.thetas {
		cr.c.Logits(th, x, f)
		mg = math.Min(mg, classMargin(f, t))
	}
	return mg
}

// solve linearises every model's margins of class t at x and returns the
// least-norm v with, for every model and class j ≠ t,
//
//	(J_t − J_j)(x)·(v − vc) ≥ margin − (f_t − f_j)(x),
//
// and, with Clamp and box set, Lower ≤ base + v ≤ Upper: the nearest point
// to base of the linearised canary set, as an offset from base (vc is
// x − base). It returns ok = false when the linearised constraints are
// infeasible.
func (cr *crafter) solve(x, base, vc []float64, t int, margin float64, box bool) (v []float64, ok bool, err error) {
	c := cr.c
	k, dd := c.NumClasses(), c.DataDim()
	if cr.rows == nil {
		n := len(cr.thetas) * (k - 1)
		if cr.opts.Clamp {
			n += 2 * dd
		}
		cr.rows = make([][]float64, n)
		for i := range cr.rows {
			cr.rows[i] = make([]float64, dd)
		}
		cr.rhs = make([]float64, n)
		cr.logits, cr.jac = make([]float64, k), make([]float64, k*dd)
	}
	i := 0
	for _, th := range cr.thetas {
		c.LogitsJacobian(th, x, cr.logits, cr.jac)
		jt := cr.jac[t*dd : (t+1)*dd]
		for j := 0; j < k; j++ {
			if j == t {
				continue
			}
			row := cr.rows[i]
			jj := cr.jac[j*dd : (j+1)*dd]
			var rv float64
			for q := range row {
				row[q] = jt[q] - jj[q]
				rv += row[q] * vc[q]
			}
			cr.rhs[i] = margin - (cr.logits[t] - cr.logits[j]) + rv
			i++
		}
	}
	if cr.opts.Clamp && box {
		for q := 0; q < dd; q++ {
			lo, hi := cr.rows[i], cr.rows[i+1]
			for p := range lo {
				lo[p], hi[p] = 0, 0
			}
			lo[q], hi[q] = 1, -1
			cr.rhs[i], cr.rhs[i+1] = cr.opts.Lower-base[q], base[q]-cr.opts.Upper
			i += 2
		}
	}
	v, lam, err := numeric.LeastDistance(cr.rows[:i], cr.rhs[:i])
	if errors.Is(err, numeric.ErrInfeasible) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("crafting class %d: %w", t, err)
	}
	cr.lastKKT = kktHolds(cr.rows[:i], cr.rhs[:i], v, lam)
	return v, true, nil
}

// kktHolds checks the Kuhn–Tucker conditions of min ‖v‖ s.t. G v ≥ h at
// (v, λ): feasibility, λ ≥ 0, v = Gᵀλ, λ_i = 0 on slack rows, each to
// 1e-9 relative to the scale of the problem. They certify that v is the
// global minimum (the problem is convex) independently of the solver.
func kktHolds(g [][]float64, h, v, lam []float64) bool {
	tol := 1e-9 * (1 + math.Sqrt(floats.Dot(v, v)))
	gl := make([]float64, len(v))
	for i, row := range g {
		rn := math.Sqrt(floats.Dot(row, row))
		slack := floats.Dot(row, v) - h[i]
		if slack < -tol*rn || lam[i] < 0 || lam[i]*rn*slack > tol {
			return false
		}
		for q, w := range row {
			gl[q] += lam[i] * w
		}
	}
	return euclidDist(gl, v) <= tol
}

// deepFoolStep returns the least-norm step from x to the linearised canary
// set of class t, inside the box when that is feasible; when the box makes
// the linearised problem infeasible (the linear extrapolation of a
// saturated network can be far too pessimistic) it returns the step
// without the box, which the caller clamps (DeepFool with clipping).
func (cr *crafter) deepFoolStep(x []float64, t int, margin float64) ([]float64, bool, error) {
	zero := make([]float64, len(x))
	r, ok, err := cr.solve(x, x, zero, t, margin, true)
	if err != nil || ok || !cr.opts.Clamp {
		return r, ok, err
	}
	return cr.solve(x, x, zero, t, margin, false)
}

// clampTo adds v to base into x, removing rounding outside the box.
func (cr *crafter) clampTo(x, base, v []float64) {
	for q := range x {
		x[q] = base[q] + v[q]
		if cr.opts.Clamp {
			x[q] = math.Min(math.Max(x[q], cr.opts.Lower), cr.opts.Upper)
		}
	}
}

func euclidDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		e := a[i] - b[i]
		s += e * e
	}
	return math.Sqrt(s)
}

// target searches the nearest x that every model assigns to class t.
// It returns that x, its minimum margin, the linearisations used, whether
// the search converged, and whether a valid x was found at all.
//
// Affine classifiers: one least-distance problem from x⁰, exact.
//
// Otherwise two phases. Phase 1 is DeepFool for the ensemble: from the
// current x, step to the nearest point of the linearised canary set with
// margin 1.5κ (DeepFool's overshoot), within a trust region, until every
// model's true margin is at least κ. Phase 2 shrinks the perturbation:
// linearise at the current valid x, solve for the nearest point to x⁰ of
// the linearised set (margin κ), and move towards it by the longest step
// of 1, ½, ¼, … (down to 2⁻²⁰) that, after up to two DeepFool steps that
// restore the margins the curvature took away, keeps every true margin
// ≥ κ/2 and brings x nearer to x⁰. It stops when the solution no longer
// moves (‖Δu‖ ≤ 1e-6(1 + ‖u‖): converged, x is then a KKT point of the true
// problem to that tolerance), when no step helps, or after MaxIter
// linearisations in all. With Clamp, a linearised problem that the box
// makes infeasible is solved without the box and its step clamped.
func (cr *crafter) target(t int) (x []float64, margin float64, iters int, converged, found bool, err error) {
	kappa := cr.opts.Margin
	x = append([]float64(nil), cr.x0...)
	if cr.affine {
		zero := make([]float64, cr.c.DataDim())
		v, ok, err := cr.solve(x, cr.x0, zero, t, kappa, true)
		if err != nil || !ok {
			return nil, 0, 1, false, false, err
		}
		cr.clampTo(x, cr.x0, v)
		mg := cr.minMargin(x, t)
		return x, mg, 1, cr.lastKKT, mg > 0, nil
	}
	margin, iters, ok, err := cr.reachMargin(x, t)
	if err != nil || !ok {
		return nil, 0, iters, false, false, err
	}
	margin, iters, converged, err = cr.shrink(x, t, margin, iters)
	if err != nil {
		return nil, 0, iters, false, false, err
	}
	return x, margin, iters, converged, true, nil
}

// reachMargin is phase 1 of target: DeepFool steps from x (updated in
// place) until every model's true margin for class t is at least κ. It
// returns that margin and the linearisations used; ok is false when it
// gave up (MaxIter, or a trust region shrunk to nothing).
//
// The trust region: the linearisation of a saturated network can put the
// linearised boundary absurdly far away, so a step is cut to length Δ,
// accepted only if it raises the smallest true margin, and Δ adapts
// (doubled after a step that achieved at least half the predicted gain,
// quartered after a rejected one).
func (cr *crafter) reachMargin(x []float64, t int) (margin float64, iters int, ok bool, err error) {
	kappa := cr.opts.Margin
	radius := 0.25 * math.Max(1, math.Sqrt(floats.Dot(cr.x0, cr.x0)))
	margin = cr.minMargin(x, t)
	try := make([]float64, len(x))
	for margin < kappa {
		if iters == cr.opts.MaxIter {
			return 0, iters, false, nil
		}
		iters++
		r, ok, err := cr.deepFoolStep(x, t, 1.5*kappa)
		if err != nil || !ok {
			return 0, iters, false, err
		}
		scale := 1.0
		if nr := math.Sqrt(floats.Dot(r, r)); nr > radius {
			scale = radius / nr
		}
		// Predicted smallest margin after the (scaled) step, from the
		// linearised constraints just built: rhs_i = 1.5κ − (f_t − f_j).
		pred := math.Inf(1)
		nm := len(cr.thetas) * (cr.c.NumClasses() - 1)
		for i := 0; i < nm; i++ {
			pred = math.Min(pred, 1.5*kappa-cr.rhs[i]+scale*floats.Dot(cr.rows[i], r))
		}
		for q := range r {
			r[q] *= scale
		}
		cr.clampTo(try, x, r)
		mg := cr.minMargin(try, t)
		if !(mg > margin) {
			radius /= 4
			if radius < 1e-12 {
				return 0, iters, false, nil
			}
			continue
		}
		if mg-margin >= 0.5*(pred-margin) && scale < 1 {
			radius *= 2
		}
		copy(x, try)
		margin = mg
	}
	return margin, iters, true, nil
}

// shrink is phase 2 of target: from the valid x (margin ≥ κ, updated in
// place), it moves towards x⁰ by the solutions of linearised
// least-distance problems until the solution no longer moves (converged),
// no step helps, or MaxIter linearisations in all (iters so far).
func (cr *crafter) shrink(x []float64, t int, margin float64, iters int) (float64, int, bool, error) {
	kappa := cr.opts.Margin
	u := make([]float64, len(x))
	try := make([]float64, len(x))
	for iters < cr.opts.MaxIter {
		iters++
		for q := range u {
			u[q] = x[q] - cr.x0[q]
		}
		v, ok, err := cr.solve(x, cr.x0, u, t, kappa, true)
		if err == nil && !ok && cr.opts.Clamp {
			// As in deepFoolStep: without the box, the step is then
			// clamped below and accepted only if it helps.
			v, ok, err = cr.solve(x, cr.x0, u, t, kappa, false)
		}
		if err != nil {
			return 0, iters, false, err
		}
		if !ok {
			break
		}
		nu := math.Sqrt(floats.Dot(u, u))
		if euclidDist(v, u) <= 1e-6*(1+nu) {
			return margin, iters, true, nil
		}
		var moved bool
		if moved, margin, iters, err = cr.stepTowards(x, try, u, v, t, nu, margin, iters); err != nil {
			return 0, iters, false, err
		}
		if !moved {
			break
		}
	}
	return margin, iters, false, nil
}

// stepTowards moves x (= x⁰ + u) towards x⁰ + v by the longest step of 1,
// ½, ¼, … (down to 2⁻²⁰) that, after up to two DeepFool steps restoring
// the margins the curvature took away, keeps every true margin ≥ κ/2 and
// brings x nearer to x⁰ (‖u‖ = nu). try is scratch space.
func (cr *crafter) stepTowards(x, try, u, v []float64, t int, nu, margin float64, iters int) (moved bool, _ float64, _ int, _ error) {
	kappa := cr.opts.Margin
	for tau := 1.0; tau >= 0x1p-20 && !moved; tau /= 2 {
		for q := range try {
			try[q] = u[q] + tau*(v[q]-u[q])
		}
		cr.clampTo(try, cr.x0, try)
		mg := cr.minMargin(try, t)
		// Second-order correction: the step is feasible for the
		// linearised constraints, so the true margins miss κ only by the
		// curvature; up to two DeepFool steps restore them.
		for s := 0; s < 2 && mg < kappa && iters < cr.opts.MaxIter; s++ {
			iters++
			r, ok, err := cr.deepFoolStep(try, t, kappa)
			if err != nil {
				return false, 0, iters, err
			}
			if !ok {
				break
			}
			cr.clampTo(try, try, r)
			mg = cr.minMargin(try, t)
		}
		if mg >= kappa/2 && euclidDist(try, cr.x0) < nu {
			copy(x, try)
			margin, moved = mg, true
		}
	}
	return moved, margin, iters, nil
}
