package stats

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/mcmcaudit/mcmcaudit/internal/radix"
)

// KSStatistic returns the one-sample Kolmogorov–Smirnov statistic
// D_n = sup_x |F_n(x) − F(x)| of the sample xs against the continuous CDF
// cdf: with x_(1) ≤ … ≤ x_(n) the sorted sample,
// D_n = max_i max(i/n − F(x_(i)), F(x_(i)) − (i−1)/n). xs is not modified.
//
// cdf must be nondecreasing, as a CDF is, to within ksSlack: the maximum
// is then found without evaluating cdf at every draw (see ksMax), and is
// the same float64 as the term-by-term maximum over every draw.
func KSStatistic(xs []float64, cdf func(float64) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s, ok := sortedCopy(xs)
	if !ok { // NaN in the sample: every term, NaN included
		return ksEvery(s, cdf)
	}
	return ksMax(s, cdf)
}

// sortedCopy returns xs sorted in increasing order, and false (with the
// NaNs first, as sort.Float64s) when xs holds NaN. Large samples are
// sorted by the module's radix sort of order-preserving keys (the sort
// took most of KSStatistic's time once the CDF was evaluated at few
// draws); −0 comes back as +0, which compares equal.
func sortedCopy(xs []float64) ([]float64, bool) {
	n := len(xs)
	if n < 512 {
		s := append([]float64(nil), xs...)
		slices.Sort(s)
		return s, n == 0 || !math.IsNaN(s[0])
	}
	keys := make([]uint64, n)
	for i, x := range xs {
		if x != x {
			s := append([]float64(nil), xs...)
			slices.Sort(s)
			return s, false
		}
		keys[i] = radix.FloatKey(x)
	}
	radix.Sort(keys, nil)
	s := make([]float64, n)
	for i, k := range keys {
		s[i] = radix.KeyFloat(k)
	}
	return s, true
}

// ksEvery is the statistic of the sorted sample s, evaluating cdf at
// every draw.
func ksEvery(s []float64, cdf func(float64) float64) float64 {
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := cdf(x)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
}

// ksSlack bounds how far a CDF's evaluations may decrease between two
// sorted draws (its rounding errors) for ksMax's bounds to hold; real CDF
// code errs by a few units of 10⁻¹⁶.
const ksSlack = 1e-9

// ksBlock is the spacing of ksMax's first evaluations.
const ksBlock = 64

// ksMax is ksEvery's value, evaluating cdf only where the maximum can be.
// Term i (from 0) of the statistic is max((i+1)/n − f_i, f_i − i/n), f_i =
// F(x_(i)). Between two evaluated draws a < b, F being nondecreasing,
// every f_i with a < i < b lies in [f_a, f_b], so the terms there are at
// most max(b/n − f_a, f_b − (a+1)/n). A block whose bound (plus ksSlack)
// does not exceed the largest term found so far cannot hold the maximum
// and is skipped; others are split in two until their draws are
// evaluated. The maximum of the terms evaluated is the maximum of all
// (the largest term is never skipped), computed by the same expressions,
// so the result is ksEvery's to the bit. A sample of 20,000 draws costs
// about 400–600 evaluations (n/ksBlock on the grid, the rest in the
// blocks near the maximum), whether or not it follows F.
func ksMax(s []float64, cdf func(float64) float64) float64 {
	n := float64(len(s))
	d := 0.0
	term := func(i int, f float64) {
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	last := len(s) - 1
	// The draws 0, ksBlock, 2·ksBlock, …, and the last.
	var grid []int
	for i := 0; i < last; i += ksBlock {
		grid = append(grid, i)
	}
	grid = append(grid, last)
	fs := make([]float64, len(grid))
	for g, i := range grid {
		fs[g] = cdf(s[i])
		term(i, fs[g])
	}
	var refine func(a, b int, fa, fb float64)
	refine = func(a, b int, fa, fb float64) {
		if b-a < 2 || math.Max(float64(b)/n-fa, fb-float64(a+1)/n)+ksSlack <= d {
			return
		}
		m := a + (b-a)/2
		fm := cdf(s[m])
		term(m, fm)
		refine(a, m, fa, fm)
		refine(m, b, fm, fb)
	}
	for g := 1; g < len(grid); g++ {
		refine(grid[g-1], grid[g], fs[g-1], fs[g])
	}
	return d
}

// KSExactMax is the largest sample size for which KSPValue evaluates the
// exact distribution; beyond it the asymptotic form is used.
const KSExactMax = 1000

// KSPValue returns P(D_n ≥ d) for the one-sample Kolmogorov–Smirnov
// statistic of n draws from a continuous law: the probability that a
// sample of the hypothesised law deviates at least as much.
//
//   - In the tail, nd² ≥ 2.2 (p-values below about 0.03), it is
//     2·P(D_n⁺ ≥ d), twice the exact one-sided probability of Birnbaum &
//     Tingey (1951, eq. 3.0), P(D_n⁺ ≥ d) = d Σ_{j=0}^{⌊n(1−d)⌋} C(n, j)
//     (1 − d − j/n)^{n−j} (d + j/n)^{j−1}; the two one-sided events
//     almost never occur together there, so the factor 2 is exact to a
//     relative error far below the p-value itself (Miller 1956), and it
//     is exact for d ≥ ½.
//   - Otherwise, for n ≤ KSExactMax, it is the exact distribution by the
//     matrix method of Durbin (1973) as evaluated by Marsaglia, Tsang &
//     Wang (2003, "Evaluating Kolmogorov's distribution", J. Stat. Softw.
//     8(18)): with k = ⌊nd⌋ + 1, m = 2k − 1 and h = k − nd,
//     P(D_n < d) = (n!/nⁿ)·(Hⁿ)_{kk} for the m×m matrix H of their §2;
//     the power is taken by squaring with the exponent carried apart, so
//     nothing overflows.
//   - For n > KSExactMax it is Kolmogorov's limit law
//     Q(λ) = 2 Σ_{j≥1} (−1)^{j−1} e^{−2j²λ²} at Stephens' (1970)
//     corrected λ = (√n + 0.12 + 0.11/√n)·d, whose relative error is
//     below 3% for such n and p-values ≥ 0.03 (checked against the exact
//     distribution in the tests).
func KSPValue(n int, d float64) (float64, error) {
	if n < 1 {
		return math.NaN(), fmt.Errorf("n: sample size must be ≥ 1, got %d", n)
	}
	if !(d >= 0 && d <= 1) {
		return math.NaN(), fmt.Errorf("d: Kolmogorov–Smirnov statistic must be in [0, 1], got %g", d)
	}
	nf := float64(n)
	switch {
	case d <= 0.5/nf:
		// D_n ≥ 1/(2n) always (the smallest value, reached by the sample
		// at the midpoints of n equal-probability cells).
		return 1, nil
	case d >= 1:
		return 0, nil
	}
	if nf*d*d >= 2.2 || d >= 0.5 {
		return math.Min(1, 2*smirnovUpper(n, d)), nil
	}
	if n > KSExactMax {
		return kolmogorovQ((math.Sqrt(nf) + 0.12 + 0.11/math.Sqrt(nf)) * d), nil
	}
	return math.Max(0, math.Min(1, 1-ksCDFExact(n, d))), nil
}

// smirnovUpper is P(D_n⁺ ≥ d), 0 < d < 1, by the Birnbaum–Tingey sum,
// term by term in logarithms. Two shortcuts leave its value unchanged to
// the bit: the log-factorials come from a table of the same math.Lgamma
// values (logFactorials), and a term too small to change the running
// log-sum (noOpBelow) is not added (most of the n terms, in the tail).
func smirnovUpper(n int, d float64) float64 {
	nf := float64(n)
	jmax := int(math.Floor(nf * (1 - d)))
	lf := logFactorials(n)
	lgn := lf(n)
	acc, skip := math.Inf(-1), math.Inf(-1)
	for j := 0; j <= jmax; j++ {
		a := 1 - d - float64(j)/nf
		if a <= 0 {
			continue
		}
		t := lgn - lf(j) - lf(n-j) + (nf-float64(j))*math.Log(a) + float64(j-1)*math.Log(d+float64(j)/nf)
		if t-acc < skip {
			continue
		}
		acc = logAdd(acc, t)
		skip = noOpBelow(acc)
	}
	return d * math.Exp(acc)
}

// noOpBelow returns x such that logAdd(acc, t) == acc exactly whenever
// t − acc < x (−∞ when acc is −∞: logAdd then returns t). logAdd adds
// δ = log1p(exp(t − acc)) ≤ exp(t − acc) (both as computed); δ = 0 below
// exp's underflow at −745.2, and δ < |acc|·2⁻⁵⁶, under half the spacing of
// the floats next to acc (at least |acc|·2⁻⁵³), when t − acc <
// ln|acc| − 40 (40 > 56·ln 2 = 38.8): either way acc + δ rounds to acc.
// With |acc| = m·2^e, m ∈ [½, 1), (e − 1)·ln 2 ≤ ln|acc| stands for the
// logarithm (a smaller bound is as valid, and needs no log).
func noOpBelow(acc float64) float64 {
	if math.IsInf(acc, -1) {
		return math.Inf(-1)
	}
	if acc == 0 {
		return -746
	}
	_, e := math.Frexp(acc)
	return math.Max(-746, float64(e-1)*math.Ln2-40)
}

// logFactTable holds ln k! = math.Lgamma(k + 1) for k < len: the table
// smirnovUpper's terms take their log-factorials from, grown on demand and
// shared (never written once published).
var logFactTable atomic.Pointer[[]float64]

// logFactMax is the largest n whose table is kept (512 KiB); larger
// samples compute each value.
const logFactMax = 1 << 16

// logFactorials returns k ↦ ln k! for 0 ≤ k ≤ n, with math.Lgamma's
// values.
func logFactorials(n int) func(int) float64 {
	lgamma := func(k int) float64 {
		v, _ := math.Lgamma(float64(k) + 1)
		return v
	}
	if n > logFactMax {
		return lgamma
	}
	p := logFactTable.Load()
	if p == nil || len(*p) <= n {
		t := make([]float64, max(n+1, 1024))
		for k := range t {
			t[k] = lgamma(k)
		}
		logFactTable.Store(&t)
		p = &t
	}
	t := *p
	return func(k int) float64 { return t[k] }
}

func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// kolmogorovQ is 1 − K(λ) of Kolmogorov's limit law. For small λ the
// alternating series converges slowly; the Jacobi-transformed series
// K(λ) = (√(2π)/λ) Σ_{j≥1} e^{−(2j−1)²π²/(8λ²)} is used there instead.
func kolmogorovQ(lam float64) float64 {
	if lam <= 0 {
		return 1
	}
	if lam < 1 {
		s := 0.0
		for j := 1; j <= 20; j++ {
			t := float64(2*j - 1)
			s += math.Exp(-t * t * math.Pi * math.Pi / (8 * lam * lam))
		}
		return 1 - math.Sqrt(2*math.Pi)/lam*s
	}
	s, sign := 0.0, 1.0
	for j := 1; j <= 100; j++ {
		t := math.Exp(-2 * float64(j*j) * lam * lam)
		s += sign * t
		if t < 1e-18 {
			break
		}
		sign = -sign
	}
	return math.Min(1, 2*s)
}

// ksCDFExact is P(D_n < d) by Durbin's matrix (Marsaglia, Tsang & Wang
// 2003, §2): H[i][j] = 1/(i−j+1)! for i−j+1 ≥ 0 (0 otherwise), except
// the first column (1 − h^{i+1})/(i+1)!, the last row (1 − h^{m−j})/(m−j)!
// and their corner (1 − 2hᵐ + max(0, 2h−1)ᵐ)/m!, indices from 0.
func ksCDFExact(n int, d float64) float64 {
	nd := float64(n) * d
	k := int(nd) + 1
	m := 2*k - 1
	h := float64(k) - nd
	H := make([]float64, m*m)
	lf := make([]float64, m+2) // ln g!
	for g := 1; g < len(lf); g++ {
		lf[g] = lf[g-1] + math.Log(float64(g))
	}
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			if g := i - j + 1; g >= 0 {
				H[i*m+j] = math.Exp(-lf[g])
			}
		}
	}
	for i := 0; i < m; i++ {
		H[i*m] = (1 - math.Pow(h, float64(i+1))) * math.Exp(-lf[i+1])
		H[(m-1)*m+i] = (1 - math.Pow(h, float64(m-i))) * math.Exp(-lf[m-i])
	}
	corner := 1 - 2*math.Pow(h, float64(m))
	if 2*h-1 > 0 {
		corner += math.Pow(2*h-1, float64(m))
	}
	H[(m-1)*m] = corner * math.Exp(-lf[m])
	q, e := matPow(H, m, n)
	// (n!/nⁿ)·Q_kk·2^e, in logs.
	lq := math.Log(q[(k-1)*m+k-1]) + float64(e)*math.Ln2
	lg, _ := math.Lgamma(float64(n) + 1)
	return math.Exp(lq + lg - float64(n)*math.Log(float64(n)))
}

// matPow returns (A^p, e) with A^p = result·2^e for the m×m matrix a,
// rescaling by powers of two whenever the entries grow large.
func matPow(a []float64, m, p int) ([]float64, int) {
	res := make([]float64, m*m)
	for i := 0; i < m; i++ {
		res[i*m+i] = 1
	}
	base := append([]float64(nil), a...)
	re, be := 0, 0
	tmp := make([]float64, m*m)
	for p > 0 {
		if p&1 == 1 {
			matMul(tmp, res, base, m)
			res, tmp = tmp, res
			re += be + rescale(res)
		}
		p >>= 1
		if p > 0 {
			matMul(tmp, base, base, m)
			base, tmp = tmp, base
			be = 2*be + rescale(base)
		}
	}
	return res, re
}

// rescale divides a by 2^s so that its largest entry is below 2^64 and
// returns s (0 when no rescaling is needed).
func rescale(a []float64) int {
	mx := 0.0
	for _, v := range a {
		mx = math.Max(mx, math.Abs(v))
	}
	if mx < 0x1p64 {
		return 0
	}
	_, s := math.Frexp(mx)
	f := math.Ldexp(1, -s)
	for i := range a {
		a[i] *= f
	}
	return s
}

func matMul(out, a, b []float64, m int) {
	for i := 0; i < m; i++ {
		row := out[i*m : (i+1)*m]
		for j := range row {
			row[j] = 0
		}
		for l := 0; l < m; l++ {
			x := a[i*m+l]
			if x == 0 {
				continue
			}
			bl := b[l*m : (l+1)*m]
			for j, y := range bl {
				row[j] += x * y
			}
		}
	}
}
