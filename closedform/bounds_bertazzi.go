package closedform

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Upper bounds of Bertazzi, Johnston, Roberts & Durmus, "Differential
// privacy guarantees of Markov chain Monte Carlo algorithms", ICML 2025.
//
// Every bound of §4–5 has the same shape: a constant C such that the
// mechanism is (α, αC/4)-RDP for every α > 1 and (ε_δ, δ)-DP with
// ε_δ = C/4 + sqrt(C ln(1/δ)) (the Girsanov argument of Lemmas 4.1–4.2 with
// a drift perturbation bounded by K over a time T gives C = βK²T). Two
// statements are printed differently from what their proofs establish; the
// Variant argument selects the reading, see Printed and Conservative.

// Variant selects how a theorem is read where its printed statement and its
// proof disagree (docs/derivations/paper-readings.md §1).
type Variant string

const (
	// Printed takes each theorem exactly as stated in the paper.
	Printed Variant = "as printed"
	// Conservative never gives a smaller ε(δ) or RDP curve than Printed. It
	// repairs the two places where the statement is smaller than what the
	// proof supports: (i) the drift difference of ULA and noisy SGD entering
	// Prop. 4.5 is 2c, not c (App. C.1 bounds |∇V_D(x) − ∇V_D′(y)| by 2c:
	// "|e_{n+1}| ≤ (1 − γa + γ²L²/2)|e_n| + 2γc" and "C = 2c/(a − γL²/2)"),
	// so the constant of Thms 5.2 and 5.6 is
	// β(C(L+1) + 2c)² = 4βc²((L+1)/(a − γL²/2) + 1)² instead of
	// βc²(2(L+1)/(a − γL²/2) + 1)² (for Thm 5.7 both carry a factor 1/s²,
	// App. C.3 having 2c/s in place of 2c); (ii) Thms 5.7 and 5.8 print
	// ε_δ = C + sqrt(C ln(1/δ)) where Prop. 4.5/4.6 give C/4 + sqrt(C ln(1/δ));
	// the conservative reading takes the larger of the printed form and the
	// proof's form. Where the statement matches its proof (Props 4.5–4.6,
	// Thm 5.4) the two readings coincide.
	Conservative Variant = "conservative"
)

// Release descriptions used by the Bertazzi guarantees.
const (
	relFinalState = "final state x_n"
	relPath       = "path (x_1, …, x_n)"
)

// ULAParams is a configuration of the unadjusted Langevin algorithm of
// Bertazzi et al. eq. 12,
//
//	x_{k+1} = x_k − γ∇U_D(x_k) + sqrt(2γ)·z_{k+1},  π_D ∝ exp(−U_D),
//
// started at a data-independent x_0, together with the constants of the
// model. A constant left at zero is unknown, and the theorems that need it
// report that they do not apply.
type ULAParams struct {
	// Gamma is the step size γ > 0.
	Gamma float64
	// N is the number of iterations n ≥ 1.
	N int
	// GradBound is c of Assumption 5.1: with U_D = V_D + K, the data part
	// satisfies sup_x |∇V_D(x)| ≤ c for every dataset D. V_D is the whole
	// data term (for a posterior, the sum over all records).
	GradBound float64
	// Lipschitz is L of Assumption 5.1: ∇K is L-Lipschitz.
	Lipschitz float64
	// Convexity is a of Assumption 5.1 (eq. 13): K is a-strongly convex.
	Convexity float64
	// DiffBound is c of Assumption 5.3: sup_x |∇U_D(x) − ∇U_D′(x)| ≤ c for
	// all adjacent D, D′. Zero means 2·GradBound, which Assumption 5.1
	// implies.
	DiffBound float64
}

// SGLDParams is a configuration of noisy SGD / SGLD, Bertazzi et al. eq. 15,
//
//	x_{k+1} = x_k − (γ/s)·Σ_{i∈A_{k+1}} ∇ℓ(x_k, d_i) + sqrt(2γ/β)·z_{k+1},
//
// with A_k uniform subsets of size s of the m records, ℓ(x, d) = v(x, d) + k(x)
// (Assumption 5.5), started at a data-independent x_0. A constant left at
// zero is unknown, and the theorems that need it report that they do not
// apply.
//
// The SGLD of Welling & Teh is eq. 15 after a change of parameters; see
// WellingTehSGLD.
type SGLDParams struct {
	// Gamma is the step size γ > 0.
	Gamma float64
	// N is the number of iterations n ≥ 1.
	N int
	// Beta is the inverse temperature β > 0 of eq. 15.
	Beta float64
	// BatchSize is s, 1 ≤ s ≤ DatasetSize.
	BatchSize int
	// DatasetSize is m, the number of records.
	DatasetSize int
	// GradBound is c of Assumption 5.5: sup_x |∇_x v(x, d)| ≤ c for every
	// record d.
	GradBound float64
	// ConstantGrad states that ∇_x v(x, d) does not depend on x (the
	// extra assumption of Thm 5.7).
	ConstantGrad bool
	// Lipschitz is L of Assumption 5.5: ∇k is L-Lipschitz.
	Lipschitz float64
	// Convexity is a of Assumption 5.5: k is a-strongly convex.
	Convexity float64
	// DiffBound is c of Thm 5.8: sup_x |∇ℓ(x, d) − ∇ℓ(x, d′)| ≤ c for all
	// records d, d′. Zero means 2·GradBound, which Assumption 5.5 implies.
	DiffBound float64
}

func checkPositive(name string, x float64) error {
	if !(x > 0) || math.IsInf(x, 1) {
		return fmt.Errorf("%s: must be finite and > 0, got %g", name, x)
	}
	return nil
}

func checkNonNegative(name string, x float64) error {
	if !(x >= 0) || math.IsInf(x, 1) {
		return fmt.Errorf("%s: must be finite and ≥ 0, got %g", name, x)
	}
	return nil
}

func checkVariant(v Variant) error {
	if v != Printed && v != Conservative {
		return fmt.Errorf("variant: must be %q or %q, got %q", Printed, Conservative, v)
	}
	return nil
}

// checkConvexity validates L and a together: both unknown, or both > 0 with
// L ≥ a (a ∇K that is a-strongly monotone and L-Lipschitz has L ≥ a, App. C.1).
func checkConvexity(l, a float64) error {
	if err := checkNonNegative("L", l); err != nil {
		return err
	}
	if err := checkNonNegative("a", a); err != nil {
		return err
	}
	if l > 0 && a > 0 && l < a {
		return fmt.Errorf("L: must be ≥ a (a gradient that is a-strongly monotone and L-Lipschitz has L ≥ a), got L = %g, a = %g", l, a)
	}
	return nil
}

// Validate checks the configuration; the error names the field and its range.
func (p ULAParams) Validate() error {
	if err := checkPositive("gamma", p.Gamma); err != nil {
		return err
	}
	if p.N < 1 {
		return fmt.Errorf("n: must be ≥ 1, got %d", p.N)
	}
	if err := checkNonNegative("c", p.GradBound); err != nil {
		return err
	}
	if err := checkNonNegative("c (Assumption 5.3)", p.DiffBound); err != nil {
		return err
	}
	return checkConvexity(p.Lipschitz, p.Convexity)
}

// Validate checks the configuration; the error names the field and its range.
func (p SGLDParams) Validate() error {
	if p.DatasetSize < 1 {
		return fmt.Errorf("m: dataset size must be ≥ 1, got %d", p.DatasetSize)
	}
	if p.BatchSize < 1 || p.BatchSize > p.DatasetSize {
		return fmt.Errorf("s: batch size must be in [1, m = %d], got %d", p.DatasetSize, p.BatchSize)
	}
	if err := checkPositive("gamma", p.Gamma); err != nil {
		return err
	}
	if p.N < 1 {
		return fmt.Errorf("n: must be ≥ 1, got %d", p.N)
	}
	if err := checkPositive("beta", p.Beta); err != nil {
		return err
	}
	if err := checkNonNegative("c", p.GradBound); err != nil {
		return err
	}
	if err := checkNonNegative("c (Thm 5.8)", p.DiffBound); err != nil {
		return err
	}
	return checkConvexity(p.Lipschitz, p.Convexity)
}

// WellingTehSGLD is SGLD as Welling & Teh (2011) write it, and as the
// samplers of this project run it (docs/derivations/paper-readings.md §2):
// with step η, m records,
// batches A of size s,
//
//	θ ← θ + (η/2)(∇log p(θ) + (m/s)Σ_{i∈A}∇log p(d_i|θ)) + N(0, ηI).
//
// This is Bertazzi et al. eq. 15 with γ = ηm/2, β = m, v(θ, d) = −log p(d|θ)
// and k(θ) = −log p(θ)/m; Params does the conversion.
type WellingTehSGLD struct {
	// Eta is the step size η > 0 (noise variance η, drift factor η/2).
	Eta float64
	// N is the number of iterations.
	N int
	// BatchSize is s and DatasetSize is m.
	BatchSize, DatasetSize int
	// LikGradBound bounds |∇_θ log p(d|θ)| over θ and records (c of
	// Assumption 5.5); 0 when unknown.
	LikGradBound float64
	// LikGradDiff optionally bounds |∇_θ log p(d|θ) − ∇_θ log p(d′|θ)| over θ
	// and records (c of Thm 5.8); 0 means 2·LikGradBound.
	LikGradDiff float64
	// ConstantLikGrad states that ∇_θ log p(d|θ) does not depend on θ.
	ConstantLikGrad bool
	// PriorLipschitz and PriorConvexity are L and a of −log p(θ): its
	// gradient is L-Lipschitz and it is a-strongly convex; 0 when unknown.
	PriorLipschitz, PriorConvexity float64
}

// Params returns the eq. 15 configuration: γ = ηm/2, β = m, c unchanged,
// L and a of k = −log p/m equal to the prior's divided by m. The step-size
// condition γ < 2a/L² of Thms 5.6–5.7 then reads η < 4a_prior/L_prior².
func (w WellingTehSGLD) Params() SGLDParams {
	m := float64(w.DatasetSize)
	return SGLDParams{
		Gamma: w.Eta * m / 2, N: w.N, Beta: m,
		BatchSize: w.BatchSize, DatasetSize: w.DatasetSize,
		GradBound: w.LikGradBound, ConstantGrad: w.ConstantLikGrad, DiffBound: w.LikGradDiff,
		Lipschitz: w.PriorLipschitz / m, Convexity: w.PriorConvexity / m,
	}
}

// diffBound returns the drift-difference constant of the path theorems.
func diffBound(diff, grad float64) float64 {
	if diff > 0 {
		return diff
	}
	return 2 * grad
}

// PrintedFormProfile is the (ε, δ) family Bertazzi et al. print in Thms 5.7
// and 5.8, ε_δ = C + sqrt(C ln(1/δ)) for δ ∈ (0, 1), as a privacy profile:
// δ(ε) = exp(−(ε − C)²/C) for ε > C and 1 below. It is larger than
// CommonFormProfile(C) everywhere.
func PrintedFormProfile(c float64) func(float64) float64 {
	return func(eps float64) float64 {
		if eps <= c {
			return 1
		}
		d := eps - c
		return math.Exp(-d * d / c)
	}
}

// commonFormEpsilon is ε_δ = C/4 + sqrt(C ln(1/δ)) (Bertazzi et al. Lemma 4.1
// with the tail bound of Lemma B.3).
func commonFormEpsilon(c float64) func(float64) float64 {
	return func(delta float64) float64 { return c/4 + math.Sqrt(-c*math.Log(delta)) }
}

// printedFormEpsilon is ε_δ = C + sqrt(C ln(1/δ)) (Thms 5.7, 5.8 as printed).
func printedFormEpsilon(c float64) func(float64) float64 {
	return func(delta float64) float64 { return c + math.Sqrt(-c*math.Log(delta)) }
}

// linearRDP is the RDP curve α ↦ αC/4 of every Bertazzi bound.
func linearRDP(c float64) stats.RDPCurve {
	return func(a float64) float64 { return a * c / 4 }
}

// girsanovGuarantee builds an applicable Guarantee of the common form with
// constant c (RDP αc/4). When printedC > 0 the ε_δ of the printed form with
// constant printedC is used instead (printed reading of Thms 5.7–5.8) or in
// addition, taking the larger (conservative reading).
func girsanovGuarantee(source string, v Variant, release string, checks []Check, c float64, printedC float64, note string) (Guarantee, error) {
	if math.IsInf(c, 0) || math.IsNaN(c) || math.IsInf(printedC, 0) {
		return Guarantee{}, fmt.Errorf("%s: the constant overflows float64 (C = %g); check the model constants", source, c)
	}
	g := Guarantee{
		Source: source, Variant: string(v), Release: release, Checks: checks,
		Applies: true, RDP: linearRDP(c), Note: note,
	}
	switch {
	case printedC == 0:
		g.Profile, g.EpsilonAt = CommonFormProfile(c), commonFormEpsilon(c)
		g.setSpec(CommonFormSpec(c))
	case v == Printed:
		g.Profile, g.EpsilonAt = PrintedFormProfile(printedC), printedFormEpsilon(printedC)
		g.setSpec(PrintedFormSpec(printedC))
	default:
		g.setSpec(MaxSpec(PrintedFormSpec(printedC), CommonFormSpec(c)))
		p1, p2 := PrintedFormProfile(printedC), CommonFormProfile(c)
		e1, e2 := printedFormEpsilon(printedC), commonFormEpsilon(c)
		g.Profile = func(eps float64) float64 { return math.Max(p1(eps), p2(eps)) }
		g.EpsilonAt = func(delta float64) float64 { return math.Max(e1(delta), e2(delta)) }
	}
	return g, nil
}

// finish returns g built by build when every check holds, else NotApplicable.
func finish(source string, v Variant, release string, checks []Check, build func() (Guarantee, error)) (Guarantee, error) {
	if ok, _ := allHold(checks); !ok {
		return NotApplicable(source, string(v), release, checks), nil
	}
	return build()
}

func knownCheck(name string, vals ...float64) Check {
	ok := true
	for _, x := range vals {
		ok = ok && x > 0
	}
	detail := "given"
	if !ok {
		detail = "a constant is 0 (unknown)"
	}
	return Check{Name: name, Holds: ok, Detail: detail}
}

func stepCheck(gamma, l, a float64) Check {
	lim := 2 * a / (l * l)
	return Check{Name: "γ < 2a/L²", Holds: l > 0 && a > 0 && gamma < lim,
		Detail: fmt.Sprintf("γ = %g, 2a/L² = %g", gamma, lim)}
}

func horizonCheck(gamma float64, n int) Check {
	t := float64(n) * gamma
	return Check{Name: "nγ ≥ 1", Holds: t >= 1,
		Detail: fmt.Sprintf("nγ = %g (the proof of Prop. 4.5 takes T = nγ ≥ 1; for T < 1 it defers to the path bound)", t)}
}

// finalStateConstants returns the constants of Thms 5.2, 5.6 and 5.7,
// C = (βc²/s²)·f², with f = 2(L+1)/(a − γL²/2) + 1 as printed and
// f = 2((L+1)/(a − γL²/2) + 1) in the conservative reading.
func finalStateConstants(c, beta, s, gamma, l, a float64) (printed, cons float64) {
	den := a - gamma*l*l/2
	fp, fc := 2*(l+1)/den+1, 2*((l+1)/den+1)
	base := beta * c * c / (s * s)
	return base * fp * fp, base * fc * fc
}

// pick returns the constant of the chosen reading.
func pick(v Variant, printed, cons float64) float64 {
	if v == Conservative {
		return cons
	}
	return printed
}

// finalStateChecks are the assumptions of the final-state theorems 5.2 and
// 5.6 (5.7 adds one).
func finalStateChecks(assumption string, c, l, a, gamma float64, n int) []Check {
	return []Check{
		knownCheck("c, L, a known ("+assumption+")", c, l, a),
		stepCheck(gamma, l, a),
		horizonCheck(gamma, n),
	}
}

// BertazziProp45 is Bertazzi et al. Prop. 4.5 (privacy of the final value
// X_T of the diffusion eq. 7, uniform in T): if the drifts satisfy
// |f_D(x, s) − f_D′(y, s)| ≤ L|x − y| + c (eq. 8) and the synchronously
// coupled processes stay within sup_t |X_t^D − X_t^D′| ≤ C (eq. 9), then
// X_T is (α, αC₂/4)-RDP and (C₂/4 + sqrt(C₂ ln(1/δ)), δ)-DP with
// C₂ = β(C(L+1) + c)². Here bigC is C and c the drift constant of eq. 8.
// The proof (App. B.6) covers T ≥ 1 and defers T < 1 to Prop. 4.6, whose
// constant c²βT is then smaller, so the bound holds for every T > 0.
func BertazziProp45(c, l, bigC, beta float64) (Guarantee, error) {
	for _, f := range []struct {
		n string
		x float64
	}{{"c", c}, {"L", l}, {"C", bigC}} {
		if err := checkNonNegative(f.n, f.x); err != nil {
			return Guarantee{}, err
		}
	}
	if err := checkPositive("beta", beta); err != nil {
		return Guarantee{}, err
	}
	k := bigC*(l+1) + c
	return girsanovGuarantee("Bertazzi et al. 2025, Prop. 4.5", "", relFinalState, nil, beta*k*k, 0, "")
}

// BertazziProp46 is Bertazzi et al. Prop. 4.6 (privacy of the path of the
// diffusion eq. 7 on [0, T]): if |f_D(x, η) − f_D′(x, η)| ≤ c (eq. 10), the
// path is (α, αC₁/4)-RDP and (C₁/4 + sqrt(C₁ ln(1/δ)), δ)-DP with
// C₁(T) = c²βT (proof in App. B.5).
func BertazziProp46(c, beta, t float64) (Guarantee, error) {
	if err := checkNonNegative("c", c); err != nil {
		return Guarantee{}, err
	}
	if err := checkPositive("beta", beta); err != nil {
		return Guarantee{}, err
	}
	if err := checkPositive("T", t); err != nil {
		return Guarantee{}, err
	}
	return girsanovGuarantee("Bertazzi et al. 2025, Prop. 4.6", "", relPath, nil, c*c*beta*t, 0, "")
}

// BertazziThm52 is Bertazzi et al. Thm 5.2: under Assumption 5.1 and
// γ ∈ (0, 2a/L²), the n-th state of ULA is (α, αC₃/4)-RDP and
// (C₃/4 + sqrt(C₃ ln(1/δ)), δ)-DP, uniformly in n, with
//
//	C₃ = c²(2(L+1)/(a − γL²/2) + 1)²                   (Printed)
//	C₃ = 4c²((L+1)/(a − γL²/2) + 1)²                   (Conservative)
//
// The conservative constant is Prop. 4.5 with the drift constant 2c that
// App. C.1 derives (|∇V_D(x) − ∇V_D′(y)| ≤ 2c) and C = 2c/(a − γL²/2)
// (eq. 25). Checks: the constants are known, γ < 2a/L², nγ ≥ 1.
func BertazziThm52(p ULAParams, v Variant) (Guarantee, error) {
	if err := p.Validate(); err != nil {
		return Guarantee{}, err
	}
	if err := checkVariant(v); err != nil {
		return Guarantee{}, err
	}
	const src = "Bertazzi et al. 2025, Thm 5.2 (ULA)"
	checks := finalStateChecks("Assumption 5.1", p.GradBound, p.Lipschitz, p.Convexity, p.Gamma, p.N)
	return finish(src, v, relFinalState, checks, func() (Guarantee, error) {
		pr, co := finalStateConstants(p.GradBound, 1, 1, p.Gamma, p.Lipschitz, p.Convexity)
		return girsanovGuarantee(src, v, relFinalState, checks, pick(v, pr, co), 0, "")
	})
}

// BertazziThm54 is Bertazzi et al. Thm 5.4: under Assumption 5.3
// (|∇U_D − ∇U_D′| ≤ c) the path (x_1, …, x_n) of ULA is (α, αC₅/4)-RDP and
// (C₅/4 + sqrt(C₅ ln(1/δ)), δ)-DP with C₅(n) = nγc², for any step size.
// The statement matches its proof (Prop. 4.6 with β = 1, T = nγ), so both
// variants give the same value. c is p.DiffBound, or 2·p.GradBound.
func BertazziThm54(p ULAParams, v Variant) (Guarantee, error) {
	if err := p.Validate(); err != nil {
		return Guarantee{}, err
	}
	if err := checkVariant(v); err != nil {
		return Guarantee{}, err
	}
	const src = "Bertazzi et al. 2025, Thm 5.4 (ULA)"
	c := diffBound(p.DiffBound, p.GradBound)
	checks := []Check{knownCheck("c known (Assumption 5.3)", c)}
	note := ""
	if p.DiffBound == 0 && c > 0 {
		note = "c = 2·c(Assumption 5.1), since |∇V_D − ∇V_D′| ≤ 2c"
	}
	return finish(src, v, relPath, checks, func() (Guarantee, error) {
		return girsanovGuarantee(src, v, relPath, checks, float64(p.N)*p.Gamma*c*c, 0, note)
	})
}

// BertazziThm56 is Bertazzi et al. Thm 5.6: under Assumption 5.5 and
// γ ∈ (0, 2a/L²), the n-th state of noisy SGD (eq. 15) with batches of any
// size s ≤ m is (α, αC₆/4)-RDP and (C₆/4 + sqrt(C₆ ln(1/δ)), δ)-DP with
//
//	C₆ = c²β(2(L+1)/(a − γL²/2) + 1)²                  (Printed)
//	C₆ = 4c²β((L+1)/(a − γL²/2) + 1)²                  (Conservative)
//
// The conservative constant exists for the reason given for Thm 5.2: App.
// C.2 reuses eq. 25, C = 2c/(a − γL²/2), and the per-record gradient
// difference |∇v(x, d_i) − ∇v(y, d′_i)| ≤ 2c enters eq. 8.
func BertazziThm56(p SGLDParams, v Variant) (Guarantee, error) {
	if err := p.Validate(); err != nil {
		return Guarantee{}, err
	}
	if err := checkVariant(v); err != nil {
		return Guarantee{}, err
	}
	const src = "Bertazzi et al. 2025, Thm 5.6 (noisy SGD)"
	checks := finalStateChecks("Assumption 5.5", p.GradBound, p.Lipschitz, p.Convexity, p.Gamma, p.N)
	return finish(src, v, relFinalState, checks, func() (Guarantee, error) {
		pr, co := finalStateConstants(p.GradBound, p.Beta, 1, p.Gamma, p.Lipschitz, p.Convexity)
		return girsanovGuarantee(src, v, relFinalState, checks, pick(v, pr, co), 0, "")
	})
}

// BertazziThm57 is Bertazzi et al. Thm 5.7: in the setting of Thm 5.6 with
// ∇_x v(x, d) constant in x, the n-th state of noisy SGD is
// (α, αC₇/4)-RDP and, as printed, (C₇ + sqrt(C₇ ln(1/δ)), δ)-DP with
// C₇ = (c²β/s²)(2(L+1)/(a − γL²/2) + 1)².
//
// The proof (App. C.3) bounds the drift difference by 2c/s and the distance
// by C = 2c/(s(a − γL²/2)); Prop. 4.5 then gives the common form
// C/4 + sqrt(C ln(1/δ)) with C = (4c²β/s²)((L+1)/(a − γL²/2) + 1)². The
// Conservative variant uses that constant for the RDP curve and takes, for
// each δ, the larger of the printed ε_δ and the common form with it. The
// Printed variant reports the printed ε_δ; its printed RDP curve αC₇/4
// alone would convert (Mironov Prop. 3) to the smaller C₇/4 + sqrt(C₇ ln(1/δ)).
func BertazziThm57(p SGLDParams, v Variant) (Guarantee, error) {
	if err := p.Validate(); err != nil {
		return Guarantee{}, err
	}
	if err := checkVariant(v); err != nil {
		return Guarantee{}, err
	}
	const src = "Bertazzi et al. 2025, Thm 5.7 (noisy SGD, constant data gradient)"
	checks := append(finalStateChecks("Assumption 5.5", p.GradBound, p.Lipschitz, p.Convexity, p.Gamma, p.N),
		Check{Name: "∇_x v(x, d) constant in x", Holds: p.ConstantGrad, Detail: fmt.Sprintf("ConstantGrad = %v", p.ConstantGrad)})
	return finish(src, v, relFinalState, checks, func() (Guarantee, error) {
		pr, co := finalStateConstants(p.GradBound, p.Beta, float64(p.BatchSize), p.Gamma, p.Lipschitz, p.Convexity)
		if v == Printed {
			return girsanovGuarantee(src, v, relFinalState, checks, pr, pr,
				"Profile is the printed ε_δ = C₇ + sqrt(C₇ ln(1/δ)); the printed RDP curve αC₇/4 alone converts to C₇/4 + sqrt(C₇ ln(1/δ))")
		}
		return girsanovGuarantee(src, v, relFinalState, checks, co, pr,
			"max of the printed ε_δ and Prop. 4.5's common form with drift constant 2c/s")
	})
}

// BertazziThm58 is Bertazzi et al. Thm 5.8: if |∇ℓ(x, d) − ∇ℓ(x, d′)| ≤ c
// for all records, the path (x_1, …, x_n) of noisy SGD is (α, αC₈/4)-RDP
// and, as printed, (C₈ + sqrt(C₈ ln(1/δ)), δ)-DP with C₈(n) = βc²nγ/s².
//
// The constant matches the proof (App. C.4: drift difference c/s, then
// Prop. 4.6 over T = nγ), which yields the smaller common form
// C₈/4 + sqrt(C₈ ln(1/δ)); the printed ε_δ lacks the /4 and is the larger of
// the two, so the Conservative variant equals the Printed one here. c is
// p.DiffBound, or 2·p.GradBound.
func BertazziThm58(p SGLDParams, v Variant) (Guarantee, error) {
	if err := p.Validate(); err != nil {
		return Guarantee{}, err
	}
	if err := checkVariant(v); err != nil {
		return Guarantee{}, err
	}
	const src = "Bertazzi et al. 2025, Thm 5.8 (noisy SGD)"
	c := diffBound(p.DiffBound, p.GradBound)
	checks := []Check{knownCheck("c known (Thm 5.8: |∇ℓ(x,d) − ∇ℓ(x,d′)| ≤ c)", c)}
	note := "Profile is the printed ε_δ = C₈ + sqrt(C₈ ln(1/δ)), larger than the C₈/4 + sqrt(C₈ ln(1/δ)) that Prop. 4.6 gives"
	if p.DiffBound == 0 && c > 0 {
		note += "; c = 2·c(Assumption 5.5)"
	}
	return finish(src, v, relPath, checks, func() (Guarantee, error) {
		s := float64(p.BatchSize)
		c8 := p.Beta * c * c * float64(p.N) * p.Gamma / (s * s)
		return girsanovGuarantee(src, v, relPath, checks, c8, c8, note)
	})
}

// CombineMin returns the guarantee that keeps, at every ε, the smallest δ
// of the applicable guarantees gs (and at every order the smallest RDP
// value): a mechanism that is (ε, δ₁)-DP and (ε, δ₂)-DP is (ε, min)-DP.
// All of gs must cover the same release, or a release the others are a
// post-processing of (the final state is a function of the path). When
// none applies the result does not apply and lists every check.
func CombineMin(source, release string, gs ...Guarantee) Guarantee {
	var app []Guarantee
	var checks []Check
	var used string
	for _, g := range gs {
		for _, c := range g.Checks {
			checks = append(checks, Check{Name: g.Source + ": " + c.Name, Holds: c.Holds, Detail: c.Detail})
		}
		if g.Applies {
			app = append(app, g)
			if used != "" {
				used += "; "
			}
			used += g.Source
		}
	}
	out := Guarantee{Source: source, Release: release, Checks: checks}
	if len(gs) > 0 {
		out.Variant = gs[0].Variant
	}
	if len(app) == 0 {
		out.Reason = "no constituent theorem applies"
		for _, g := range gs {
			out.Reason += "; " + g.Source + ": " + g.Reason
		}
		return out
	}
	out.Applies = true
	out.Note = "pointwise minimum over: " + used
	out.Profile = func(eps float64) float64 {
		m := 1.0
		for _, g := range app {
			m = math.Min(m, g.Profile(eps))
		}
		return m
	}
	// The same fold as data: min over (1, the constituents' profiles).
	specs := []ProfileSpec{ConstSpec(1)}
	for _, g := range app {
		if g.Spec == nil {
			specs = nil
			break
		}
		specs = append(specs, *g.Spec)
	}
	if specs != nil {
		out.setSpec(MinSpec(specs...))
	}
	closed := true
	for _, g := range app {
		closed = closed && g.EpsilonAt != nil
	}
	if closed {
		out.EpsilonAt = func(delta float64) float64 {
			m := math.Inf(1)
			for _, g := range app {
				m = math.Min(m, g.EpsilonAt(delta))
			}
			return m
		}
	}
	var curves []stats.RDPCurve
	for _, g := range app {
		if g.RDP != nil {
			curves = append(curves, g.RDP)
		}
	}
	if len(curves) > 0 {
		out.RDP = func(a float64) float64 {
			m := math.Inf(1)
			for _, c := range curves {
				m = math.Min(m, c(a))
			}
			return m
		}
	}
	return out
}

// ULAFinalState is the best Bertazzi guarantee for the final state x_n of
// ULA: the pointwise minimum of Thm 5.2 (final state) and Thm 5.4 (path),
// valid because x_n is a function of the path.
func ULAFinalState(p ULAParams, v Variant) (Guarantee, error) {
	fin, err := BertazziThm52(p, v)
	if err != nil {
		return Guarantee{}, err
	}
	path, err := BertazziThm54(p, v)
	if err != nil {
		return Guarantee{}, err
	}
	return CombineMin("Bertazzi et al. 2025, min(Thm 5.2, Thm 5.4)", relFinalState, fin, path), nil
}

// SGLDFinalState is the best Bertazzi guarantee for the final state x_n of
// noisy SGD: the pointwise minimum of Thms 5.6, 5.7 (final state) and 5.8
// (path), valid because x_n is a function of the path.
func SGLDFinalState(p SGLDParams, v Variant) (Guarantee, error) {
	gs, err := sgldTheorems(p, v)
	if err != nil {
		return Guarantee{}, err
	}
	return CombineMin("Bertazzi et al. 2025, min(Thm 5.6, Thm 5.7, Thm 5.8)", relFinalState, gs...), nil
}

func sgldTheorems(p SGLDParams, v Variant) ([]Guarantee, error) {
	var out []Guarantee
	for _, f := range []func(SGLDParams, Variant) (Guarantee, error){BertazziThm56, BertazziThm57, BertazziThm58} {
		g, err := f(p, v)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// ULAGuarantees returns every Bertazzi guarantee for a ULA configuration
// in the given reading: Thm 5.4 (path), Thm 5.2 (final state) and their
// minimum for the final state. Theorems whose assumptions fail are
// included with Applies false and the failed check in Reason.
func ULAGuarantees(p ULAParams, v Variant) ([]Guarantee, error) {
	path, err := BertazziThm54(p, v)
	if err != nil {
		return nil, err
	}
	fin, err := BertazziThm52(p, v)
	if err != nil {
		return nil, err
	}
	best := CombineMin("Bertazzi et al. 2025, min(Thm 5.2, Thm 5.4)", relFinalState, fin, path)
	return []Guarantee{path, fin, best}, nil
}

// SGLDGuarantees returns every Bertazzi guarantee for a noisy-SGD
// configuration in the given reading: Thm 5.8 (path), Thms 5.6 and 5.7
// (final state) and their minimum for the final state. Theorems whose
// assumptions fail are included with Applies false.
func SGLDGuarantees(p SGLDParams, v Variant) ([]Guarantee, error) {
	gs, err := sgldTheorems(p, v)
	if err != nil {
		return nil, err
	}
	best := CombineMin("Bertazzi et al. 2025, min(Thm 5.6, Thm 5.7, Thm 5.8)", relFinalState, gs...)
	return []Guarantee{gs[2], gs[0], gs[1], best}, nil
}
