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
// dataset it ran on. As a Mechanism, trial i replays Rows[i]; an audit of
// samples therefore uses AssignGiven with Sides and Trials = len(Rows)
// (Options sets them).
//
// The bounds are valid only if the rows are independent runs of the same
// mechanism: the engine cannot check that, only count the rows that
// repeat another exactly (CountDuplicateRows), which independent runs of
// a continuous sampler never do.
type Samples struct {
	// Name describes where the samples come from.
	Name   string
	Points []mechanisms.ReleasePoint
	Dim    int
	Rows   [][]float64
	Sides  []dataset.Side
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

// samplesMechanism replays the rows.
type samplesMechanism struct{ s *Samples }

func (m samplesMechanism) Name() string { return m.s.Name }
func (m samplesMechanism) Dim() int     { return m.s.Dim }

func (m samplesMechanism) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return m.s.Points, nil
}

func (m samplesMechanism) Run(_ context.Context, t mechanisms.Trial, _ *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	if t.Index < 0 || t.Index >= len(m.s.Rows) {
		return mechanisms.Info{}, fmt.Errorf("samples: no run %d", t.Index)
	}
	row := m.s.Rows[t.Index]
	for k := range m.s.Points {
		if err := emit(k, row[k*m.s.Dim:(k+1)*m.s.Dim]); err != nil {
			return mechanisms.Info{}, err
		}
	}
	return mechanisms.Info{}, nil
}

// Mechanism returns the samples as a mechanism that replays run i as
// trial i.
func (s *Samples) Mechanism() mechanisms.Mechanism { return samplesMechanism{s} }
