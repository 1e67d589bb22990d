package mechanisms

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// A trial's releases depend only on (seed, side, trial index, dataset,
// configuration): the same trial run twice, or run concurrently with others
// in any order, gives bit-identical output.
func TestTrialDeterminism(t *testing.T) {
	d, _ := SyntheticLinReg(50, []float64{1.5}, 2, 1, 1)
	samplers := map[string]Sampler{
		"sgld-cyclic":  &SGLD{Step: StepSchedule{Eta: 0.001}, Batch: 1, Scheme: Cyclic, Epochs: 3},
		"sgld-poisson": &SGLD{Step: StepSchedule{Eta: 0.001, B: 10, Gamma: 0.55}, Batch: 5, Scheme: Poisson, Epochs: 3, Clip: 0.5},
		"ula":          &ULA{Gamma: 0.001, Iters: 40},
	}
	for name, s := range samplers {
		c := &Chain{Model: NewLinReg1D(1, 2), Sampler: s, Init: Init{FromPrior: true}, Release: ReleaseSpec{Mode: ReleaseEpochs}}
		if err := c.Check(d); err != nil {
			t.Fatal(err)
		}
		const trials = 64
		runOne := func(k int) []uint64 {
			var out []uint64
			_, err := c.Run(context.Background(), Trial{RNG: TrialRNG(42, dataset.SideDPrime, k, 0)}, d, func(_ int, th []float64) error {
				out = append(out, math.Float64bits(th[0]))
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			return out
		}
		serial := make([][]uint64, trials)
		for k := range serial {
			serial[k] = runOne(k)
		}
		parallel := make([][]uint64, trials)
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for k := trials - 1 - w; k >= 0; k -= 4 { // a different order
					parallel[k] = runOne(k)
				}
			}(w)
		}
		wg.Wait()
		for k := range serial {
			if len(serial[k]) == 0 || len(serial[k]) != len(parallel[k]) {
				t.Fatalf("%s trial %d: %d vs %d releases", name, k, len(serial[k]), len(parallel[k]))
			}
			for i := range serial[k] {
				if serial[k][i] != parallel[k][i] {
					t.Fatalf("%s trial %d release %d differs between runs", name, k, i)
				}
			}
		}
		// Different trials and sides do differ.
		other := runOne(1)
		if other[0] == serial[0][0] {
			t.Errorf("%s: trials 0 and 1 coincide", name)
		}
	}
	if TrialRNG(1, dataset.SideD, 0, 0).Uint64() == TrialRNG(1, dataset.SideDPrime, 0, 0).Uint64() {
		t.Error("sides share a stream")
	}
}

func TestSGLDDivergence(t *testing.T) {
	d, _ := SyntheticLinReg(20, []float64{1}, 1, 3, 1)
	for _, m := range []Model{NewLinReg1D(1, 1), hideAffine{NewLinReg1D(1, 1)}} {
		c := &Chain{Model: m, Sampler: &SGLD{Step: StepSchedule{Eta: 5}, Batch: 1, Scheme: Cyclic, Epochs: 200},
			Init: Init{Theta: []float64{1}}, Release: ReleaseSpec{Mode: ReleaseFinal}}
		_, err := c.Run(context.Background(), Trial{RNG: TrialRNG(1, dataset.SideD, 0, 0)}, d, nil)
		de, ok := err.(*DivergedError)
		if !ok || de.Iteration < 1 || de.Iteration > 4000 {
			t.Errorf("diverging chain: err = %v", err)
		}
	}
}

func TestCheckErrors(t *testing.T) {
	d, _ := SyntheticLinReg(10, []float64{1}, 1, 1, 1)
	m := NewLinReg1D(1, 1)
	bad := []struct {
		s    Sampler
		want string
	}{
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 11, Scheme: Cyclic, Epochs: 1}, "sampler.batch: must be in [1, n=10]"},
		{&SGLD{Step: StepSchedule{Eta: -1}, Batch: 1, Scheme: Cyclic, Epochs: 1}, "sampler.step.eta"},
		{&SGLD{Step: StepSchedule{Eta: math.NaN()}, Batch: 1, Scheme: Cyclic, Epochs: 1}, "sampler.step.eta"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 1, Scheme: "random", Epochs: 1}, "sampler.scheme"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 1, Scheme: Cyclic}, "set exactly one of epochs"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 1, Scheme: Cyclic, Epochs: 1, Clip: -1}, "sampler.clip"},
		{&SGLD{Step: StepSchedule{Eta: 0.1, Gamma: 0.5}, Batch: 1, Scheme: Cyclic, Epochs: 1}, "sampler.step.b"},
		{&ULA{Gamma: 0, Iters: 1}, "sampler.gamma"},
		{&ULA{Gamma: 0.1, Iters: 0}, "sampler.iterations"},
	}
	for _, b := range bad {
		err := b.s.Check(m, d)
		if err == nil || !contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want %q", b.s.Name(), err, b.want)
		}
	}
	if err := (&dataset.Dataset{Name: "empty"}).Validate(1); err == nil {
		t.Error("empty dataset accepted")
	}
	if _, err := (ReleaseSpec{Mode: ReleaseSnapshots, At: []int{0}}).Points(10, 1); err == nil {
		t.Error("snapshot at iteration 0 accepted")
	}
	if _, err := dataset.CounterexamplePair(0, 1, 1); err == nil {
		t.Error("n = 0 accepted")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
