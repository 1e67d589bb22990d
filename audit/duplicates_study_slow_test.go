//go:build slow

package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The float32 study of docs/derivations/duplicate-rows.md, in full (about 100 s
// of CPU): its figures are this test's log (go test -tags slow
// -run TestFloat32StudyFull -v ./audit/).
//
//   - 500 seeds of independent float32 N(0, 1) rows, 1,000 and 10,000 per
//     file: false alarms (files' check and trials' check) at most 1%, and
//     1% of the rows copied caught in at least 99% of the seeds;
//   - other laws (100 seeds each): the mean count of chance repeats
//     against the mean estimate, never a false alarm;
//   - how many planted copies are caught: k rows of D copied over other
//     rows of D, for k = 1 … 24, 200 seeds each;
//   - float64 rows (500 seeds per size): never a false alarm, and a
//     single copied row always caught.
func TestFloat32StudyFull(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		r := studyFloat32(t, 500, n, float32Normal)
		t.Logf("float32 N(0, 1), n = %d: %v", n, r)
		if r.falseAlarms > 5 || r.trialAlarms > 5 || r.caught < 495 {
			t.Errorf("n = %d: %v", n, r)
		}
	}
	laws := []struct {
		name string
		draw func(*rand.Rand) float64
	}{
		{"float32 U(0, 1)", func(r *rand.Rand) float64 { return float64(float32(r.Float64())) }},
		{"float32 Exp(1)", func(r *rand.Rand) float64 { return float64(float32(r.ExpFloat64())) }},
		{"float32 N(100, 1)", func(r *rand.Rand) float64 { return float64(float32(100 + r.NormFloat64())) }},
		{"float32 N(1000, 1)", func(r *rand.Rand) float64 { return float64(float32(1000 + r.NormFloat64())) }},
		{"float32 N(1, 10⁻¹⁰)", func(r *rand.Rand) float64 { return float64(float32(1 + 1e-5*r.NormFloat64())) }},
		{"float32 Cauchy", func(r *rand.Rand) float64 { return float64(float32(math.Tan(math.Pi * (r.Float64() - 0.5)))) }},
		{"float32 Box–Muller in float32", boxMuller32},
		{"float32 N(0, 1) as shortest decimals", func(r *rand.Rand) float64 {
			x, _ := strconv.ParseFloat(strconv.FormatFloat(float32Normal(r), 'g', -1, 32), 64)
			return x
		}},
		{"bfloat16-like N(0, 1) (8 bits)", func(r *rand.Rand) float64 {
			m, e := math.Frexp(r.NormFloat64())
			return math.Ldexp(math.Round(m*256)/256, e)
		}},
	}
	for _, law := range laws {
		for _, n := range []int{1000, 10000} {
			r := studyFloat32(t, 100, n, law.draw)
			t.Logf("%s, n = %d: %v", law.name, n, r)
			if r.falseAlarms+r.trialAlarms > 0 {
				t.Errorf("%s, n = %d: %v", law.name, n, r)
			}
		}
	}
	for _, n := range []int{1000, 10000} {
		line := ""
		for _, k := range []int{1, 2, 3, 4, 6, 8, 12, 16, 20, 24} {
			caught := 0
			for seed := 0; seed < 200; seed++ {
				rng := rand.New(rand.NewPCG(uint64(seed), 77))
				d, dp := make([][]float64, n), make([][]float64, n)
				for i := range d {
					d[i], dp[i] = []float64{float32Normal(rng)}, []float64{float32Normal(rng)}
				}
				plantCopies(rng, d, d, k, true)
				if ExpectedDuplicateRows(d, dp).Exceeded(CountDuplicateRows(d, dp)) {
					caught++
				}
			}
			line += fmt.Sprintf(" k=%d: %d/200;", k, caught)
		}
		t.Logf("float32 N(0, 1), n = %d, k rows of D copied:%s", n, line)
	}
	for _, n := range []int{1000, 10000} {
		alarms, caught := 0, 0
		for seed := 0; seed < 500; seed++ {
			rng := rand.New(rand.NewPCG(uint64(seed), 64))
			d, dp := gaussRows(rng, n, 1), gaussRows(rng, n, 1)
			if got := CountDuplicateRows(d, dp); got.Any() && ExpectedDuplicateRows(d, dp).Exceeded(got) {
				alarms++
			}
			plantCopies(rng, d, dp, 1, false)
			if ExpectedDuplicateRows(d, dp).Exceeded(CountDuplicateRows(d, dp)) {
				caught++
			}
		}
		t.Logf("float64 N(0, 1), n = %d: %d false alarms in 500 seeds, one row copied across caught in %d", n, alarms, caught)
		if alarms > 0 || caught != 500 {
			t.Errorf("float64, n = %d: %d false alarms, %d of 500 single copies caught", n, alarms, caught)
		}
	}
}

// boxMuller32 draws N(0, 1) as a float32 sampler may: two 24-bit uniforms
// and the Box–Muller transform computed in float32.
func boxMuller32(r *rand.Rand) float64 {
	u1 := float32(r.IntN(1<<24-1)+1) / (1 << 24)
	u2 := float32(r.IntN(1<<24)) / (1 << 24)
	rad := float32(math.Sqrt(float64(-2 * float32(math.Log(float64(u1))))))
	return float64(rad * float32(math.Cos(float64(float32(2*math.Pi)*u2))))
}
