package report_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/report"
)

// noisySum releases the sum of the records plus N(0, 1) noise: on
// datasets whose sums differ by 1 it is exactly 1-GDP (Dong, Roth & Su
// 2019, Thm 2.7).
type noisySum struct{}

func (noisySum) Dim() int { return 1 }

func (noisySum) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "noisy sum"}}, nil
}

func (noisySum) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	s := t.RNG.NormFloat64()
	for _, r := range d.Records {
		s += r.X[0]
	}
	return mechanisms.Info{}, emit(0, []float64{s})
}

// Printing the report of an audit run from Go: the text table the audit
// command prints, and the HTML page of --html. The mechanism is 1-GDP, so
// the claim 0.5-GDP is refuted; the verdict names the pair of the claimed
// profile that the error rates rule out.
func Example() {
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-1}}}}
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	r, err := audit.Run(context.Background(), audit.Target{Name: "noisy sum", Mechanism: noisySum{}, Pair: pair},
		audit.Options{Trials: 20000, Seed: 1, Delta: 1e-5, Claims: []audit.Claim{audit.GDPClaim(0.5)}}, audit.Execution{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var table bytes.Buffer
	if err := report.WriteTable(&table, r); err != nil {
		fmt.Println(err)
		return
	}
	// The verdict, at the end of the table, names the (ε, δ) pair refuted.
	_, verdict, _ := strings.Cut(table.String(), "verdict: ")
	fmt.Print("verdict: " + verdict)
	// The HTML page is one self-contained file; the scenario shown in it
	// is whatever text the caller passes (here none).
	f, err := os.CreateTemp("", "report-*.html")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	if err := report.WriteHTML(f, r, audit.CurrentVersions(), nil); err != nil {
		fmt.Println(err)
	}
	f.Close()
	// Output:
	// verdict: VIOLATION
	//   claimed 0.5-GDP at noisy sum: (ε, δ) = (0.2214, 0.119) refuted, a pair other than the claim's ε at δ = 1e-05
	//   — whole-profile test: the claimed profile gives δ(0.2214) = 0.119, and the threshold attack under the gdp
	//   estimator's rule errs FP 1167/5024, FN 1916/4976 on the evaluation runs: FPR ≤ 0.2442, FNR ≤ 0.3987 at
	//   confidence 0.95; then FNR + e^ε·FPR ≤ 0.7035 < 1 − δ = 0.8812, which no (0.2214, 0.119)-DP mechanism allows
	//   (Heller & Fetaya eq. 10)
	//   level: 1 claim tested, at confidence 0.95 (α = 0.05); tested once, on the release, attack and rule chosen
	//          for it on the selection runs (no evaluation run enters the choice, so α is not divided over them)
}
