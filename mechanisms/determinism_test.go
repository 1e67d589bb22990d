package mechanisms

import (
	"context"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// A trial's releases depend only on (seed, side, trial index, dataset,
// configuration): every sampler, run twice, or concurrently with other
// trials in another order, gives bit-identical releases (every coordinate
// of every release) and counters; different trials differ.
func TestTrialDeterminism(t *testing.T) {
	lin, _ := syntheticLinReg(50, []float64{1.5}, 2, 1, 1)
	mix := heikkilaMixture()
	mixData, _ := syntheticMixture(400, heikkilaTheta(), mix, 1)
	gm, gd, _, _ := gaussTarget(t)
	digits, err := dataset.ReadCSVFile(digitsPath, dataset.DigitsOptions())
	if err != nil {
		t.Fatal(err)
	}
	digits300 := &dataset.Dataset{Name: "digits-300", Records: digits.Records[:300]}
	epochs := ReleaseSpec{Mode: ReleaseEpochs}
	every10 := ReleaseSpec{Mode: ReleaseTrajectory, Every: 10}
	prior := Init{FromPrior: true}
	digitsSGLD := &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: 16, Scheme: Reshuffle, Epochs: 2, Clip: 2}
	cases := []struct {
		name string
		c    *Chain
		d    *dataset.Dataset
	}{
		{"sgld-cyclic", &Chain{Model: NewLinReg1D(1, 2), Sampler: &SGLD{Step: StepSchedule{Eta: 0.001}, Batch: 1, Scheme: Cyclic, Epochs: 3}, Init: prior, Release: epochs}, lin},
		{"sgld-poisson", &Chain{Model: NewLinReg1D(1, 2), Sampler: &SGLD{Step: StepSchedule{Eta: 0.001, B: 10, Gamma: 0.55}, Batch: 5, Scheme: Poisson, Epochs: 3, Clip: 0.5}, Init: prior, Release: epochs}, lin},
		{"sgld-with-replacement", &Chain{Model: NewLinReg1D(1, 2), Sampler: &SGLD{Step: StepSchedule{Eta: 0.001}, Batch: 1, Scheme: WithReplacement, Epochs: 3}, Init: prior, Release: epochs}, lin},
		{"ula", &Chain{Model: NewLinReg1D(1, 2), Sampler: &ULA{Gamma: 0.001, Iters: 40}, Init: prior, Release: every10}, lin},
		{"barker-full", &Chain{Model: NewLinReg1D(1, 2), Sampler: &DPBarker{Step: 0.1, Iters: 30, Clip: 1}, Init: prior, Release: every10}, lin},
		{"barker-exact", &Chain{Model: NewLinReg1D(1, 2), Sampler: &DPBarker{Step: 0.1, Iters: 30, Exact: true}, Init: prior, Release: every10}, lin},
		{"barker-subsampled", &Chain{Model: mix, Sampler: &DPBarker{Step: 0.3, Iters: 60, Batch: 40, N0: 20}, Init: prior, Release: every10}, mixData},
		{"dp-hmc", &Chain{Model: gm, Sampler: &DPHMC{Iters: 30, Step: 0.04, LeapfrogSteps: 5, ClipLLR: 3, ClipGrad: 3, TauL: 0.2, TauG: 0.2}, Init: Init{Theta: []float64{0.4, 0.7}}, Release: every10}, gd},
		{"dp-hmc-halton", &Chain{Model: hideRatio{gm}, Sampler: &DPHMC{Iters: 30, Step: 0.08, LeapfrogSteps: 5, StepJitter: JitterHalton, ClipLLR: 3, ClipGrad: 3, TauL: 0.2, TauG: 0.2}, Init: Init{Theta: []float64{0.4, 0.7}}, Release: every10}, gd},
		{"dp-penalty", &Chain{Model: gm, Sampler: &DPPenalty{Iters: 60, ProposalSD: []float64{0.1}, ClipLLR: 3, Tau: 0.2}, Init: Init{Theta: []float64{0.4, 0.7}}, Release: every10}, gd},
		{"dp-penalty-hide", &Chain{Model: hideRatio{gm}, Sampler: &DPPenalty{Iters: 60, ProposalSD: []float64{0.1}, ClipLLR: 3, Tau: 0.2}, Init: Init{Theta: []float64{0.4, 0.7}}, Release: every10}, gd},
		{"softmax-digits", &Chain{Model: Softmax{Features: 64, Classes: 10, Alpha: 1}, Sampler: digitsSGLD, Init: prior, Release: epochs}, digits300},
		{"mlp-digits", &Chain{Model: MLP{Features: 64, Hidden: 8, Classes: 10, Alpha: 1}, Sampler: digitsSGLD, Init: prior, Release: epochs}, digits300},
	}
	for _, tc := range cases {
		if err := tc.c.Check(tc.d); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		const trials = 16
		runOne := func(k int) ([]uint64, Info) {
			var out []uint64
			info, err := tc.c.Run(context.Background(), NewTrial(42, dataset.SideDPrime, k), tc.d, func(_ int, th []float64) error {
				for _, x := range th {
					out = append(out, math.Float64bits(x))
				}
				return nil
			})
			if err != nil {
				t.Errorf("%s trial %d: %v", tc.name, k, err)
			}
			return out, info
		}
		serial, infos := make([][]uint64, trials), make([]Info, trials)
		for k := range serial {
			serial[k], infos[k] = runOne(k)
		}
		parallel, pinfos := make([][]uint64, trials), make([]Info, trials)
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for k := trials - 1 - w; k >= 0; k -= 3 { // another order
					parallel[k], pinfos[k] = runOne(k)
				}
			}(w)
		}
		wg.Wait()
		for k := range serial {
			if len(serial[k]) == 0 || !slices.Equal(serial[k], parallel[k]) || !reflect.DeepEqual(infos[k], pinfos[k]) {
				t.Fatalf("%s trial %d: releases or counters differ between a serial and a concurrent run", tc.name, k)
			}
		}
		if slices.Equal(serial[0], serial[1]) {
			t.Errorf("%s: trials 0 and 1 coincide", tc.name)
		}
	}
	if TrialRNG(1, dataset.SideD, 0, 0).Uint64() == TrialRNG(1, dataset.SideDPrime, 0, 0).Uint64() {
		t.Error("sides share a stream")
	}
}

func TestSGLDDivergence(t *testing.T) {
	d, _ := syntheticLinReg(20, []float64{1}, 1, 3, 1)
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
	d, _ := syntheticLinReg(10, []float64{1}, 1, 1, 1)
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
		if err == nil || !contains(yamlText(err, "sampler"), b.want) {
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

// A batch-1 chain that diverges after some releases has made exactly the
// releases whose iteration precedes the divergence, before it reports the
// divergence — each the state at that release of the same chain run for
// fewer epochs, which does not diverge (its random numbers are a prefix of
// the longer run's) — whichever scheme, although the fast loops make their
// releases when the run ends.
func TestSGLDDivergenceAfterReleases(t *testing.T) {
	d, _ := syntheticLinReg(20, []float64{1}, 1, 3, 1)
	run := func(scheme IndexScheme, epochs int) ([]float64, error) {
		c := &Chain{Model: NewLinReg1D(1, 1), Sampler: &SGLD{Step: StepSchedule{Eta: 0.6}, Batch: 1, Scheme: scheme, Epochs: epochs},
			Init: Init{Theta: []float64{1}}, Release: ReleaseSpec{Mode: ReleaseEpochs}}
		var got []float64
		_, err := c.Run(context.Background(), Trial{RNG: TrialRNG(2, dataset.SideD, 0, 0)}, d, func(k int, th []float64) error {
			if k != len(got) {
				t.Fatalf("%s: release %d out of order", scheme, k)
			}
			got = append(got, th[0])
			return nil
		})
		return got, err
	}
	for _, scheme := range []IndexScheme{Cyclic, WithReplacement, Reshuffle} {
		got, err := run(scheme, 400)
		de, ok := err.(*DivergedError)
		if !ok {
			t.Fatalf("%s: err = %v, want a divergence", scheme, err)
		}
		if want := (de.Iteration - 1) / 20; len(got) != want || want == 0 {
			t.Fatalf("%s: %d releases before the divergence at iteration %d, want %d", scheme, len(got), de.Iteration, want)
		}
		want, err := run(scheme, len(got))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: released %v before diverging; the run of %d epochs released %v (%v)", scheme, got, len(got), want, err)
		}
	}
}
