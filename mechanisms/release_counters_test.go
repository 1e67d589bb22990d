package mechanisms

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Every sampler records its counters at each release: one snapshot per
// release point, at that point's iteration, non-decreasing, the last one
// equal to the run's totals when the last release is the last iteration;
// for the accept/reject samplers the accepted count grows by one exactly
// at the iterations whose state changed (proposals are continuous, so a
// rejected proposal leaves θ bit-identical and an accepted one moves it
// with probability 1).
func TestPerReleaseCounters(t *testing.T) {
	lin, _ := syntheticLinReg(30, []float64{1.5}, 2, 1, 1)
	mix := heikkilaMixture()
	mixData, _ := syntheticMixture(200, heikkilaTheta(), mix, 1)
	gm, gd, _, _ := gaussTarget(t)
	every1 := ReleaseSpec{Mode: ReleaseTrajectory, Every: 1}
	start := Init{Theta: []float64{0.4, 0.7}}
	cases := []struct {
		name string
		c    *Chain
		d    *dataset.Dataset
		mh   bool
	}{
		{"dp-penalty", &Chain{Model: gm, Sampler: &DPPenalty{Iters: 40, ProposalSD: []float64{0.1}, ClipLLR: 3, Tau: 0.2}, Init: start, Release: every1}, gd, true},
		{"dp-hmc", &Chain{Model: gm, Sampler: &DPHMC{Iters: 40, Step: 0.04, LeapfrogSteps: 3, ClipLLR: 3, ClipGrad: 0.5, TauL: 0.2, TauG: 0.2}, Init: start, Release: every1}, gd, true},
		{"barker-full", &Chain{Model: NewLinReg1D(1, 2), Sampler: &DPBarker{Step: 0.1, Iters: 40, Clip: 1}, Init: Init{FromPrior: true}, Release: every1}, lin, true},
		{"barker-subsampled", &Chain{Model: mix, Sampler: &DPBarker{Step: 0.3, Iters: 40, Batch: 40, N0: 20}, Init: Init{FromPrior: true}, Release: every1}, mixData, true},
		{"sgld-clipped", &Chain{Model: gm, Sampler: &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 4, Scheme: Poisson, Iters: 40, Clip: 1}, Init: start, Release: every1}, gd, false},
		{"sgld-affine-cyclic", &Chain{Model: NewLinReg1D(1, 2), Sampler: &SGLD{Step: StepSchedule{Eta: 0.001}, Batch: 1, Scheme: Cyclic, Epochs: 2}, Init: Init{FromPrior: true}, Release: ReleaseSpec{Mode: ReleaseSnapshots, At: []int{7, 30, 59}}}, lin, false},
		{"sgld-affine-batch", &Chain{Model: NewLinReg1D(1, 2), Sampler: &SGLD{Step: StepSchedule{Eta: 0.001}, Batch: 4, Scheme: Reshuffle, Epochs: 2}, Init: Init{FromPrior: true}, Release: ReleaseSpec{Mode: ReleaseEpochs}}, lin, false},
		{"ula-projected", &Chain{Model: gm, Sampler: &ULA{Gamma: 0.05, Iters: 40, Radius: 0.3}, Init: start, Release: every1}, gd, false},
		{"gaussian-query", &Chain{Model: gm, Sampler: &GaussianQuery{Sigma: 1, Clip: 2}, Release: ReleaseSpec{Mode: ReleaseFinal}}, gd, false},
	}
	for _, tc := range cases {
		if err := tc.c.Check(tc.d); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		pts, _ := tc.c.Points(tc.d)
		var states [][]float64
		info, err := tc.c.Run(context.Background(), NewTrial(7, dataset.SideD, 3), tc.d, func(_ int, th []float64) error {
			states = append(states, slices.Clone(th))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(info.PerRelease) != len(pts) {
			t.Fatalf("%s: %d snapshots for %d release points", tc.name, len(info.PerRelease), len(pts))
		}
		prev := Snapshot{}
		prevState := tc.c.Init.Theta
		for k, s := range info.PerRelease {
			if s.Iterations != pts[k].Iteration || s.Runs != 1 {
				t.Errorf("%s release %d: iterations %d (want %d), runs %d", tc.name, k, s.Iterations, pts[k].Iteration, s.Runs)
			}
			for _, c := range [][2]int{{s.Proposals, prev.Proposals}, {s.Accepted, prev.Accepted}, {s.GradEvals, prev.GradEvals},
				{s.ClippedGrads, prev.ClippedGrads}, {s.LLREvals, prev.LLREvals}, {s.ClippedLLRs, prev.ClippedLLRs}} {
				if c[0] < c[1] {
					t.Errorf("%s release %d: a counter decreased: %+v after %+v", tc.name, k, s, prev)
				}
			}
			if s.ClippedGrads > s.GradEvals || s.ClippedLLRs > s.LLREvals || s.Accepted > s.Proposals {
				t.Errorf("%s release %d: more events than evaluations: %+v", tc.name, k, s)
			}
			if tc.mh && prevState != nil {
				moved := !slices.Equal(states[k], prevState)
				if acc := s.Accepted - prev.Accepted; (acc == 1) != moved || acc > 1 || s.Proposals-prev.Proposals != 1 {
					t.Errorf("%s release %d: %d acceptances, %d proposals, state moved %v", tc.name, k, acc, s.Proposals-prev.Proposals, moved)
				}
			}
			prev, prevState = s, states[k]
		}
		last := info.PerRelease[len(pts)-1]
		if pts[len(pts)-1].Iteration == info.Iterations {
			// Every counter of the last snapshot, field by field.
			want := Snapshot{Iterations: info.Iterations, Proposals: info.Proposals, Accepted: info.Accepted,
				ClippedGrads: info.ClippedGrads, GradEvals: info.GradEvals, ClippedLLRs: info.ClippedLLRs,
				LLREvals: info.LLREvals, Projections: info.Projections,
				VarianceCheckFailures: info.VarianceCheckFailures, Runs: 1}
			if last != want {
				t.Errorf("%s: last snapshot %+v, totals %+v", tc.name, last, want)
			}
		}
		if tc.mh && (last.Accepted == 0 || last.Accepted == last.Proposals) {
			t.Errorf("%s: %d of %d accepted: the acceptance check saw only one kind of step", tc.name, last.Accepted, last.Proposals)
		}
	}
	// The batch-1 fast path counts one gradient per iteration.
	i := slices.IndexFunc(cases, func(tc struct {
		name string
		c    *Chain
		d    *dataset.Dataset
		mh   bool
	}) bool {
		return tc.name == "sgld-affine-cyclic"
	})
	if i < 0 {
		t.Fatal("no case sgld-affine-cyclic")
	}
	c := cases[i].c
	info, _ := c.Run(context.Background(), NewTrial(7, dataset.SideD, 3), lin, nil)
	for k, s := range info.PerRelease {
		if s.GradEvals != c.Release.At[k] {
			t.Errorf("affine batch-1 release %d: %d gradient evaluations, want %d", k, s.GradEvals, c.Release.At[k])
		}
	}
}

// Sums over runs add the snapshots entry by entry and count the runs; a
// run without snapshots adds nothing to them.
func TestInfoAddPerRelease(t *testing.T) {
	a := Info{Iterations: 10, Proposals: 10, Accepted: 4, PerRelease: []Snapshot{{Iterations: 5, Proposals: 5, Accepted: 1, Runs: 1}, {Iterations: 10, Proposals: 10, Accepted: 4, Runs: 1}}}
	b := Info{Iterations: 10, Proposals: 10, Accepted: 7, PerRelease: []Snapshot{{Iterations: 5, Proposals: 5, Accepted: 3, Runs: 1}, {Iterations: 10, Proposals: 10, Accepted: 7, Runs: 1}}}
	var sum Info
	sum.Add(a)
	sum.Add(Info{Iterations: 10, Proposals: 10, Accepted: 9}) // no snapshots
	sum.Add(b)
	want := []Snapshot{{Iterations: 10, Proposals: 10, Accepted: 4, Runs: 2}, {Iterations: 20, Proposals: 20, Accepted: 11, Runs: 2}}
	if !reflect.DeepEqual(sum.PerRelease, want) || sum.Accepted != 20 || sum.Proposals != 30 {
		t.Errorf("sum %+v", sum)
	}
	if a.PerRelease[0].Accepted != 1 {
		t.Error("Add modified its argument's snapshots")
	}
	if sum.Totals().PerRelease != nil || sum.PerRelease == nil {
		t.Error("Totals must drop the snapshots and only them")
	}
}
