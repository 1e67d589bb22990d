package mechanisms

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/mat"
)

// Curvature bounds the Hessian of a per-record negative log-likelihood
// −ln p(d | θ) over every θ and every record of a set: it is Smooth-smooth
// (Hessian ≼ Smooth·I) and Convex-strongly convex (Hessian ≽ Convex·I;
// Convex = 0 when it is only convex).
type Curvature struct {
	Smooth, Convex float64
}

// Ball is the set {θ : ‖θ − Center‖ ≤ Radius}; Radius +Inf is the whole
// space (Center may then be empty).
type Ball struct {
	Center []float64
	Radius float64
}

// Whole is the whole parameter space.
var Whole = Ball{Radius: math.Inf(1)}

// CurvatureModel is implemented by models whose per-record negative
// log-likelihood has known curvature and whose gradients of two records
// differ by a known amount: what Balle et al.'s Thm 5 needs (a smooth,
// strongly convex loss and the sensitivity of one gradient step). The
// bounds of each model are derived in docs/derivations/balle-wiring.md.
type CurvatureModel interface {
	// LikCurvature bounds the curvature over the records; ok is false
	// when −ln p(d | θ) is not known to be convex.
	LikCurvature(records []dataset.Record) (c Curvature, ok bool)
	// LikGradDiff bounds sup over θ ∈ dom of ‖∇ ln p(z | θ) − ∇ ln p(z′ | θ)‖
	// (+Inf when it is unbounded there).
	LikGradDiff(z, z2 dataset.Record, dom Ball) float64
}

// LikCurvature implements CurvatureModel: the Hessian of
// ln(1 + e^{θᵀx}) − yθᵀx is σ(θᵀx)(1 − σ(θᵀx))·xxᵀ, between 0 and xxᵀ/4.
func (m Logistic) LikCurvature(records []dataset.Record) (Curvature, bool) {
	s := 0.0
	for _, r := range records {
		s = math.Max(s, dot(r.X, r.X)/4)
	}
	return Curvature{Smooth: s}, true
}

// LikGradDiff implements CurvatureModel: ∇ ln p = c·x with
// c = y − σ(θᵀx) ∈ [y − 1, y], so the difference c·x − c′·x′ is a convex
// function of (c, c′) on a box, largest at a corner: the bound is the
// largest ‖c·x − c′·x′‖ over c ∈ {y − 1, y}, c′ ∈ {y′ − 1, y′}, on any
// domain (0 for identical records).
func (m Logistic) LikGradDiff(z, z2 dataset.Record, _ Ball) float64 {
	if sameRecord(z, z2) {
		return 0
	}
	best := 0.0
	for _, c := range []float64{z.Y - 1, z.Y} {
		for _, c2 := range []float64{z2.Y - 1, z2.Y} {
			s := 0.0
			for i := range z.X {
				v := c*z.X[i] - c2*z2.X[i]
				s += v * v
			}
			best = math.Max(best, math.Sqrt(s))
		}
	}
	return best
}

// LikCurvature implements CurvatureModel: the Hessian of
// ½(x − θ)ᵀΣ⁻¹(x − θ) is Σ⁻¹ for every record, between its smallest and
// largest eigenvalues.
func (g *Gauss) LikCurvature([]dataset.Record) (Curvature, bool) {
	lo, hi := symEigenRange(g.prec, g.d)
	return Curvature{Smooth: hi, Convex: lo}, true
}

// LikGradDiff implements CurvatureModel: ∇ ln p(x | θ) − ∇ ln p(x′ | θ) =
// Σ⁻¹(x − x′) does not depend on θ.
func (g *Gauss) LikGradDiff(z, z2 dataset.Record, _ Ball) float64 {
	s := 0.0
	for i := 0; i < g.d; i++ {
		v := 0.0
		for j := 0; j < g.d; j++ {
			v += g.prec[i*g.d+j] * (z.X[j] - z2.X[j])
		}
		s += v * v
	}
	return math.Sqrt(s)
}

// LikCurvature implements CurvatureModel: the Hessian of β(y − θᵀx)²/2 is
// βxxᵀ, between 0 (βx² in one dimension) and β‖x‖².
func (m LinReg) LikCurvature(records []dataset.Record) (Curvature, bool) {
	c := Curvature{Convex: math.Inf(1)}
	for _, r := range records {
		n2 := dot(r.X, r.X)
		c.Smooth = math.Max(c.Smooth, m.Beta*n2)
		if m.D == 1 {
			c.Convex = math.Min(c.Convex, m.Beta*n2)
		}
	}
	if m.D != 1 || len(records) == 0 {
		c.Convex = 0
	}
	return c, true
}

// LikGradDiff implements CurvatureModel: ∇ ln p(z | θ) − ∇ ln p(z′ | θ) =
// v − βMθ with v = β(yx − y′x′) and M = xxᵀ − x′x′ᵀ, whose norm on the ball
// is at most ‖v − βM·center‖ + β‖M‖·radius (‖M‖ the spectral norm); on the
// whole space it is unbounded unless M = 0.
func (m LinReg) LikGradDiff(z, z2 dataset.Record, dom Ball) float64 {
	d := m.D
	M := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			M[i*d+j] = z.X[i]*z.X[j] - z2.X[i]*z2.X[j]
		}
	}
	lo, hi := symEigenRange(M, d)
	op := math.Max(math.Abs(lo), math.Abs(hi))
	s := 0.0
	for i := 0; i < d; i++ {
		v := m.Beta * (z.Y*z.X[i] - z2.Y*z2.X[i])
		for j := 0; j < d && len(dom.Center) > 0; j++ {
			v -= m.Beta * M[i*d+j] * dom.Center[j]
		}
		s += v * v
	}
	if op == 0 {
		return math.Sqrt(s)
	}
	return math.Sqrt(s) + m.Beta*op*dom.Radius
}

// symEigenRange returns the smallest and largest eigenvalues of the
// symmetric d×d matrix a (row-major).
func symEigenRange(a []float64, d int) (lo, hi float64) {
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(d, append([]float64(nil), a...)), false) {
		return math.NaN(), math.NaN()
	}
	v := es.Values(nil)
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

func sameRecord(a, b dataset.Record) bool {
	if a.Y != b.Y || len(a.X) != len(b.X) {
		return false
	}
	for i := range a.X {
		if a.X[i] != b.X[i] {
			return false
		}
	}
	return true
}
