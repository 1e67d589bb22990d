package mechanisms

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// GradientConstants is what the theoretical bounds need to know about a
// model's gradients, evaluated over a set of records (the audit passes the
// records of D and D′: its claims are about that pair).
type GradientConstants struct {
	// LikGradBound bounds ‖∇_θ ln p(d | θ)‖ over every θ and record d; 0
	// when no finite bound exists (Reason says why).
	LikGradBound float64
	// LikGradDiff bounds ‖∇ ln p(d | θ) − ∇ ln p(d′ | θ)‖ over θ and every
	// pair of records; 0 when unbounded.
	LikGradDiff float64
	// ConstantLikGrad states that ∇ ln p(d | θ) does not depend on θ.
	ConstantLikGrad bool
	// PriorLipschitz and PriorConvexity are L and a of −ln p(θ): its
	// gradient is L-Lipschitz and it is a-strongly convex (0: unknown).
	PriorLipschitz, PriorConvexity float64
	// Reason explains a missing bound.
	Reason string
}

// ConstantsModel is implemented by models whose gradient constants are
// known.
type ConstantsModel interface {
	GradientConstants(records []dataset.Record) GradientConstants
}

// GradientConstants implements ConstantsModel: ∇ ln p(d | θ) = β(y − θᵀx)x
// grows without bound in θ (unless every x = 0), so no finite c exists;
// the prior α‖θ‖²/2 has L = a = α.
func (m LinReg) GradientConstants(records []dataset.Record) GradientConstants {
	return GradientConstants{
		PriorLipschitz: m.Alpha, PriorConvexity: m.Alpha,
		Reason: "the linear-regression gradient β(y − θᵀx)x is unbounded in θ (a bounded domain for θ, as Heller eq. 5 bounds the data, would be needed)",
	}
}

// GradientConstants implements ConstantsModel: ‖(y − σ(θᵀx))x‖ ≤ ‖x‖ for
// y ∈ {0, 1}, so c = max‖x‖ over the records and the difference of two
// records' gradients is at most the sum of the two largest norms; the prior
// α‖θ‖²/2 has L = a = α.
func (m Logistic) GradientConstants(records []dataset.Record) GradientConstants {
	var n1, n2 float64
	for _, r := range records {
		n := math.Sqrt(dot(r.X, r.X))
		if n > n1 {
			n1, n2 = n, n1
		} else if n > n2 {
			n2 = n
		}
	}
	return GradientConstants{LikGradBound: n1, LikGradDiff: n1 + n2,
		PriorLipschitz: m.Alpha, PriorConvexity: m.Alpha}
}

// GradientConstants implements ConstantsModel: ∇ ln p(x | θ) = Σ⁻¹(x − θ)
// is unbounded in θ; the prior N(μ₀, σ₀²I) has L = a = 1/σ₀².
func (g *Gauss) GradientConstants(records []dataset.Record) GradientConstants {
	p := 1 / (g.sigma0 * g.sigma0)
	return GradientConstants{PriorLipschitz: p, PriorConvexity: p,
		Reason: "the Gaussian-mean gradient Σ⁻¹(x − θ) is unbounded in θ"}
}

// GradientConstants implements ConstantsModel: the banana's gradient is
// unbounded and its posterior is not log-concave.
func (b Banana) GradientConstants(records []dataset.Record) GradientConstants {
	return GradientConstants{Reason: "the banana model's likelihood gradient is unbounded in θ"}
}
