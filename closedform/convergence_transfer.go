package closedform

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/gonum/mat"
)

// Prop32Source cites the convergence-transfer upper bound.
const Prop32Source = "Bertazzi et al. 2025, Prop. 3.2 (i) / A.2 (distance to the posterior)"

// TransferDelta returns the δ of Bertazzi et al. Prop. A.2 (Prop. 3.2 (i)):
// if the posteriors are (ε, δπ)-DP and the released laws are within β of
// them in total variation, the release is (ε, δπ + β(e^ε + 1))-DP. It is
// capped at 1.
func TransferDelta(eps, deltaPosterior, beta float64) float64 {
	if beta == 0 {
		return math.Min(1, deltaPosterior)
	}
	return math.Min(1, deltaPosterior+beta*(math.Exp(eps)+1))
}

// TransferGuarantee returns Prop. 3.2 (i) as a Guarantee: posterior is the
// posteriors' privacy profile (an upper bound: exact, or a theorem's),
// beta the certified TV bound between each released law and its posterior
// (the larger over D and D′). The proposition gives, for every ε,
// g(ε) = min(1, posterior(ε) + β(e^ε + 1)), which grows again for large ε;
// since (ε₀, δ₀)-DP implies (ε, δ₀)-DP for every ε ≥ ε₀, the profile
// returned is g up to its minimiser ε* and g(ε*) beyond, non-increasing.
// g is quasi-convex in ε (a hockey-stick divergence is convex in e^ε and
// β(e^ε + 1) is linear in it), so ε* is found by golden-section search;
// an inexact ε* only makes the profile slightly larger, never invalid.
// note says where β and the posterior's profile come from.
func TransferGuarantee(release string, posterior func(float64) float64, beta float64, checks []Check, note string) Guarantee {
	return Guarantee{
		Source: Prop32Source, Release: release, Applies: true, Checks: checks,
		Profile: transferProfile(posterior, beta),
		Note:    note,
	}
}

// transferProfile is the profile of TransferGuarantee.
func transferProfile(posterior func(float64) float64, beta float64) func(float64) float64 {
	g := func(eps float64) float64 { return TransferDelta(eps, posterior(eps), beta) }
	star := 0.0
	if beta > 0 {
		// e^ε·β ≥ 1 beyond ε = ln(1/β): the minimiser lies below.
		star, _ = goldenMax(func(e float64) float64 { return -g(e) }, 0, math.Min(maxExpArg, math.Log(2/beta)), 200)
	} else {
		star = math.Inf(1)
	}
	floor := 1.0
	if !math.IsInf(star, 1) {
		floor = g(star)
	}
	return func(eps float64) float64 {
		if eps >= star {
			return floor
		}
		return math.Min(g(eps), 1)
	}
}

// NotDPEpsilon returns the ε that Bertazzi et al. Prop. A.3 (Prop. 3.3)
// proves the release does NOT satisfy at δ: the posteriors are not
// (ε, δ′(ε))-DP, with δ′ a lower bound on their exact privacy profile, and
// the released laws are within β of them, so the release is not
// (ε, δ′(ε) − (1 + e^ε)β)-DP. For every ε with δ′(ε) − (1 + e^ε)β > δ the
// release is therefore not (ε, δ)-DP; the function returns the supremum of
// those ε (the left side decreases in ε, so they form an interval), found
// by bisection to a relative 1e-12 and rounded down, and ok = false when
// there is none (not even ε = 0).
//
// Prop. A.3 asks ε > 0 and δ′ ≥ (1 + e^ε)β; both hold on the interval
// returned (δ′ − (1 + e^ε)β > δ ≥ 0), and at ε = 0 the statement follows
// from the same two triangle inequalities of its proof.
func NotDPEpsilon(posteriorLower func(float64) float64, beta, delta float64) (eps float64, ok bool) {
	h := func(e float64) bool { return posteriorLower(e)-(1+math.Exp(e))*beta > delta }
	if !h(0) {
		return 0, false
	}
	lo, hi := 0.0, 1.0
	for h(hi) {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return lo, true
		}
	}
	for hi-lo > 1e-12*hi {
		m := 0.5 * (lo + hi)
		if h(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return lo, true
}

// RequiredTV returns the distance to the posterior that Bertazzi et al.
// Prop. A.4 (Prop. 3.4) forces on a chain that is (ε, δ̄)-DP when the
// posteriors are not (ε, δ)-DP with δ > δ̄: for D or D′,
//
//	‖law(X_n) − π‖_TV > e^{−ε}/(1 + e^{−ε})·(δ − δ̄).
//
// It returns 0 when δ ≤ δ̄ (the proposition says nothing).
func RequiredTV(eps, deltaPosterior, deltaChain float64) float64 {
	if !(deltaPosterior > deltaChain) {
		return 0
	}
	w := math.Exp(-eps)
	return w / (1 + w) * (deltaPosterior - deltaChain)
}

// GaussianPairProfile is the exact privacy profile of one draw from N(m1, S1)
// against one from N(m2, S2), in both directions: δ(ε) = max(H_{e^ε}(P‖Q),
// H_{e^ε}(Q‖P)), with Upper ≥ δ(ε) ≥ Lower (the numerical error bound
// added or subtracted).
type GaussianPairProfile struct {
	// Upper and Lower bracket the exact profile.
	Upper, Lower func(eps float64) float64
	// Note says how it is computed.
	Note string
	// Spec is Upper as data (GaussianPairSpec of the arguments).
	Spec *ProfileSpec
}

// NewGaussianPairProfile returns the exact profile of two Gaussians given
// their mean difference dm = m1 − m2 and covariances (row-major d×d). With
// equal covariances it is μ-GDP with μ² = dmᵀS⁻¹dm (Dong, Roth & Su 2019,
// Thm 2.7 and Cor. 2.13); in one dimension with unequal variances it is
// HockeyStickGaussian1D in both directions. With unequal covariances in
// d > 1 no exact form is implemented and the profile is bracketed
// (unequalCovProfile).
func NewGaussianPairProfile(dm, cov1, cov2 []float64) (GaussianPairProfile, error) {
	p, err := newGaussianPairProfile(dm, cov1, cov2)
	if err == nil {
		s := GaussianPairSpec(dm, cov1, cov2)
		p.Spec = &s
	}
	return p, err
}

func newGaussianPairProfile(dm, cov1, cov2 []float64) (GaussianPairProfile, error) {
	d := len(dm)
	if d < 1 || len(cov1) != d*d || len(cov2) != d*d {
		return GaussianPairProfile{}, fmt.Errorf("cov: must hold d×d values for a mean difference of dimension %d", d)
	}
	equal := true
	for i := range cov1 {
		if cov1[i] != cov2[i] {
			equal = false
		}
	}
	if equal {
		mu, err := mahalanobis(dm, cov1)
		if err != nil {
			return GaussianPairProfile{}, err
		}
		up := func(e float64) float64 { return math.Min(1, gdpDeltaSafe(mu, e, 1)*(1+1e-12)) }
		lo := func(e float64) float64 { return gdpDeltaSafe(mu, e, 0) * (1 - 1e-12) }
		return GaussianPairProfile{Upper: up, Lower: lo,
			Note: fmt.Sprintf("posteriors with equal covariances: exactly %.6g-GDP", mu)}, nil
	}
	if d != 1 {
		return unequalCovProfile(dm, cov1, cov2)
	}
	s1, s2 := math.Sqrt(cov1[0]), math.Sqrt(cov2[0])
	at := func(e float64) (float64, float64) {
		a, ea, err1 := HockeyStickGaussian1D(e, -dm[0], s1, s2)
		b, eb, err2 := HockeyStickGaussian1D(e, dm[0], s2, s1)
		if err1 != nil || err2 != nil {
			return math.NaN(), math.NaN()
		}
		if a >= b {
			return a, ea
		}
		return b, eb
	}
	// Beyond ε = maxExpArg e^ε overflows: the profile is non-increasing, so
	// its value there bounds it from above, and 0 from below.
	up := func(e float64) float64 { v, er := at(math.Min(e, maxExpArg)); return math.Min(1, v+er) }
	lo := func(e float64) float64 {
		if e > maxExpArg {
			return 0
		}
		v, er := at(e)
		return math.Max(0, v-er)
	}
	return GaussianPairProfile{Upper: up, Lower: lo,
		Note: "posteriors N(μ, σ²) and N(μ′, σ′²): exact hockey-stick profile in both directions"}, nil
}

// maxExpArg is an ε below which e^ε is finite in float64.
const maxExpArg = 700

// gdpDeltaSafe is stats.GDPDelta, with the value ifNaN where its log-space
// evaluation breaks down (ε/μ beyond the float64 range), except where
// δ(ε) ≤ Φ(μ/2 − ε/μ) is certainly below 1e-300, which gives 0.
func gdpDeltaSafe(mu, eps, ifNaN float64) float64 {
	v := stats.GDPDelta(mu, eps)
	if !math.IsNaN(v) {
		return v
	}
	if mu/2-eps/mu < -40 {
		return 0
	}
	return ifNaN
}

// mahalanobis returns sqrt(dmᵀ S⁻¹ dm) by a Cholesky solve.
func mahalanobis(dm, cov []float64) (float64, error) {
	d := len(dm)
	if d == 1 {
		if !(cov[0] > 0) {
			return math.NaN(), fmt.Errorf("cov: must be positive, got %g", cov[0])
		}
		return math.Abs(dm[0]) / math.Sqrt(cov[0]), nil
	}
	l := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s := 0.5 * (cov[i*d+j] + cov[j*d+i])
			for k := 0; k < j; k++ {
				s -= l[i*d+k] * l[j*d+k]
			}
			if i == j {
				if !(s > 0) {
					return math.NaN(), fmt.Errorf("cov: must be positive definite")
				}
				l[i*d+i] = math.Sqrt(s)
			} else {
				l[i*d+j] = s / l[j*d+j]
			}
		}
	}
	var q float64
	y := make([]float64, d)
	for i := 0; i < d; i++ {
		s := dm[i]
		for k := 0; k < i; k++ {
			s -= l[i*d+k] * y[k]
		}
		y[i] = s / l[i*d+i]
		q += y[i] * y[i]
	}
	return math.Sqrt(q), nil
}

// PosteriorTV returns certified upper bounds on the total variation
// distance between cyclic SGLD's output at the end of epoch K and the
// posterior, for D1 (β1) and D2 (β2) of the counterexample.
//
// D1: the output N(μ_K, v_K) and the posterior N(μ1, 1/s) are two
// Gaussians, μ_K − μ1 = −M∞λ^{nK} (Moments): the exact 1-D distance plus
// its error. D2: the output is the uniform mixture over r of
// N_r = N(μ_K − d_r, v̂_r), and by the joint convexity of TV,
// ‖(1/n)Σ_r N_r − π2‖_TV ≤ (1/n)Σ_r ‖N_r − π2‖_TV ≤ max_r ‖N_r − π2‖_TV.
// For n ≤ 20000 the average is summed exactly; above, the maximum is
// bounded over the whole box the components span: each component's mean
// offset from the posterior is affine in u = λ^{n−r} ∈ [λ^{n−1}, 1] and its
// variance V0 + V1u² lies between its values at the ends, so by the
// triangle inequality through N(0, v) and N(offset, v),
//
//	‖N_r − π2‖_TV ≤ (2Φ(max|offset|/(2 sqrt(min v))) − 1) + max_v ‖N(0, v) − N(0, σ2²)‖_TV,
//
// each term maximised at an end (the first increases with |offset| and
// decreases with v; the second increases as v moves away from σ2²), and
// also by Pinsker's inequality on the largest KL over the same box (the KL
// is convex in the offset and in v); the smaller bound is used.
func (c Counterexample) PosteriorTV(epoch int) (beta1, beta2 TVBound, err error) {
	m, err := c.Moments(epoch)
	if err != nil {
		return TVBound{}, TVBound{}, err
	}
	p1, p2, meanDiff := c.Posteriors()
	k := c.consts()
	lamNK := math.Exp(-k.n * float64(epoch) * k.L)
	off1 := -k.mInf * lamNK // μ_K − μ1
	t1, err := TVGaussian1D(off1, math.Sqrt(m.Var), 0, p1.Sigma)
	if err != nil {
		return TVBound{}, TVBound{}, err
	}
	beta1 = TVBound{Value: t1, Method: "exact 1-D Gaussian TV (with its numerical error bound)"}
	// Component offset from μ2 = μ1 − meanDiff: off1 − (D0 + D1 u) + meanDiff.
	offset := func(u float64) float64 { return off1 - (m.DiffConst + m.DiffSlope*u) + meanDiff }
	variance := func(u float64) float64 { return m.VarConst + m.VarSlope*u*u }
	if c.N <= 20000 {
		var sum float64
		for r := 1; r <= c.N; r++ {
			u := m.U(r)
			t, err := TVGaussian1D(offset(u), math.Sqrt(variance(u)), 0, p2.Sigma)
			if err != nil {
				return TVBound{}, TVBound{}, err
			}
			sum += t
		}
		beta2 = TVBound{Value: math.Min(1, sum/float64(c.N)*(1+1e-12)),
			Method: "mixture: average of the exact 1-D TVs of its components (joint convexity of TV)"}
		return beta1, beta2, nil
	}
	uMin := m.U(1)
	offMax := math.Max(math.Abs(offset(uMin)), math.Abs(offset(1)))
	vLo, vHi := variance(uMin), variance(1)
	if vLo > vHi {
		vLo, vHi = vHi, vLo
	}
	w := p2.Sigma * p2.Sigma
	shift := math.Erf(offMax/(2*math.Sqrt2*math.Sqrt(vLo)))*(1+1e-15) + 1e-300
	varTV := 0.0
	for _, v := range []float64{vLo, vHi} {
		t, err := TVGaussian1D(0, math.Sqrt(v), 0, p2.Sigma)
		if err != nil {
			return TVBound{}, TVBound{}, err
		}
		varTV = math.Max(varTV, t)
	}
	tri := math.Min(1, shift+varTV)
	klMax := 0.5 * (offMax * offMax / w)
	klMax += 0.5 * math.Max(xMinusLog1p((vLo-w)/w), xMinusLog1p((vHi-w)/w))
	pk := TVFromKL(klMax * (1 + 1e-12))
	if tri <= pk {
		beta2 = TVBound{Value: tri, Method: "mixture: largest component TV over the box of offsets and variances (joint convexity, triangle inequality, exact 1-D TVs)"}
	} else {
		beta2 = TVBound{Value: pk, Method: "mixture: largest component KL over the box of offsets and variances with Pinsker / Bretagnolle–Huber (joint convexity)"}
	}
	return beta1, beta2, nil
}

// PosteriorPairProfile returns the exact privacy profile of one posterior
// draw for the counterexample's pair D1, D2 (Heller & Fetaya Lemma IV.2:
// N(μ1, 1/s1) and N(μ2, 1/s2)), from the mean difference computed without
// cancellation (Posteriors).
func (c Counterexample) PosteriorPairProfile() (GaussianPairProfile, error) {
	if err := c.validateData(); err != nil {
		return GaussianPairProfile{}, err
	}
	p1, p2, dm := c.Posteriors()
	return NewGaussianPairProfile([]float64{dm}, []float64{p1.Sigma * p1.Sigma}, []float64{p2.Sigma * p2.Sigma})
}

// TransferAtEpoch is the convergence-transfer pair of statements for the
// counterexample at one epoch.
type TransferAtEpoch struct {
	// Epoch is K.
	Epoch int
	// Beta1, Beta2 bound the TV between the output on D1, D2 and the
	// corresponding posterior.
	Beta1, Beta2 TVBound
	// NotDPEpsilon is the ε that Prop. 3.3 / A.3 proves at the δ asked
	// (the release is not (ε′, δ)-DP for any ε′ < NotDPEpsilon); 0 with
	// Proves false when it proves nothing.
	NotDPEpsilon float64
	Proves       bool
}

// Transfer returns Prop. 3.3's lower bound at an epoch, for the δ of the
// audit.
func (c Counterexample) Transfer(epoch int, delta float64) (TransferAtEpoch, error) {
	if err := checkCurveDelta(delta); err != nil {
		return TransferAtEpoch{}, err
	}
	b1, b2, err := c.PosteriorTV(epoch)
	if err != nil {
		return TransferAtEpoch{}, err
	}
	prof, err := c.PosteriorPairProfile()
	if err != nil {
		return TransferAtEpoch{}, err
	}
	beta := math.Max(b1.Value, b2.Value)
	eps, ok := NotDPEpsilon(prof.Lower, beta, delta)
	return TransferAtEpoch{Epoch: epoch, Beta1: b1, Beta2: b2, NotDPEpsilon: eps, Proves: ok}, nil
}

// unequalCovProfile brackets the privacy profile of N(m1, S1) against
// N(m2, S2) in d > 1 dimensions with S1 ≠ S2, where no exact form is
// implemented. Upper: the closed-form Rényi divergence of two Gaussians
// (gaussRenyi) in both directions, converted at the best order by Balle et al. 2020,
// Thm 21 (stats.Improved). Lower: the exact profile of the projection on
// w = (S1 + S2)⁻¹dm, two 1-D Gaussians — a post-processing of the pair,
// so its hockey-stick divergence is at most the pair's.
func unequalCovProfile(dm, cov1, cov2 []float64) (GaussianPairProfile, error) {
	d := len(dm)
	sym := func(c []float64) *mat.SymDense {
		s := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				s.SetSym(i, j, 0.5*(c[i*d+j]+c[j*d+i]))
			}
		}
		return s
	}
	s1, s2 := sym(cov1), sym(cov2)
	var c1, c2 mat.Cholesky
	if !c1.Factorize(s1) || !c2.Factorize(s2) {
		return GaussianPairProfile{}, fmt.Errorf("cov: the posterior covariances must be positive definite")
	}
	v := mat.NewVecDense(d, append([]float64(nil), dm...))
	curve := stats.RDPCurve(func(a float64) float64 {
		return math.Max(gaussRenyi(a, v, s1, s2, c1.LogDet(), c2.LogDet()), gaussRenyi(a, v, s2, s1, c2.LogDet(), c1.LogDet()))
	})
	up := func(e float64) float64 {
		return math.Min(1, math.Exp(curve.LogDelta(e, stats.Improved, stats.DefaultOrders)))
	}
	// Projection on w = (S1 + S2)⁻¹dm.
	var sum mat.SymDense
	sum.AddSym(s1, s2)
	var cs mat.Cholesky
	if !cs.Factorize(&sum) {
		return GaussianPairProfile{}, fmt.Errorf("cov: S1 + S2 must be positive definite")
	}
	var w mat.VecDense
	if err := cs.SolveVecTo(&w, v); err != nil {
		return GaussianPairProfile{}, err
	}
	pm := mat.Dot(&w, v)
	sd1, sd2 := math.Sqrt(mat.Inner(&w, s1, &w)), math.Sqrt(mat.Inner(&w, s2, &w))
	lo := func(e float64) float64 {
		if e > maxExpArg || pm == 0 {
			return 0
		}
		a, ea, err1 := HockeyStickGaussian1D(e, -pm, sd1, sd2)
		b, eb, err2 := HockeyStickGaussian1D(e, pm, sd2, sd1)
		if err1 != nil || err2 != nil {
			return 0
		}
		return math.Max(0, math.Max(a-ea, b-eb))
	}
	return GaussianPairProfile{Upper: up, Lower: lo,
		Note: fmt.Sprintf("posteriors with unequal covariances in %d dimensions: upper bound from their closed-form Rényi divergence "+
			"(Gil, Alajaji & Linder 2013) converted by Balle et al. 2020 Thm 21; lower bound from the exact profile of the "+
			"projection on (S + S′)⁻¹(m − m′)", d)}, nil
}

// gaussRenyi returns the Rényi divergence of order a > 1 between
// P = N(m1, S1) and Q = N(m2, S2), dm = m1 − m2, given ln det S1 and
// ln det S2:
//
//	D_a(P‖Q) = (a/2)·dmᵀS_a⁻¹dm − ln(det S_a / (det S1^{1−a} det S2^a))/(2(a − 1)),
//	S_a = aS2 + (1 − a)S1,
//
// obtained by completing the square in ln ∫ p^a q^{1−a}/(a − 1); +Inf where
// S_a is not positive definite (the integral diverges). In one dimension it
// is the univariate formula of Gil, Alajaji & Linder 2013 (Table 2), which
// the tests compare it with (stats.RenyiGaussian).
func gaussRenyi(a float64, dm *mat.VecDense, s1, s2 *mat.SymDense, ld1, ld2 float64) float64 {
	d := dm.Len()
	sa := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sa.SetSym(i, j, a*s2.At(i, j)+(1-a)*s1.At(i, j))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sa) {
		return math.Inf(1)
	}
	var x mat.VecDense
	if err := ch.SolveVecTo(&x, dm); err != nil {
		return math.Inf(1)
	}
	return a/2*mat.Dot(dm, &x) - (ch.LogDet()-(1-a)*ld1-a*ld2)/(2*(a-1))
}
