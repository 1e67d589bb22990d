package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// ULA is the unadjusted Langevin algorithm of Bertazzi et al. eq. 12 with
// the full gradient:
//
//	x ← x − γ·∇U_D(x) + sqrt(2γ)·z,  U_D = −ln p(θ) − Σ_i ln p(x_i | θ),
//
// optionally followed by the Euclidean projection onto the ball of radius
// Radius around Center (projected ULA / noisy projected gradient descent,
// the setting of Balle et al. Thm 5).
type ULA struct {
	// Gamma is the step size γ.
	Gamma float64 `yaml:"gamma" json:"gamma"`
	// Iters is the number of iterations.
	Iters int `yaml:"iterations" json:"iterations"`
	// Radius > 0 projects every state onto the ball; 0 disables it.
	Radius float64   `yaml:"radius,omitempty" json:"radius,omitempty"`
	Center []float64 `yaml:"center,omitempty" json:"center,omitempty"`
	// Plant is a planted bug (nil: none): the noise standard deviation
	// sqrt(2γ) × noise and steps extra iterations; ULA neither clips nor
	// subsamples. The guarantees keep the declared values.
	Plant *Plant `yaml:"plant,omitempty" json:"plant,omitempty"`
}

// Name implements Sampler.
func (u *ULA) Name() string {
	if u.Radius > 0 {
		return fmt.Sprintf("ULA(gamma=%g, projected onto radius %g)", u.Gamma, u.Radius) + u.Plant.suffix()
	}
	return fmt.Sprintf("ULA(gamma=%g)", u.Gamma) + u.Plant.suffix()
}

// Planted implements Planter.
func (u *ULA) Planted() *Plant { return u.Plant }

// PlantNote implements Planter.
func (u *ULA) PlantNote(int) string {
	p := u.Plant
	var v []string
	if p.noise() != 1 {
		sd := math.Sqrt(2 * u.Gamma)
		v = append(v, runValue("noise standard deviation", sd, sd*p.noise()))
	}
	return p.note(u.Name(), append(v, p.stepsNote()...))
}

// Iterations implements Sampler.
func (u *ULA) Iterations(*dataset.Dataset) int { return u.Iters }

// IterationsPerEpoch implements Sampler: every iteration uses all the data.
func (u *ULA) IterationsPerEpoch(*dataset.Dataset) int { return 1 }

// Check implements Sampler.
func (u *ULA) Check(m Model, d *dataset.Dataset) error {
	if !(u.Gamma > 0) || math.IsInf(u.Gamma, 0) {
		return field.Errorf(field.At("Gamma", "gamma"), "must be finite and > 0, got %g", u.Gamma)
	}
	if u.Iters < 1 || u.Iters > MaxIterations {
		return field.Errorf(field.At("Iters", "iterations"), "must be in [1, 2^40], got %d", u.Iters)
	}
	if !(u.Radius >= 0) || math.IsInf(u.Radius, 0) {
		return field.Errorf(field.At("Radius", "radius"), "must be finite and ≥ 0, got %g", u.Radius)
	}
	if len(u.Center) != 0 && len(u.Center) != m.Dim() {
		return field.Errorf(field.At("Center", "center"), "must have %d values, got %d", m.Dim(), len(u.Center))
	}
	if err := u.Plant.check(PlantFields{Clip: "ULA does not clip", Rate: "ULA uses the full gradient and does not subsample"}); err != nil {
		return err
	}
	if u.Iters+u.Plant.steps() > MaxIterations {
		return field.Errorf(field.At("Plant", "plant").Field("Steps", "steps"), "a run of more than 2^40 iterations is refused (%d declared + %d)", u.Iters, u.Plant.steps())
	}
	return nil
}

// project maps x onto the ball {‖x − c‖ ≤ R}; it reports whether x moved.
func (u *ULA) project(x []float64) bool {
	var nn float64
	for i, v := range x {
		if len(u.Center) > 0 {
			v -= u.Center[i]
		}
		nn += v * v
	}
	nn = math.Sqrt(nn)
	if nn <= u.Radius {
		return false
	}
	f := u.Radius / nn
	for i := range x {
		c := 0.0
		if len(u.Center) > 0 {
			c = u.Center[i]
		}
		x[i] = c + f*(x[i]-c)
	}
	return true
}

// Run implements Sampler.
func (u *ULA) Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error) {
	total := u.Iters + u.Plant.steps()
	rel := releaser{at: shiftAt(at, u.Plant.steps()), emit: emit}
	grad := make([]float64, len(theta))
	sum := make([]float64, len(theta))
	info := Info{Iterations: total}
	sd := math.Sqrt(2*u.Gamma) * u.Plant.noise()
	for t := 1; t <= total; t++ {
		for k := range sum {
			sum[k] = 0
		}
		for _, r := range d.Records {
			m.GradLogLik(theta, r, grad)
			for k, g := range grad {
				sum[k] += g
			}
		}
		info.GradEvals += d.Len()
		m.GradLogPrior(theta, grad)
		for k := range theta {
			theta[k] += u.Gamma*(grad[k]+sum[k]) + sd*rng.NormFloat64()
		}
		if u.Radius > 0 && u.project(theta) {
			info.Projections++
		}
		if !finite(theta) {
			return info, &DivergedError{Iteration: t, Theta: append([]float64(nil), theta...)}
		}
		if rel.due(t) {
			if err := rel.release(theta, &info); err != nil {
				return info, err
			}
		}
	}
	return info, nil
}
