package mechanisms

import (
	"context"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// ExactCounterexample samples cyclic SGLD (batch 1, constant step η, the
// chain started from the prior N(0, 1/α)) on Heller & Fetaya's pair D1/D2
// exactly at its epoch boundaries, without simulating a single step: D1's
// state is μ_K + e and D2's, for the position r of the special record
// (uniform on 1..n, as one shuffle makes it), μ_K − d_r(K) + e, where μ_K
// and d_r(K) are closedform's exact means and the fluctuation e follows the
// exact Gaussian AR(1) of closedform.Transition from e₀ ~ N(0, 1/α). The
// law of every release is that of the real sampler (tested against it), at
// any n — 10⁶ runs at n = 17,864,389 take a few seconds.
//
// Its datasets are the virtual pair of dataset.VirtualCounterexamplePair;
// it carries the guarantees of the SGLD chain it samples.
type ExactCounterexample struct {
	Model   closedform.Counterexample
	Epochs  int
	Release ReleaseSpec

	points   []ReleasePoint
	moments  []closedform.Moments
	trans    []closedform.Transition
	sd1      []float64 // √Var1 of each transition (D1's noise scale)
	priorStd float64
}

// NewExactCounterexample prepares the sampler: the means at every release
// epoch and the transitions between them.
func NewExactCounterexample(model closedform.Counterexample, epochs int, release ReleaseSpec) (*ExactCounterexample, error) {
	if err := model.Validate(); err != nil {
		return nil, field.Errorf(field.At("Model", "model"), "%w", err)
	}
	if epochs < 1 || epochs > 1_000_000 {
		return nil, field.Errorf(field.At("epochs", "epochs"), "must be in [1, 1000000], got %d", epochs)
	}
	e := &ExactCounterexample{Model: model, Epochs: epochs, Release: release, priorStd: 1 / math.Sqrt(model.Alpha)}
	total, ok := MulCount(epochs, model.N)
	if !ok {
		return nil, field.Errorf(field.At("epochs", "epochs"), "epochs × n = %d × %d iterations overflow the integer range", epochs, model.N)
	}
	pts, err := release.Points(total, model.N)
	if err != nil {
		return nil, field.Wrap(err, field.At("Release", "release"))
	}
	prev := 0
	for _, pt := range pts {
		if pt.Iteration%model.N != 0 {
			return nil, field.Errorf(field.At("Release", "release"), "the exact sampler releases at epoch boundaries only (iteration %d is not a multiple of n = %d)", pt.Iteration, model.N)
		}
		k := pt.Iteration / model.N
		m, err := model.Moments(k)
		if err != nil {
			return nil, err
		}
		tr, err := model.Transition(k - prev)
		if err != nil {
			return nil, err
		}
		e.moments, e.trans = append(e.moments, m), append(e.trans, tr)
		e.sd1 = append(e.sd1, math.Sqrt(tr.Var1))
		prev = k
	}
	e.points = pts
	return e, nil
}

// Name implements Namer.
func (e *ExactCounterexample) Name() string {
	return fmt.Sprintf("cyclic SGLD (batch 1, eta=%g), sampled exactly at epoch boundaries", e.Model.Eta)
}

// Dim implements Mechanism.
func (e *ExactCounterexample) Dim() int { return 1 }

// Iterations implements Sampler.
func (e *ExactCounterexample) Iterations(*dataset.Dataset) int { return satMul(e.Epochs, e.Model.N) }

// IterationsPerEpoch implements Sampler.
func (e *ExactCounterexample) IterationsPerEpoch(*dataset.Dataset) int { return e.Model.N }

// Points implements Mechanism.
func (e *ExactCounterexample) Points(*dataset.Dataset) ([]ReleasePoint, error) { return e.points, nil }

// Check implements Checker.
func (e *ExactCounterexample) Check(d *dataset.Dataset) error {
	if d.Len() != e.Model.N {
		return field.Errorf(field.At("Data", "data"), "the exact sampler needs the counterexample's n = %d records, got %d", e.Model.N, d.Len())
	}
	return nil
}

// Guarantees implements Guarantor: those of the SGLD chain it samples, and
// Bertazzi et al.'s Prop. 3.2 (i) from its exact law (convergence.go).
func (e *ExactCounterexample) Guarantees(p dataset.Pair, at ReleasePoint) []closedform.Guarantee {
	gs := e.SGLD().Guarantees(SettingOf(NewLinReg1D(e.Model.Alpha, e.Model.Beta), p, at.Iteration))
	t, reason := counterexampleTransfer(e.Model, at.Iteration)
	if t == nil {
		return append(gs, uncovered(closedform.Prop32Source, reason))
	}
	return append(gs, t.Guarantee(fmt.Sprintf("state after epoch %d", at.Iteration/e.Model.N)))
}

// SGLD returns the sampler this one samples exactly (for guarantees).
func (e *ExactCounterexample) SGLD() *SGLD {
	return &SGLD{Step: StepSchedule{Eta: e.Model.Eta}, Batch: 1, Scheme: Cyclic, Epochs: e.Epochs}
}

// Run implements Mechanism: one run on D1 or D2 (t.Side), drawing r (on
// D2), e₀ and one normal per release from t.RNG.
func (e *ExactCounterexample) Run(_ context.Context, t Trial, _ *dataset.Dataset, emit Emit) (Info, error) {
	info := Info{Iterations: satMul(e.Epochs, e.Model.N)}
	rng := t.RNG
	onD2 := t.Side == dataset.SideDPrime
	u := 0.0
	if onD2 {
		r := 1 + rng.IntN(e.Model.N)
		u = e.moments[0].U(r)
	}
	fluct := e.priorStd * rng.NormFloat64()
	theta := t.state(1)
	rec := t.recorder(emit)
	out, ref := rec.slots(len(e.moments))
	for k := range e.moments {
		m, tr := &e.moments[k], &e.trans[k] // pointers: the structs are large
		if onD2 {
			fluct = tr.Factor2*fluct + math.Sqrt(tr.VarConst+tr.VarSlope*u*u)*rng.NormFloat64()
			theta[0] = m.Mean - (m.DiffConst + m.DiffSlope*u) + fluct
		} else {
			fluct = tr.Factor1*fluct + e.sd1[k]*rng.NormFloat64()
			theta[0] = m.Mean + fluct
		}
		if out != nil && rec.keep(out, ref, k, theta[0]) {
			continue
		}
		if rec != nil && rec.put(k, theta) {
			continue
		}
		if err := emit(k, theta); err != nil {
			return info, err
		}
	}
	return info, nil
}
