package audit

import (
	"context"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Samples are precomputed releases of independent runs — outputs of a
// sampler the engine never ran. Rows[i] holds run i's releases, release
// point after release point (len(Points)·Dim values), and Sides[i] the
// dataset it ran on. They are trials, not a mechanism: NewSamples prepares
// their audit (AssignGiven with Sides and Trials = len(Rows), which
// Options sets) and Trials stores their features.
//
// The bounds are valid only if the rows are independent runs of the same
// mechanism: the engine cannot check that, only count the rows that
// repeat another exactly (CountDuplicateRows) more often than independent
// runs would at the values' resolution (ExpectedDuplicateRows).
type Samples struct {
	// Name describes where the samples come from.
	Name   string
	Points []mechanisms.ReleasePoint
	// IterationsUnknown says that Points[k].Iteration is only the
	// release's rank (mechanisms.PointsFromLabels).
	IterationsUnknown bool
	Dim               int
	Rows              [][]float64
	Sides             []dataset.Side
}

// Check validates the shape of the samples and that every value is finite.
func (s *Samples) Check() error {
	if s.Dim < 1 || len(s.Points) < 1 {
		return fmt.Errorf("samples: need at least one release point of dimension ≥ 1, got %d points of dimension %d", len(s.Points), s.Dim)
	}
	if len(s.Sides) != len(s.Rows) {
		return fmt.Errorf("samples: %d rows but %d sides", len(s.Rows), len(s.Sides))
	}
	w := len(s.Points) * s.Dim
	for i, r := range s.Rows {
		if len(r) != w {
			return fmt.Errorf("samples: run %d has %d values, expected %d release points × %d = %d", i, len(r), len(s.Points), s.Dim, w)
		}
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("samples: run %d, value %d (release %q) is not finite", i, j, s.Points[j/s.Dim].Label)
			}
		}
	}
	return nil
}

// Options returns o with the trial count, the assignment and the sides of
// the samples.
func (s *Samples) Options(o Options) Options {
	o.Trials, o.Assignment, o.Sides = len(s.Rows), AssignGiven, s.Sides
	return o
}

// NewSamples prepares the audit of precomputed samples: its design comes
// from the samples (release points, dimension, sides: Options sets the
// trial count, the assignment and the sides) and from o, and its trials
// from the rows (Samples.Trials). t names the audit and states its notes;
// its Mechanism and Pair must be empty (the samples' own name stands for
// the mechanism), and theorems cannot be claimed (they need the sampler).
func NewSamples(t Target, s *Samples, o Options) (*Audit, error) {
	if t.Mechanism != nil || t.Pair.D != nil || t.Pair.DPrime != nil || t.Accuracy != nil || t.ReportedTestSize > 0 {
		return nil, fmt.Errorf("audit: samples carry their releases: the target may only name the audit and state notes")
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	o = s.Options(o)
	if err := o.Validate(); err != nil {
		return nil, err
	}
	a, err := prepare(t, s.Name, s.Dim, o.withDefaults(s.Dim), s.Points)
	if err != nil {
		return nil, err
	}
	a.design.IterationsUnknown = s.IterationsUnknown
	return a, nil
}

// Trials returns the samples' trials for a, an audit NewSamples prepared
// from them: row i is trial i, its releases mapped to features as a
// simulation stores them.
func (s *Samples) Trials(ctx context.Context, a *Audit) (*Trials, error) {
	n := len(s.Rows)
	if a.target.Mechanism != nil || a.opts.Trials != n || len(a.points) != len(s.Points) || a.design.Dim != s.Dim {
		return nil, fmt.Errorf("audit: the audit was not prepared from these samples (NewSamples)")
	}
	t := a.newTrials(0, n, nil)
	var i int
	var serr error
	ref := a.newTrialWorker(nil, func(k int, feat []float64, _ int) { copy(t.Ref[k*t.F:], feat) })
	tw := a.newTrialWorker(nil, func(k int, feat []float64, _ int) {
		if e := t.set(i, k, feat); e != nil && serr == nil {
			serr = e
		}
	})
	if err := ref.replay(s.Rows[0], s.Dim); err != nil {
		return nil, fmt.Errorf("samples: run 0: %w", err)
	}
	for i = 0; i < n; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if err := tw.replay(s.Rows[i], s.Dim); err != nil {
			return nil, fmt.Errorf("samples: run %d: %w", i, err)
		}
		if serr != nil {
			return nil, serr
		}
		t.Side[i] = s.Sides[i]
		if t.Hash != nil {
			t.Hash[i] = tw.hash
			t.keepProbes(i, tw.probe)
		}
	}
	return t, nil
}
