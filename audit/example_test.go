package audit_test

import (
	"context"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// noisySum is a user's own mechanism: the sum of the records plus N(0, 1)
// noise, one release. On datasets whose sums differ by 1 it is exactly
// 1-GDP (Dong, Roth & Su 2019, Thm 2.7).
type noisySum struct{}

func (noisySum) Dim() int { return 1 }

func (noisySum) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "noisy sum"}}, nil
}

func (noisySum) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	s := t.RNG.NormFloat64() // all randomness from the trial's source
	for _, r := range d.Records {
		s += r.X[0]
	}
	return mechanisms.Info{}, emit(0, []float64{s})
}

// Auditing one's own mechanism: D and D′ differ in one record, 20,000
// runs, and the claim "1-GDP" — which the mechanism satisfies — is tested
// against the whole audit. A claim of 0.5-GDP would be refuted.
func Example() {
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-1}}}}
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	for _, mu := range []float64{1, 0.5} {
		r, err := audit.Run(context.Background(), audit.Target{Name: "noisy sum", Mechanism: noisySum{}, Pair: pair},
			audit.Options{Trials: 20000, Seed: 1, Delta: 1e-5, Claims: []audit.Claim{audit.GDPClaim(mu)}}, audit.Execution{})
		if err != nil {
			fmt.Println(err)
			return
		}
		e := r.Epsilon
		fmt.Printf("claim %g-GDP: ε_lb = %.3f (%s; %d runs; confidence %g), verdict: %s\n",
			mu, e.Epsilon, e.Estimator, r.EvalRuns, e.Confidence, r.Verdict)
	}
	// Output:
	// claim 1-GDP: ε_lb = 2.029 (Clopper-Pearson region bound (Heller-Fetaya eq. 12); 10000 runs; confidence 0.95), verdict: not refuted
	// claim 0.5-GDP: ε_lb = 2.029 (Clopper-Pearson region bound (Heller-Fetaya eq. 12); 10000 runs; confidence 0.95), verdict: VIOLATION
}
