package mechanisms

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The record drawn at each step of batch-1 SGLD with (and without)
// replacement is uniform on the n records and independent of the previous
// step's, read off the chain itself. Records (x = 1, y_i = 100·i) make the
// update θ ← a·θ + c_i + √η·ξ with one a = 1 − (η/2)(α + nβ) and
// c_i = (η/2)·nβ·y_i, whose spacing (η/2)·nβ·100 = 3.5 is 35 noise
// standard deviations (√η = 0.1): the step's record is the c_i nearest to
// θ_t − a·θ_{t−1}, misread only when |ξ| > 17.5, with probability
// 2·(1 − Φ(17.5)) = 1.4e-68 a step (scipy.stats.norm.sf), and each reading
// is checked to lie within 6 SD. The counts of 7 records over
// 7·10⁵ steps, and of the 49 ordered pairs of consecutive records, are
// tested with Pearson's χ² at p = 10⁻⁶ (critical values 38.26 for 6 and
// 109.66 for 48 degrees of freedom, scipy.stats.chi2.isf(1e-6, df); see
// docs/derivations/batch-gradients.md).
func TestSGLDBatch1IndexUniform(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	const (
		n     = 7
		eta   = 0.01
		alpha = 1.0
		beta  = 1.0
		steps = 100_000 // per run, one release per step
		runs  = 7
	)
	d := &dataset.Dataset{Name: "spaced"}
	c := make([]float64, n)
	for i := 0; i < n; i++ {
		d.Records = append(d.Records, dataset.Record{X: []float64{1}, Y: 100 * float64(i)})
		c[i] = eta / 2 * n * beta * 100 * float64(i)
	}
	a := 1 - eta/2*(alpha+n*beta)
	sd := math.Sqrt(eta)
	for _, scheme := range []IndexScheme{WithReplacement, WithoutReplacement} {
		ch := &Chain{Model: NewLinReg1D(alpha, beta), Init: Init{Theta: []float64{0}},
			Sampler: &SGLD{Step: StepSchedule{Eta: eta}, Batch: 1, Scheme: scheme, Iters: steps},
			Release: ReleaseSpec{Mode: ReleaseTrajectory}}
		if err := ch.Check(d); err != nil {
			t.Fatal(err)
		}
		var single [n]float64
		var pairs [n][n]float64
		total, totalPairs := 0, 0
		for r := 0; r < runs; r++ {
			prev, last := 0.0, -1
			_, err := ch.Run(context.Background(), NewTrial(5, dataset.SideD, r), d, func(_ int, th []float64) error {
				resid := th[0] - a*prev
				best := 0
				for i := range c {
					if math.Abs(resid-c[i]) < math.Abs(resid-c[best]) {
						best = i
					}
				}
				if z := (resid - c[best]) / sd; math.Abs(z) > 6 {
					return fmt.Errorf("step residual %g is %.1f SD from the nearest record's shift", resid, z)
				}
				single[best]++
				total++
				if last >= 0 {
					pairs[last][best]++
					totalPairs++
				}
				prev, last = th[0], best
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		var x1, x2 float64
		e1, e2 := float64(total)/n, float64(totalPairs)/(n*n)
		for i := 0; i < n; i++ {
			x1 += (single[i] - e1) * (single[i] - e1) / e1
			for j := 0; j < n; j++ {
				x2 += (pairs[i][j] - e2) * (pairs[i][j] - e2) / e2
			}
		}
		t.Logf("%s: χ² = %.2f (6 df) for the records, %.2f (48 df) for consecutive pairs", scheme, x1, x2)
		if x1 > 38.26 {
			t.Errorf("%s: record counts %v are not uniform (χ² = %.2f > 38.26)", scheme, single, x1)
		}
		if x2 > 109.66 {
			t.Errorf("%s: consecutive records are not independent and uniform (χ² = %.2f > 109.66)", scheme, x2)
		}
	}
}
