package stats

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"gonum.org/v1/gonum/mathext"
)

// One-run (canary) auditing from counts. m canaries are included or left
// out independently with probability 1/2 (S_i ∈ {−1, +1}); after ONE run an
// attack guesses S_i for r of them — fixed in advance how many — and gets v
// right. The functions below turn (m, r, v) into lower bounds:
//
//   - OneRunEpsilon: Steinke, Nasr & Jagielski 2023 (arXiv 2305.08846),
//     Thm 3.1 for δ = 0 and the δ > 0 p-value of their Thm 3.2 / App. D in
//     the form jax_privacy computes it;
//   - OneRunFDP: Mahloujifar, Melis & Chaudhuri 2024 (arXiv 2410.22235), the
//     "audit with cap" test of the guesses against the Gaussian trade-off
//     family, giving μ_lb and the ε(δ) it implies for a Gaussian curve.
//
// docs/derivations/one-run.md states the formulas and how they were checked
// against jax_privacy.

// OneRunCounts are the outcome of a one-run canary audit.
type OneRunCounts struct {
	// Canaries is m, the number of canaries (each in the run w.p. 1/2).
	Canaries int `json:"canaries"`
	// Guesses is r, the number of canaries the attack guessed about.
	Guesses int `json:"guesses"`
	// Correct is v, the number of correct guesses.
	Correct int `json:"correct"`
}

// Validate checks m ≥ 1 and 0 ≤ v ≤ r ≤ m; the error names the field and
// its allowed range.
func (c OneRunCounts) Validate() error {
	if c.Canaries < 1 {
		return fmt.Errorf("canaries: must be ≥ 1, got %d", c.Canaries)
	}
	if c.Guesses < 0 || c.Guesses > c.Canaries {
		return fmt.Errorf("guesses: must be in [0, canaries=%d], got %d", c.Canaries, c.Guesses)
	}
	if c.Correct < 0 || c.Correct > c.Guesses {
		return fmt.Errorf("correct: must be in [0, guesses=%d], got %d", c.Guesses, c.Correct)
	}
	return nil
}

// Names of the one-run estimators, as they appear in reports.
const (
	EstimatorOneRun    = "one-run canary bound (Steinke-Nasr-Jagielski 2023, Thm 3.1; App. D for delta > 0)"
	EstimatorOneRunFDP = "one-run f-DP bound, Gaussian family (Mahloujifar-Melis-Chaudhuri 2024, audit with cap)"
	// EstimatorOneRunCeiling labels the largest one-run bound m and r
	// allow: every guess correct.
	EstimatorOneRunCeiling = "ceiling: one-run bound with every guess correct"
)

// OneRunEstimate is a one-run lower bound with everything needed to state
// what it means; it mirrors Estimate with one-run counts.
type OneRunEstimate struct {
	Kind      Kind   `json:"kind"`
	Estimator string `json:"estimator"`
	// Epsilon is the ε lower bound (for OneRunFDP: the ε(δ) of μ_lb on the
	// Gaussian curve, +Inf when δ = 0 and μ_lb > 0).
	Epsilon    float64      `json:"epsilon"`
	Delta      float64      `json:"delta"`
	Confidence float64      `json:"confidence"`
	Counts     OneRunCounts `json:"counts"`
	// Mu is μ_lb for the f-DP estimator (else 0).
	Mu float64 `json:"mu,omitempty"`
	// Assumption is non-empty when Epsilon holds only under it.
	Assumption string `json:"assumption,omitempty"`
}

// String renders the estimate with its provenance, e.g.
// "ε ≥ 2.1724 [one-run canary bound (…); confidence 0.95; δ = 0; 95/100 guesses correct, 1000 canaries]".
func (e OneRunEstimate) String() string {
	s := fmt.Sprintf("ε ≥ %s [%s; confidence %g; δ = %g; %d/%d guesses correct, %d canaries",
		FormatFloat(e.Epsilon), e.Estimator, e.Confidence, e.Delta,
		e.Counts.Correct, e.Counts.Guesses, e.Counts.Canaries)
	if e.Estimator == EstimatorOneRunFDP {
		s += fmt.Sprintf("; μ_lb = %s", FormatFloat(e.Mu))
	}
	if e.Assumption != "" {
		s += "; assumes " + e.Assumption
	}
	return s + "]"
}

// MarshalJSON encodes a OneRunEstimate, writing a +Inf ε as "+Inf", and
// the μ of the f-DP estimate even when it is 0 (μ_lb = 0 is a result).
func (e OneRunEstimate) MarshalJSON() ([]byte, error) {
	type plain OneRunEstimate
	if e.Estimator == EstimatorOneRunFDP && e.Mu == 0 {
		// The field's omitempty would drop it: written last, where a
		// non-zero μ keeps its place (the reports' bytes unchanged).
		return json.Marshal(struct {
			plain
			Epsilon JSONFloat `json:"epsilon"`
			Mu      float64   `json:"mu"`
		}{plain(e), JSONFloat(e.Epsilon), e.Mu})
	}
	return json.Marshal(struct {
		plain
		Epsilon JSONFloat `json:"epsilon"`
	}{plain(e), JSONFloat(e.Epsilon)})
}

// Estimate returns the bound as an Estimate (Estimate.Guesses holds its
// counts), the form reports of every design share.
func (e OneRunEstimate) Estimate() Estimate {
	c := e.Counts
	return Estimate{Kind: e.Kind, Estimator: e.Estimator, Epsilon: e.Epsilon, Delta: e.Delta,
		Confidence: e.Confidence, Mu: e.Mu, Assumption: e.Assumption, Guesses: &c}
}

// guessString is String for an estimate from guesses, as
// OneRunEstimate.String writes it.
func (e Estimate) guessString() string {
	return OneRunEstimate{Kind: e.Kind, Estimator: e.Estimator, Epsilon: e.Epsilon, Delta: e.Delta,
		Confidence: e.Confidence, Counts: *e.Guesses, Mu: e.Mu, Assumption: e.Assumption}.String()
}

func checkOneRun(c OneRunCounts, delta, confidence float64) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := CheckDelta(delta); err != nil {
		return err
	}
	return CheckOneRunConfidence(confidence)
}

// MinOneRunConfidence is the smallest confidence the one-run bounds take.
// As the confidence c falls the bounds grow without limit (all r guesses
// correct give about ε = ln(r/c)) and the tail probabilities they are
// solved from fall to about c: below 10⁻³⁰⁰ they would leave the normal
// range of double precision (2.2·10⁻³⁰⁸) at r = 10⁷ guesses.
const MinOneRunConfidence = 1e-300

// CheckOneRunConfidence returns an error unless confidence lies in
// [MinOneRunConfidence, 1).
func CheckOneRunConfidence(confidence float64) error {
	if !(confidence >= MinOneRunConfidence && confidence < 1) {
		return fmt.Errorf("confidence: must be in [%g, 1) for the one-run bounds, got %g", MinOneRunConfidence, confidence)
	}
	return nil
}

// complementBelow is the confidence below which the one-run bounds are
// solved from the confidence c itself rather than from α = 1 − c: once c
// is small, α = 1 − c keeps few of c's digits (none below 1.1·10⁻¹⁶, where
// α rounds to 1 and the bounds came out wrong or not at all), so the
// crossings are written as 1 − p(ε) = c (OneRunPValueComplement) and as the
// f-DP statistic summed from its start −c·r/m (oneRunFDPTestConfidence).
// At and above it the α forms are used, as jax_privacy computes them.
const complementBelow = 0.5

// maxOneRunEpsilon bounds the bracket search; no count gives an ε_lb near it
// (r = 10⁷ guesses all correct give about 16 at α = 10⁻¹⁰, and 706.9 at a
// confidence of MinOneRunConfidence; μ_lb stays below 80 there).
const maxOneRunEpsilon = 1 << 12

// OneRunPValue returns the p-value of the hypothesis "the mechanism is
// (ε, δ)-DP" given v correct out of r guesses among m canaries (Steinke,
// Nasr & Jagielski 2023): with q = e^ε/(1+e^ε) and X ~ Bin(r, q),
//
//	β = P[X ≥ v]                                           (Thm 3.1, δ = 0)
//	p = min(1, β + 2mδ · max_{1≤i≤v} P[v−i ≤ X ≤ v−1] / i)   (Thm 3.2 / App. D)
//
// the second line being the δ > 0 form computed by jax_privacy's
// _one_run_p_value. The counts must be valid; ε ≥ 0 and δ ∈ [0, 1).
func OneRunPValue(c OneRunCounts, eps, delta float64) float64 {
	m, r, v := c.Canaries, c.Guesses, c.Correct
	logq, log1mq := logLogistic(eps), logLogistic(-eps)
	beta := binomSF(r, v, logq, log1mq)
	if delta == 0 || v == 0 {
		return beta
	}
	return math.Min(1, beta+2*float64(m)*delta*math.Exp(logMaxBinomIncrement(r, v, logq, log1mq)))
}

// OneRunPValueComplement returns 1 − p for the p of OneRunPValue, from the
// lower tail P[X ≤ v−1] itself so that it keeps its relative accuracy when
// it is small (where 1 − OneRunPValue would be all rounding):
//
//	1 − p = P[X ≤ v−1] − 2mδ · max_{1≤i≤v} P[v−i ≤ X ≤ v−1] / i,
//
// negative where p is capped at 1. The counts must be valid; ε ≥ 0 and
// δ ∈ [0, 1).
func OneRunPValueComplement(c OneRunCounts, eps, delta float64) float64 {
	m, r, v := c.Canaries, c.Guesses, c.Correct
	logq, log1mq := logLogistic(eps), logLogistic(-eps)
	low := binomCDFBelow(r, v, logq, log1mq)
	if delta == 0 || v == 0 {
		return low
	}
	return low - 2*float64(m)*delta*math.Exp(logMaxBinomIncrement(r, v, logq, log1mq))
}

// OneRunEpsilon returns the ε lower bound of Steinke, Nasr & Jagielski 2023
// (Thm 3.1 for δ = 0, Thm 3.2 / App. D for δ > 0): the ε at which
// OneRunPValue crosses α = 1 − confidence, so that every smaller ε is
// rejected at level α. As in jax_privacy's _epsilon_one_run, it is 0 when
// ε = 0 is not rejected; otherwise the crossing is bracketed by doubling
// from 1 and found by Brent's method to 10⁻¹² absolute. Below a confidence
// of 1/2 the crossing is solved as OneRunPValueComplement = confidence
// (complementBelow); the confidence must be at least MinOneRunConfidence.
func OneRunEpsilon(c OneRunCounts, delta, confidence float64) (OneRunEstimate, error) {
	if err := checkOneRun(c, delta, confidence); err != nil {
		return OneRunEstimate{}, err
	}
	alpha := 1 - confidence
	est := OneRunEstimate{Kind: LowerBound, Estimator: EstimatorOneRun, Delta: delta,
		Confidence: confidence, Counts: c}
	f := func(eps float64) float64 { return alpha - OneRunPValue(c, eps, delta) }
	if confidence < complementBelow {
		f = func(eps float64) float64 { return OneRunPValueComplement(c, eps, delta) - confidence }
	}
	eps, err := crossing(f)
	if err != nil {
		return OneRunEstimate{}, fmt.Errorf("stats: one-run ε for %+v: %w", c, err)
	}
	est.Epsilon = eps
	return est, nil
}

// crossing returns 0 when f(0) ≤ 0 and otherwise the point where f turns
// from positive to non-positive, bracketed by doubling from 1.
func crossing(f func(float64) float64) (float64, error) {
	if !(f(0) > 0) {
		return 0, nil
	}
	lo, hi := 0.0, 1.0
	for f(hi) > 0 {
		lo, hi = hi, 2*hi
		if hi > maxOneRunEpsilon {
			return math.NaN(), fmt.Errorf("no crossing below %d", maxOneRunEpsilon)
		}
	}
	return numeric.Root(f, lo, hi, 1e-12)
}

// OneRunFDPTest reports by how much the guesses reject μ-GDP at level
// alpha in the "audit with cap" test of Mahloujifar, Melis & Chaudhuri 2024
// (their Alg. "audit_rh_with_cap", as in jax_privacy's _epsilon_one_run_fdp
// with the trade-off inverse x ↦ Φ(Φ⁻¹(x) − μ)): starting from
// ρ = α·v/m and η = α·(r−v)/m, for i = v−1, …, 0
//
//	η′ = max(η, Φ(Φ⁻¹(ρ) − μ)),  ρ′ = min(1, ρ + i/(r−i)·(η′ − η)),
//
// stopping early once η no longer changes; the result is ρ + η − r/m, and
// μ-GDP is rejected when it is > 0.
func OneRunFDPTest(c OneRunCounts, mu, alpha float64) float64 {
	m, r, v := float64(c.Canaries), c.Guesses, c.Correct
	rho := alpha * float64(v) / m
	eta := alpha * float64(r-v) / m
	for i := v - 1; i >= 0; i-- {
		etaNew := math.Max(eta, numeric.NormCDF(mathext.NormalQuantile(rho)-mu))
		if etaNew == eta {
			break
		}
		rho = math.Min(rho+float64(i)/float64(r-i)*(etaNew-eta), 1)
		eta = etaNew
	}
	return rho + eta - float64(r)/m
}

// OneRunPureRejected reports whether the guesses reject "(ε, δ)-DP" at
// level α = 1 − confidence in the test of OneRunPValue: p ≤ α, decided as
// 1 − p ≥ confidence (OneRunPValueComplement) below a confidence of 1/2,
// where α keeps few of the confidence's digits.
func OneRunPureRejected(c OneRunCounts, eps, delta, confidence float64) bool {
	if confidence < complementBelow {
		return OneRunPValueComplement(c, eps, delta) >= confidence
	}
	return OneRunPValue(c, eps, delta) <= 1-confidence
}

// OneRunFDPStatistic is OneRunFDPTest at level α = 1 − confidence (μ-GDP
// rejected when it is > 0), written in the confidence itself below 1/2
// (oneRunFDPTestConfidence).
func OneRunFDPStatistic(c OneRunCounts, mu, confidence float64) float64 {
	if confidence < complementBelow {
		return oneRunFDPTestConfidence(c, mu, confidence)
	}
	return OneRunFDPTest(c, mu, 1-confidence)
}

// oneRunFDPTestConfidence is OneRunFDPTest at α = 1 − confidence written
// for a small confidence c, where α keeps few of c's digits: it follows
// 1 − ρ (from (m − v + c·v)/m) instead of ρ, with Φ⁻¹(ρ) = −Φ⁻¹(1 − ρ), and
// sums the statistic ρ + η − r/m from its start −c·r/m by the steps of ρ
// and η, so that neither is lost against a ρ near 1.
func oneRunFDPTestConfidence(c OneRunCounts, mu, confidence float64) float64 {
	m, r, v := float64(c.Canaries), c.Guesses, c.Correct
	rhoC := (m - float64(v) + confidence*float64(v)) / m // 1 − ρ
	eta := (1 - confidence) * float64(r-v) / m
	stat := -confidence * float64(r) / m // ρ + η − r/m
	for i := v - 1; i >= 0; i-- {
		etaNew := math.Max(eta, numeric.NormCDF(-mathext.NormalQuantile(rhoC)-mu))
		if etaNew == eta {
			break
		}
		dEta := etaNew - eta
		dRho := math.Min(float64(i)/float64(r-i)*dEta, rhoC)
		rhoC -= dRho
		stat += dRho + dEta
		eta = etaNew
	}
	return stat
}

// OneRunFDP returns μ_lb — the largest μ whose μ-GDP claim the guesses
// reject at α = 1 − confidence in OneRunFDPTest (found like OneRunEpsilon's
// crossing, but in μ; below a confidence of 1/2 with the test written in
// the confidence, oneRunFDPTestConfidence) — and, in Epsilon, the ε(δ) that μ_lb-GDP implies
// (GDPEpsilon; +Inf when δ = 0 and μ_lb > 0). The ε holds only if the
// mechanism's trade-off curve is Gaussian; Assumption says so. jax_privacy's
// _epsilon_one_run_fdp searches the same test in ε, mapping ε to μ by the
// analytic Gaussian mechanism (Balle & Wang 2018), whose profile is the GDP
// profile; it reports 0 where μ_lb-GDP is already (0, δ)-DP, as does this.
func OneRunFDP(c OneRunCounts, delta, confidence float64) (OneRunEstimate, error) {
	if err := checkOneRun(c, delta, confidence); err != nil {
		return OneRunEstimate{}, err
	}
	mu, err := crossing(func(mu float64) float64 { return OneRunFDPStatistic(c, mu, confidence) })
	if err != nil {
		return OneRunEstimate{}, fmt.Errorf("stats: one-run μ for %+v: %w", c, err)
	}
	eps := 0.0
	switch {
	case delta > 0:
		if eps, err = GDPEpsilon(mu, delta); err != nil {
			return OneRunEstimate{}, err
		}
	case mu > 0:
		eps = math.Inf(1) // μ-GDP with μ > 0 is not (ε, 0)-DP for any finite ε
	}
	return OneRunEstimate{Kind: LowerBound, Estimator: EstimatorOneRunFDP, Epsilon: eps,
		Delta: delta, Confidence: confidence, Counts: c, Mu: mu, Assumption: GDPAssumption}, nil
}

// logLogistic returns ln(e^x/(1+e^x)) = −ln(1+e^{−x}).
func logLogistic(x float64) float64 { return -numeric.Log1pExp(-x) }

// regIncBetaMaxTrials is the largest r for which binomSF uses gonum's
// regularized incomplete beta. Beyond it gonum's continued fraction (capped
// at 300 terms) loses accuracy near the mean: at r = 10⁷, q = 1/2,
// I_{1/2}(5·10⁶, 5·10⁶+1) comes out 1.3·10⁻³ below scipy's binom.sf, while
// up to r = 10⁵ it agrees with scipy to 5·10⁻¹¹ (checked in the tests).
const regIncBetaMaxTrials = 100000

// binomSF returns P[X ≥ v] for X ~ Bin(r, q), q given as ln q and ln(1−q).
// Up to regIncBetaMaxTrials it is I_q(v, r−v+1) (gonum); above, a sum of
// the pmf (binomLogPMF) outward from v, on the side of the mean where the
// terms decrease, with the terms scaled by the first so none underflows.
func binomSF(r, v int, logq, log1mq float64) float64 {
	if v <= 0 {
		return 1
	}
	if v > r {
		return 0
	}
	if r <= regIncBetaMaxTrials {
		return mathext.RegIncBeta(float64(v), float64(r-v+1), math.Exp(logq))
	}
	return sumSF(r, v, logq, log1mq)
}

// sumSF is binomSF's summation route (any r, 1 ≤ v ≤ r).
func sumSF(r, v int, logq, log1mq float64) float64 {
	mode := math.Floor(float64(r+1) * math.Exp(logq))
	if float64(v) > mode { // terms decrease upward from v
		return math.Exp(logSumUp(r, v, logq, log1mq))
	}
	// v ≤ mode: 1 − P[X ≤ v−1], terms decrease downward from v−1
	return -math.Expm1(logSumDown(r, v, logq, log1mq))
}

// logSumUp returns ln P[X ≥ v] for X ~ Bin(r, q) as a sum of the pmf from
// v upward, for v above the mode (where the terms decrease), the terms
// scaled by the first so none underflows.
func logSumUp(r, v int, logq, log1mq float64) float64 {
	// ratio of pmf(j+1)/pmf(j) = (r−j)/(j+1) · q/(1−q)
	lodds := logq - log1mq
	first := binomLogPMF(r, v, logq, log1mq)
	sum, term := 1.0, 1.0
	for j := v; j < r; j++ {
		term *= math.Exp(math.Log(float64(r-j)) - math.Log(float64(j+1)) + lodds)
		sum += term
		if term < 1e-17*sum {
			break
		}
	}
	return first + math.Log(sum)
}

// logSumDown returns ln P[X ≤ v−1] for X ~ Bin(r, q), 1 ≤ v ≤ r, as a sum
// of the pmf from v−1 downward, for v at or below the mode (where the
// terms decrease), the terms scaled by the first.
func logSumDown(r, v int, logq, log1mq float64) float64 {
	lodds := logq - log1mq
	first := binomLogPMF(r, v-1, logq, log1mq)
	sum, term := 1.0, 1.0
	for j := v - 1; j > 0; j-- {
		term *= math.Exp(math.Log(float64(j)) - math.Log(float64(r-j+1)) - lodds)
		sum += term
		if term < 1e-17*sum {
			break
		}
	}
	return first + math.Log(sum)
}

// binomCDFBelow returns P[X ≤ v−1] = 1 − binomSF for X ~ Bin(r, q), q
// given as ln q and ln(1−q), to full relative accuracy when it is small:
// I_{1−q}(r−v+1, v) (gonum) up to regIncBetaMaxTrials, above that 1 − q^r
// for v = r and otherwise the sum of binomSF's route on the side of the
// mode where it is small (to about 10⁻¹⁰ relative at r = 10⁷, the
// accuracy of binomLogPMF there).
func binomCDFBelow(r, v int, logq, log1mq float64) float64 {
	if v <= 0 {
		return 0
	}
	if v > r {
		return 1
	}
	if r <= regIncBetaMaxTrials {
		return mathext.RegIncBeta(float64(r-v+1), float64(v), math.Exp(log1mq))
	}
	if v == r { // 1 − q^r, exactly (the ceiling's case)
		return -math.Expm1(float64(r) * logq)
	}
	if mode := math.Floor(float64(r+1) * math.Exp(logq)); float64(v) > mode {
		return -math.Expm1(logSumUp(r, v, logq, log1mq))
	}
	return math.Exp(logSumDown(r, v, logq, log1mq))
}

// logMaxBinomIncrement returns ln max_{1≤i≤v} P[v−i ≤ X ≤ v−1]/i for
// X ~ Bin(r, q), v ≥ 1: the partial sums of a_i = pmf(v−i) are kept in
// log space. Once the pmf falls as j = v−i decreases (below the mode) and
// the next a_i is at most the running mean, no later mean can be larger
// (each later a_i is smaller than every later mean), so the scan stops.
func logMaxBinomIncrement(r, v int, logq, log1mq float64) float64 {
	lodds := logq - log1mq
	la := binomLogPMF(r, v-1, logq, log1mq) // ln a_1
	logS := la
	best := la
	for i := 1; i < v; i++ {
		j := v - i // a_{i+1} = pmf(j−1) = pmf(j)·j/(r−j+1)·(1−q)/q
		step := math.Log(float64(j)) - math.Log(float64(r-j+1)) - lodds
		la += step
		mean := logS - math.Log(float64(i))
		if step <= 0 && la <= mean {
			break
		}
		logS = numeric.LogAddExp(logS, la)
		if m := logS - math.Log(float64(i+1)); m > best {
			best = m
		}
	}
	return best
}

// binomLogPMF returns ln P[X = k] for X ~ Bin(n, q) by Loader's saddle-point
// form (C. Loader, "Fast and accurate computation of binomial
// probabilities", 2000; R's dbinom_raw), which keeps its relative accuracy
// for n up to 10⁷ and beyond where differences of log-gammas lose ~10⁻⁸.
func binomLogPMF(n, k int, logq, log1mq float64) float64 {
	if k == 0 {
		return float64(n) * log1mq
	}
	if k == n {
		return float64(n) * logq
	}
	nf, kf := float64(n), float64(k)
	lc := stirlerr(nf) - stirlerr(kf) - stirlerr(nf-kf) -
		bd0(kf, nf*math.Exp(logq)) - bd0(nf-kf, nf*math.Exp(log1mq))
	lf := math.Log(2*math.Pi) + math.Log(kf) + math.Log1p(-kf/nf)
	return lc - 0.5*lf
}

// stirlerr returns ln(n!) − ln(√(2π n) (n/e)ⁿ) (Loader 2000).
func stirlerr(n float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if n <= 15 {
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
	}
	nn := n * n
	switch {
	case n > 500:
		return (s0 - s1/nn) / n
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / n
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// bd0 returns x·ln(x/np) + np − x without cancellation (Loader 2000).
func bd0(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/np) + np - x
}
