package stats

import (
	"math"
	"strings"
	"testing"
)

// oneRunSmallConfidenceRefs are the one-run bounds at confidences from 0.3
// down to 1e-300 — below the 1/2 under which OneRunEpsilon and OneRunFDP
// solve their crossings in the confidence itself (complementBelow) —
// computed independently by stats/testdata/onerun_refs.py (mpmath at 400
// digits, bisection to 2⁻⁷⁰ of the bracket): m, r, v, δ, confidence, ε_lb,
// μ_lb (−1: not computed there). The last rows are all-correct cases at
// r = 2·10⁵ and 10⁷ (the summation route) in closed form.
var oneRunSmallConfidenceRefs = []struct {
	m, r, v     int
	delta, conf float64
	epsilon, mu float64
}{
	{10, 10, 10, 0, 0.3, 3.3156287724279237, 2.8187144107011246},
	{10, 10, 10, 0, 0.01, 6.9022317608907631, 5.6492130154909349},
	{10, 10, 10, 0, 1e-06, 16.118095100958086, 10.089169052074425},
	{10, 10, 10, 0, 1e-20, 48.354286952874959, 18.841801964251415},
	{10, 10, 10, 0, 1e-100, 232.56109439239861, 42.687713610850205},
	{10, 10, 10, 0, 1e-300, 693.07811299120775, 74.17530632814128},
	{10, 10, 10, 1e-05, 0.3, 3.3154214954800002, 2.8187144107011246},
	{10, 10, 10, 1e-05, 0.01, 6.9020315399213374, 5.6492130154909349},
	{10, 10, 10, 1e-05, 1e-06, 16.117895080935433, 10.089169052074425},
	{10, 10, 10, 1e-05, 1e-20, 48.354086932872292, 18.841801964251415},
	{10, 10, 10, 1e-05, 1e-100, 232.56089437239595, 42.687713610850205},
	{10, 10, 10, 1e-05, 1e-300, 693.07791297120508, 74.17530632814128},
	{1000, 100, 95, 0, 0.3, 3.0484610789666977, 1.1740952147847657},
	{1000, 100, 95, 0, 0.01, 3.9909109673599667, 1.2624287624479153},
	{1000, 100, 95, 0, 1e-06, 5.7395376128893989, 1.2652499098251631},
	{1000, 100, 95, 0, 1e-20, 11.158234994157365, 1.265250191380772},
	{1000, 100, 95, 0, 1e-100, 41.859575277293247, 1.265250191380772},
	{1000, 100, 95, 0, 1e-300, 118.6124117104281, 1.265250191380772},
	{1000, 100, 95, 1e-05, 0.3, 3.0449604223406513, 1.1740952147847657},
	{1000, 100, 95, 1e-05, 0.01, 3.9874915913464933, 1.2624287624479153},
	{1000, 100, 95, 1e-05, 1e-06, 5.7361613808838478, 1.2652499098251631},
	{1000, 100, 95, 1e-05, 1e-20, 11.154867835849807, 1.265250191380772},
	{1000, 100, 95, 1e-05, 1e-100, 41.856208159406994, 1.265250191380772},
	{1000, 100, 95, 1e-05, 1e-300, 118.60904459254185, 1.265250191380772},
	{1000, 10, 10, 0, 0.3, 3.3156287724279237, 1.0347196529937393},
	{1000, 10, 10, 0, 0.01, 6.9022317608907631, 1.9364718472487681},
	{1000, 10, 10, 0, 1e-06, 16.118095100958086, 3.6714589346043782},
	{1000, 10, 10, 0, 1e-20, 48.354286952874959, 7.6466977458013895},
	{1000, 10, 10, 0, 1e-100, 232.56109439239861, 19.268685339330371},
	{1000, 10, 10, 0, 1e-300, 693.07811299120775, 34.906606087835867},
	{1000, 10, 10, 1e-05, 0.3, 3.2947550389178543, 1.0347196529937393},
	{1000, 10, 10, 1e-05, 0.01, 6.8820104184846338, 1.9364718472487681},
	{1000, 10, 10, 1e-05, 1e-06, 16.097892391787171, 3.6714589346043782},
	{1000, 10, 10, 1e-05, 1e-20, 48.33408424555744, 7.6466977458013895},
	{1000, 10, 10, 1e-05, 1e-100, 232.54089168508109, 19.268685339330371},
	{1000, 10, 10, 1e-05, 1e-300, 693.05791028389023, 34.906606087835867},
	{100, 100, 60, 0, 0.3, 0.49028195807854289, 0.36762200581808875},
	{100, 100, 60, 0, 0.01, 0.86528988884992167, 0.50137964352833549},
	{100, 100, 60, 0, 1e-06, 1.3981614685521829, 0.50669367126277604},
	{100, 100, 60, 0, 1e-20, 2.5284162189533888, 0.5066942062715996},
	{100, 100, 60, 0, 1e-100, 7.2038181236200363, 0.5066942062715996},
	{100, 100, 60, 0, 1e-300, 18.437728337599495, 0.5066942062715996},
	{100, 100, 60, 1e-05, 0.3, 0.49020329129448963, 0.36762200581808875},
	{100, 100, 60, 1e-05, 0.01, 0.86522054716211667, 0.50137964352833549},
	{100, 100, 60, 1e-05, 1e-06, 1.3981005972027272, 0.50669367126277604},
	{100, 100, 60, 1e-05, 1e-20, 2.5283634997180298, 0.5066942062715996},
	{100, 100, 60, 1e-05, 1e-100, 7.2037692580217439, 0.5066942062715996},
	{100, 100, 60, 1e-05, 1e-300, 18.437679508265584, 0.5066942062715996},
	{1, 1, 1, 0, 0.3, 0.84729786038720361, 1.0488010254160816},
	{1, 1, 1, 0, 0.01, 4.5951198501345899, 4.6526957480816822},
	{1, 1, 1, 0, 1e-06, 13.815509557963774, 9.5068486176457979},
	{1, 1, 1, 0, 1e-20, 46.051701859880914, 18.524680179596815},
	{1, 1, 1, 0, 1e-100, 230.25850929940457, 42.546907121930649},
	{1, 1, 1, 0, 1e-300, 690.77552789821371, 74.094192598722398},
	{1, 1, 1, 1e-05, 0.3, 0.84726928855046114, 1.0488010254160816},
	{1, 1, 1, 1e-05, 0.01, 4.5950996479103243, 4.6526957480816822},
	{1, 1, 1, 1e-05, 1e-06, 13.815489557743771, 9.5068486176457979},
	{1, 1, 1, 1e-05, 1e-20, 46.051681859680911, 18.524680179596815},
	{1, 1, 1, 1e-05, 1e-100, 230.25848929920457, 42.546907121930649},
	{1, 1, 1, 1e-05, 1e-300, 690.7755078980137, 74.094192598722398},
	{10, 10, 0, 0, 0.3, 0.0, 0.0},
	{10, 10, 0, 0, 0.01, 0.0, 0.0},
	{10, 10, 0, 0, 1e-06, 0.0, 0.0},
	{10, 10, 0, 0, 1e-20, 0.0, 0.0},
	{10, 10, 0, 0, 1e-100, 0.0, 0.0},
	{10, 10, 0, 0, 1e-300, 0.0, 0.0},
	{10, 10, 0, 1e-05, 0.3, 0.0, 0.0},
	{10, 10, 0, 1e-05, 0.01, 0.0, 0.0},
	{10, 10, 0, 1e-05, 1e-06, 0.0, 0.0},
	{10, 10, 0, 1e-05, 1e-20, 0.0, 0.0},
	{10, 10, 0, 1e-05, 1e-100, 0.0, 0.0},
	{10, 10, 0, 1e-05, 1e-300, 0.0, 0.0},
	{50, 20, 12, 0, 0.3, 0.53285385962764446, 0.17593093585182938},
	{50, 20, 12, 0, 0.01, 1.385952190404836, 0.28462034678170106},
	{50, 20, 12, 0, 1e-06, 2.7410512826328601, 0.28815496742127492},
	{50, 20, 12, 0, 1e-20, 6.4503720176125033, 0.28815532036966571},
	{50, 20, 12, 0, 1e-100, 26.921110048240473, 0.28815532036966571},
	{50, 20, 12, 0, 1e-300, 78.089667670334648, 0.28815532036966571},
	{50, 20, 12, 1e-05, 0.3, 0.53267750367481885, 0.17593093585182938},
	{50, 20, 12, 1e-05, 0.01, 1.3858132418366143, 0.28462034678170106},
	{50, 20, 12, 1e-05, 1e-06, 2.7409329496431225, 0.28815496742127492},
	{50, 20, 12, 1e-05, 1e-20, 6.450260675370506, 0.28815532036966571},
	{50, 20, 12, 1e-05, 1e-100, 26.920998881536741, 0.28815532036966571},
	{50, 20, 12, 1e-05, 1e-300, 78.089556503630917, 0.28815532036966571},
	{200000, 200000, 200000, 0, 0.3, 13.237002187001404, -1},
	{200000, 200000, 200000, 0, 1e-300, 702.98160054374388, -1},
	{10000000, 10000000, 10000000, 0, 0.3, 17.149026066283296, -1},
	{10000000, 10000000, 10000000, 0, 1e-300, 706.89362354917202, -1},
}

// "audit epsilon --one-run --canaries 10 --guesses 10 --correct 10
// --confidence 1e-300" failed with "no crossing below 4096" (exit 3): with
// α = 1 − 10⁻³⁰⁰ rounded to 1 the f-DP test rejected every μ, and below a
// confidence of about 10⁻¹⁶ both bounds came out wrong without an error
// (ε = 64, μ = 2). The bounds exist — ε_lb = 693.078 and μ_lb = 74.175
// there — and now agree with an independent computation to 10⁻⁹ (the
// crossings are solved to 10⁻¹²; the largest difference found is 4·10⁻¹³).
func TestOneRunSmallConfidence(t *testing.T) {
	const tol = 1e-9
	for _, c := range oneRunSmallConfidenceRefs {
		counts := OneRunCounts{Canaries: c.m, Guesses: c.r, Correct: c.v}
		e, err := OneRunEpsilon(counts, c.delta, c.conf)
		if err != nil || math.Abs(e.Epsilon-c.epsilon) > tol {
			t.Errorf("%+v δ = %g, confidence %g: ε_lb = %.17g (%v), want %.17g", counts, c.delta, c.conf, e.Epsilon, err, c.epsilon)
		}
		if c.mu < 0 {
			continue
		}
		f, err := OneRunFDP(counts, c.delta, c.conf)
		if err != nil || math.Abs(f.Mu-c.mu) > tol {
			t.Errorf("%+v δ = %g, confidence %g: μ_lb = %.17g (%v), want %.17g", counts, c.delta, c.conf, f.Mu, err, c.mu)
		}
	}
}

// At the usual confidences (1/2 and above) the bounds are computed as
// before, bit for bit: the values below are those of the code before the
// confidence-based forms were added.
func TestOneRunUsualConfidenceUnchanged(t *testing.T) {
	for _, c := range []struct {
		counts      OneRunCounts
		delta, conf float64
		epsilon, mu float64
	}{
		{OneRunCounts{1000, 100, 95}, 1e-5, 0.95, 2.1651757997139236, 0.7868118146841139},
		{OneRunCounts{1000, 100, 95}, 1e-5, 0.99, 1.9171594264153935, 0.6572954859411896},
		{OneRunCounts{1000, 100, 95}, 1e-5, 0.5, 2.8115947983179694, 1.1017144604637803},
		{OneRunCounts{10, 10, 10}, 0, 0.9, 1.3512152441090446, 0.9243026063675496},
		{OneRunCounts{100, 100, 60}, 1e-5, 0.95, 0.05167968002167265, 0.026231534661658857},
	} {
		e, err := OneRunEpsilon(c.counts, c.delta, c.conf)
		f, err2 := OneRunFDP(c.counts, c.delta, c.conf)
		if err != nil || err2 != nil || e.Epsilon != c.epsilon || f.Mu != c.mu {
			t.Errorf("%+v δ = %g, confidence %g: ε_lb %.17g, μ_lb %.17g (%v, %v); want %.17g, %.17g",
				c.counts, c.delta, c.conf, e.Epsilon, f.Mu, err, err2, c.epsilon, c.mu)
		}
	}
}

// Below MinOneRunConfidence = 1e-300 the bounds' tail probabilities would
// leave the normal range of doubles: refused, naming the range.
func TestOneRunConfidenceFloor(t *testing.T) {
	c := OneRunCounts{10, 10, 10}
	for _, conf := range []float64{1e-301, 5e-324, 0, 1} {
		_, err := OneRunEpsilon(c, 0, conf)
		_, err2 := OneRunFDP(c, 0, conf)
		for _, e := range []error{err, err2} {
			if e == nil || !strings.Contains(e.Error(), "confidence: must be in [1e-300, 1) for the one-run bounds") {
				t.Errorf("confidence %g: error %v", conf, e)
			}
		}
	}
	if _, err := OneRunEpsilon(c, 0, MinOneRunConfidence); err != nil {
		t.Errorf("confidence 1e-300: %v", err)
	}
}

// A claim is tested at the same levels: the guesses reject (ε, δ)-DP just
// below ε_lb and not just above it (OneRunPureRejected), and the f-DP
// statistic is positive just below μ_lb and not just above it — at
// confidence 1e-300 too, where p ≤ 1 − confidence read every p < 1 as a
// rejection (10 of 10 correct: p(700) = q¹⁰ rounds to 1 − 0, so (700, 0)-DP
// was "refuted" although ε_lb = 693.08).
func TestOneRunClaimTestsAtSmallConfidence(t *testing.T) {
	for _, c := range oneRunSmallConfidenceRefs {
		if c.mu < 0 || c.epsilon == 0 {
			continue
		}
		counts := OneRunCounts{Canaries: c.m, Guesses: c.r, Correct: c.v}
		if !OneRunPureRejected(counts, c.epsilon-1e-6, c.delta, c.conf) || OneRunPureRejected(counts, c.epsilon+1e-6, c.delta, c.conf) {
			t.Errorf("%+v δ = %g, confidence %g: (ε, δ)-DP rejected at ε_lb − 10⁻⁶ %v, at ε_lb + 10⁻⁶ %v; want true, false", counts, c.delta, c.conf,
				OneRunPureRejected(counts, c.epsilon-1e-6, c.delta, c.conf), OneRunPureRejected(counts, c.epsilon+1e-6, c.delta, c.conf))
		}
		if c.mu > 0 && (!(OneRunFDPStatistic(counts, c.mu-1e-6, c.conf) > 0) || OneRunFDPStatistic(counts, c.mu+1e-6, c.conf) > 0) {
			t.Errorf("%+v confidence %g: f-DP statistic %g at μ_lb − 10⁻⁶, %g at μ_lb + 10⁻⁶; want > 0, ≤ 0", counts, c.conf,
				OneRunFDPStatistic(counts, c.mu-1e-6, c.conf), OneRunFDPStatistic(counts, c.mu+1e-6, c.conf))
		}
	}
	if OneRunPureRejected(OneRunCounts{10, 10, 10}, 700, 0, 1e-300) {
		t.Error("(700, 0)-DP rejected by 10 of 10 correct guesses at confidence 1e-300")
	}
}
