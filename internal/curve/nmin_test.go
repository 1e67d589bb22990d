package curve

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
)

// --n-min is bounded up front like every other work limit: the estimate
// 2 × runs × 300 units against --max-work (default 2.5·10⁹). The boundary:
// 2 × 4,166,666 × 300 = 2,499,999,600 ≤ 2.5·10⁹ < 2 × 4,166,667 × 300 =
// 2,500,000,200 (by hand). (The command's test checks the message.)
func TestNMinWorkLimit(t *testing.T) {
	if err := checkNMinWork(4166666, 0); err != nil {
		t.Errorf("4,166,666 runs: %v", err)
	}
	if err := checkNMinWork(4166667, 0); err == nil {
		t.Error("4,166,667 runs: accepted under the default limit")
	}
	if err := checkNMinWork(4166667, 2500000200); err != nil {
		t.Errorf("4,166,667 runs under --max-work 2500000200: %v", err)
	}
}

// countingCtx is a context whose Err turns to Canceled at its k-th call:
// it shows where a loop looks at its context, with no clock involved.
type countingCtx struct {
	context.Context
	calls, k int
}

func (c *countingCtx) Err() error {
	c.calls++
	if c.calls >= c.k {
		return context.Canceled
	}
	return nil
}

// The runs of Algorithm 1 look at the context every nminCheckEvery runs
// and stop there: cancelled at its third look, simulateNMin has done 2048
// runs of the first dataset at most, and returns the cancellation.
func TestSimulateNMinStopsWhenCancelled(t *testing.T) {
	a := closedform.ProposeTestSample{Epsilon: 1, Delta: 0.001, XL: 0.9, XH: 1.8, Alpha: 2, Beta: 1, Rho1: 1.01, Rho2: 0.05, Gamma1: 0.1, N1: 1e6}
	sets := []nminDataset{{"D3", []closedform.WeightedPoint{{X: 1.8, Y: 1.8e6, Count: 1e6}}}, {"D4", []closedform.WeightedPoint{{X: 1.8, Y: 1.8e6, Count: 1e6}}}}
	ctx := &countingCtx{Context: context.Background(), k: 3}
	res, err := simulateNMin(ctx, a, sets, 1e6, 1000000, 1)
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled: %v, %v", res, err)
	}
	if ctx.calls != 3 {
		t.Errorf("the context was read %d times before the loop stopped, want 3 (runs 0, 1024 and 2048)", ctx.calls)
	}
	// Not cancelled: every run is counted.
	res, err = simulateNMin(context.Background(), a, sets, 1e6, 3000, 1)
	if err != nil || len(res) != 2 {
		t.Fatalf("%v, %v", res, err)
	}
	for _, d := range res {
		if n := d.Line14 + d.Line23Empty + d.Line23 + d.EmptyW25 + d.Released; n != 3000 {
			t.Errorf("%s: %d runs counted, want 3000", d.Name, n)
		}
	}
}

// BenchmarkNMinRuns measures one run of Algorithm 1 on eq. 9's D4 at the
// defaults of --n-min: the basis of nminRunWork. Read its CPU time (e.g.
// /usr/bin/time on the test binary): ns/op is wall time, longer on a
// loaded machine.
func BenchmarkNMinRuns(b *testing.B) {
	a := closedform.ProposeTestSample{Epsilon: 1, Delta: 0.001, XL: 0.9, XH: 1.8, Alpha: 2, Beta: 1, Rho1: 1.01, Rho2: 0.05, Gamma1: 0.1, N1: 17864389}
	n, slope := 17864389.0, math.Pow(17864389, 1.005)
	sets := []nminDataset{{"D4", []closedform.WeightedPoint{{X: 1.8, Y: slope * 1.8, Count: n - 1}, {X: 0.9, Y: slope * 0.9, Count: 1}}}}
	b.ResetTimer()
	if _, err := simulateNMin(context.Background(), a, sets, slope, b.N, 1); err != nil {
		b.Fatal(err)
	}
}
