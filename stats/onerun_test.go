package stats

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// onerunPeer is the peer table: jax_privacy's own _epsilon_one_run and
// _epsilon_one_run_fdp (google-deepmind/jax_privacy commit 8967688c,
// jax_privacy/auditing.py; dp_accounting.get_sigma_gaussian from
// google/differential-privacy commit 94f45883) run with Debian's NumPy 1.24 /
// SciPy 1.10, eps_lo = 0, as docs/derivations/one-run.md describes.
// steinke = _epsilon_one_run(0, m, r, v, alpha, delta); fdpEps =
// _epsilon_one_run_fdp(0, m, r, v, alpha, delta); fdpMu = 1/σ with σ =
// get_sigma_gaussian(fdpEps, delta). NaN: not computed — the f-DP search
// needs δ > 0 and its Python loop is too slow beyond r = 10⁵; fdpMu where
// fdpEps = 0, since μ is then only known to lie below μ(ε = 0, δ).
var onerunPeer = []struct {
	m, r, v                int
	delta, alpha           float64
	steinke, fdpEps, fdpMu float64
}{
	{m: 1000, r: 100, v: 95, delta: 0.0, alpha: 0.05, steinke: 2.172434019998109, fdpEps: nan, fdpMu: nan},
	{m: 1000, r: 100, v: 95, delta: 1e-05, alpha: 0.05, steinke: 2.165175787875041, fdpEps: 3.3233004900323637, fdpMu: 0.7868118148693677},
	{m: 1000, r: 100, v: 100, delta: 0.0, alpha: 0.05, steinke: 3.492965346169885, fdpEps: nan, fdpMu: nan},
	{m: 1000, r: 100, v: 100, delta: 1e-05, alpha: 0.05, steinke: 3.465376229385333, fdpEps: 5.549027999942941, fdpMu: 1.225533471644987},
	{m: 1000, r: 1000, v: 520, delta: 0.0, alpha: 0.05, steinke: 0, fdpEps: nan, fdpMu: nan},
	{m: 1000, r: 1000, v: 540, delta: 1e-05, alpha: 0.05, steinke: 0.05383190721132726, fdpEps: 0.10006480464502944, fdpMu: 0.03254002480725143},
	{m: 1000, r: 200, v: 100, delta: 1e-05, alpha: 0.05, steinke: 0, fdpEps: 0, fdpMu: nan},
	{m: 50, r: 10, v: 10, delta: 0.0, alpha: 0.05, steinke: 1.0518732154273494, fdpEps: nan, fdpMu: nan},
	{m: 50, r: 10, v: 9, delta: 0.001, alpha: 0.1, steinke: 0.5837351013219951, fdpEps: 0.7557112801989136, fdpMu: 0.3069731528341761},
	{m: 100, r: 100, v: 60, delta: 0.01, alpha: 0.1, steinke: 0, fdpEps: 0.0597028192431761, fdpMu: 0.07715365898473953},
	{m: 10000, r: 500, v: 400, delta: 1e-06, alpha: 0.01, steinke: 1.1236269896100008, fdpEps: 1.5256992581070916, fdpMu: 0.34977253517680085},
	{m: 100000, r: 10000, v: 6000, delta: 1e-05, alpha: 0.05, steinke: 0.36910029880218626, fdpEps: 0.45376879423041744, fdpMu: 0.13010049299147636},
	{m: 1000000, r: 1000000, v: 502000, delta: 1e-06, alpha: 0.05, steinke: 0.004684721475089123, fdpEps: nan, fdpMu: nan},
	{m: 10000000, r: 10000000, v: 5003000, delta: 0.0, alpha: 0.05, steinke: 0.00015950667455170796, fdpEps: nan, fdpMu: nan},
	{m: 10000000, r: 1000, v: 990, delta: 1e-07, alpha: 0.05, steinke: 3.2150499184963808, fdpEps: 4.523791823947156, fdpMu: 0.860831998773347},
}

var nan = math.NaN()

// peerTol is the tolerance of jax_privacy's root finder (brentq, xtol = 1e-6);
// ours solves to 1e-12, so the two agree to within 1e-6.
const peerTol = 1e-6

func TestOneRunMatchesJaxPrivacy(t *testing.T) {
	for _, c := range onerunPeer {
		counts := OneRunCounts{Canaries: c.m, Guesses: c.r, Correct: c.v}
		conf := 1 - c.alpha
		s, err := OneRunEpsilon(counts, c.delta, conf)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if math.Abs(s.Epsilon-c.steinke) > peerTol {
			t.Errorf("OneRunEpsilon%+v δ=%g α=%g = %.12g, jax_privacy %.12g", counts, c.delta, c.alpha, s.Epsilon, c.steinke)
		}
		if math.IsNaN(c.fdpEps) {
			continue
		}
		f, err := OneRunFDP(counts, c.delta, conf)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if math.Abs(f.Epsilon-c.fdpEps) > peerTol {
			t.Errorf("OneRunFDP%+v δ=%g α=%g: ε = %.12g, jax_privacy %.12g", counts, c.delta, c.alpha, f.Epsilon, c.fdpEps)
		}
		if !math.IsNaN(c.fdpMu) && math.Abs(f.Mu-c.fdpMu) > peerTol {
			t.Errorf("OneRunFDP%+v δ=%g α=%g: μ = %.12g, jax_privacy %.12g", counts, c.delta, c.alpha, f.Mu, c.fdpMu)
		}
		if f.Assumption == "" || !strings.Contains(f.String(), "Gaussian") {
			t.Errorf("f-DP estimate %v does not carry its Gaussian assumption", f)
		}
	}
}

// TestBinomTails checks binomSF and binomLogPMF against scipy.stats.binom
// (sf(v−1, r, expit(ε)) and logpmf(v−1, r, expit(ε)), SciPy 1.10), past the
// range where gonum's incomplete beta is accurate.
func TestBinomTails(t *testing.T) {
	ref := []struct {
		r, v       int
		eps        float64
		sf, logpmf float64
	}{
		{100, 95, 2.0, 0.016101818753177084, -3.7938587399423334},
		{1000, 520, 0.0, 0.10872414660207046, -4.401370814111431},
		{100000, 50300, 0.01, 0.37711085774247993, -6.030264153312601},
		{200000, 120500, 0.4, 0.00025288111756632543, -12.347102573316079},
		{1000000, 502000, 0.004, 0.022803681329218818, -9.129560847533867},
		{10000000, 5000000, 0.0, 0.500126156622949, -8.28483939357102},
		{10000000, 5003000, 0.0002, 0.05695929742937767, -9.53383932588622},
		{10000000, 4998000, 0.0, 0.8971050702585923, -9.085639329161495},
		{10000000, 9990000, 7.0, 1.0, -47.73037742055021},
		{10000000, 7004000, 0.8473, 0.002915632372433013, -11.997316537424922},
	}
	for _, c := range ref {
		lq, l1q := logLogistic(c.eps), logLogistic(-c.eps)
		if got := binomSF(c.r, c.v, lq, l1q); math.Abs(got-c.sf) > 1e-9 {
			t.Errorf("binomSF(%d, %d, ε=%g) = %.15g, scipy %.15g", c.r, c.v, c.eps, got, c.sf)
		}
		// scipy's logpmf is a difference of log-gammas: ~1e-8 absolute at n = 10⁷.
		if got := binomLogPMF(c.r, c.v-1, lq, l1q); math.Abs(got-c.logpmf) > 2e-8 {
			t.Errorf("binomLogPMF(%d, %d, ε=%g) = %.15g, scipy %.15g", c.r, c.v-1, c.eps, got, c.logpmf)
		}
	}
	// Where binomSF uses gonum, the sum path agrees with it: both routes at
	// r = regIncBetaMaxTrials.
	r := regIncBetaMaxTrials
	for _, v := range []int{49000, 50000, 50200, 50500, 51000} {
		q := 0.5
		beta := mathext.RegIncBeta(float64(v), float64(r-v+1), q)
		lq := math.Log(q)
		if got := sumSF(r, v, lq, lq); math.Abs(got-beta) > 1e-10 {
			t.Errorf("sum route P[Bin(%d,1/2) ≥ %d] = %.15g, RegIncBeta %.15g", r, v, got, beta)
		}
	}
}

func TestOneRunValidate(t *testing.T) {
	for _, c := range []struct {
		c     OneRunCounts
		delta float64
		conf  float64
		field string
	}{
		{OneRunCounts{0, 0, 0}, 0, 0.95, "canaries"},
		{OneRunCounts{10, 11, 0}, 0, 0.95, "guesses"},
		{OneRunCounts{10, -1, 0}, 0, 0.95, "guesses"},
		{OneRunCounts{10, 5, 6}, 0, 0.95, "correct"},
		{OneRunCounts{10, 5, -1}, 0, 0.95, "correct"},
		{OneRunCounts{10, 5, 5}, 1, 0.95, "delta"},
		{OneRunCounts{10, 5, 5}, -1e-9, 0.95, "delta"},
		{OneRunCounts{10, 5, 5}, 0, 1, "confidence"},
		{OneRunCounts{10, 5, 5}, 0, 0, "confidence"},
		{OneRunCounts{10, 5, 5}, nan, 0.9, "delta"},
	} {
		for _, fn := range []func(OneRunCounts, float64, float64) (OneRunEstimate, error){OneRunEpsilon, OneRunFDP} {
			_, err := fn(c.c, c.delta, c.conf)
			if err == nil || !strings.HasPrefix(err.Error(), c.field+":") {
				t.Errorf("%+v δ=%g conf=%g: error %v, want one naming %q", c.c, c.delta, c.conf, err, c.field)
			}
		}
	}
	// Degenerate but valid: no guesses, or none correct, give 0.
	for _, c := range []OneRunCounts{{5, 0, 0}, {5, 5, 0}} {
		for _, fn := range []func(OneRunCounts, float64, float64) (OneRunEstimate, error){OneRunEpsilon, OneRunFDP} {
			e, err := fn(c, 1e-5, 0.95)
			if err != nil || e.Epsilon != 0 || e.Mu != 0 {
				t.Errorf("%+v: %v, %v; want 0", c, e, err)
			}
		}
	}
}

// TestOneRunLargeR: r = 10⁷ guesses with δ > 0, where the increment scan and
// the tails run over millions of terms; checked against the pure-ε bound
// (δ > 0 can only lower it) and the p-value at the answer.
func TestOneRunLargeR(t *testing.T) {
	c := OneRunCounts{Canaries: 10000000, Guesses: 10000000, Correct: 5003000}
	pure, err := OneRunEpsilon(c, 0, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	withDelta, err := OneRunEpsilon(c, 1e-9, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !(withDelta.Epsilon <= pure.Epsilon && withDelta.Epsilon > 0) {
		t.Errorf("ε_lb(δ=1e-9) = %g, ε_lb(δ=0) = %g", withDelta.Epsilon, pure.Epsilon)
	}
	if p := OneRunPValue(c, withDelta.Epsilon, 1e-9); math.Abs(p-0.05) > 1e-9 {
		t.Errorf("p-value at ε_lb = %g, want α = 0.05", p)
	}
}
