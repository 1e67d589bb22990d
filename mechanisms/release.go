package mechanisms

import (
	"fmt"
	"sort"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
)

// ReleaseMode says which states of a run are released.
type ReleaseMode string

const (
	// ReleaseFinal releases the last state only.
	ReleaseFinal ReleaseMode = "final"
	// ReleaseEpochs releases the state at the end of every Every-th epoch
	// (the per-epoch audits of Heller & Fetaya §V).
	ReleaseEpochs ReleaseMode = "epochs"
	// ReleaseSnapshots releases the states after the iterations listed in At.
	ReleaseSnapshots ReleaseMode = "snapshots"
	// ReleaseTrajectory releases every Every-th state (a thinned path).
	ReleaseTrajectory ReleaseMode = "trajectory"
	// ReleaseEstimator releases one noisy Monte Carlo estimator (Bertazzi
	// et al. eq. 5): the average of a linear function of the states over
	// a window of iterations plus noise (Estimator, EstimatorSpec).
	ReleaseEstimator ReleaseMode = "estimator"
)

// ReleaseSpec chooses the release points of a run. Iterations are counted
// from 1: "iteration k" is the state after k updates.
type ReleaseSpec struct {
	Mode ReleaseMode `yaml:"mode" json:"mode"`
	// Every is the epoch stride (ReleaseEpochs) or the thinning
	// (ReleaseTrajectory); 0 means 1.
	Every int `yaml:"every,omitempty" json:"every,omitempty"`
	// At lists iterations for ReleaseSnapshots.
	At []int `yaml:"at,omitempty" json:"at,omitempty"`
	// Estimator describes the ReleaseEstimator release.
	Estimator *EstimatorSpec `yaml:"estimator,omitempty" json:"estimator,omitempty"`
}

// ReleasePoint is one release of a run.
type ReleasePoint struct {
	Iteration int    `json:"iteration"`
	Label     string `json:"label"`
	// Epoch is the epoch the release ends, for per-epoch releases (0
	// otherwise).
	Epoch int `json:"epoch,omitempty"`
}

// MaxReleasePoints bounds the number of release points of one run, so that
// a thinned trajectory cannot exhaust memory by accident.
const MaxReleasePoints = 100000

// Points resolves the spec for a run of total iterations whose epochs have
// perEpoch iterations. Errors are *field.Error about the spec's fields (the
// holder of the spec adds "Release").
func (r ReleaseSpec) Points(total, perEpoch int) ([]ReleasePoint, error) {
	every := r.Every
	if every < 0 {
		return nil, field.Errorf(field.At("Every", "every"), "must be ≥ 1, got %d", every)
	}
	if every == 0 {
		every = 1
	}
	var pts []ReleasePoint
	var err error
	switch r.Mode {
	case ReleaseFinal, "":
		pts = []ReleasePoint{{Iteration: total, Label: "final"}}
	case ReleaseEpochs:
		pts, err = epochPoints(total, perEpoch, every)
	case ReleaseSnapshots:
		pts, err = r.snapshotPoints(total)
	case ReleaseTrajectory:
		pts, err = trajectoryPoints(total, every)
	case ReleaseEstimator:
		pts, err = r.Estimator.points(total)
	default:
		return nil, field.Errorf(field.At("Mode", "mode"), "must be one of final, epochs, snapshots, trajectory, estimator, got %q", r.Mode)
	}
	if err != nil {
		return nil, err
	}
	if len(pts) > MaxReleasePoints {
		return nil, field.Errorf(nil, "more than %d release points; thin the trajectory (release.every)", MaxReleasePoints)
	}
	return pts, nil
}

// epochPoints are the ends of every every-th epoch of perEpoch iterations
// within total.
func epochPoints(total, perEpoch, every int) ([]ReleasePoint, error) {
	if perEpoch < 1 {
		return nil, field.Errorf(field.At("Mode", "mode"), "epochs needs an epoch length ≥ 1")
	}
	if epochs := total / perEpoch; every > epochs && epochs >= 1 {
		return nil, field.Errorf(field.At("Every", "every"), "must be at most the run's %d epochs, got %d", epochs, every)
	}
	var pts []ReleasePoint
	// Checked arithmetic: a stride or epoch count near the int range must
	// end the schedule, never wrap around to negative epochs.
	for e := every; ; {
		it, ok := MulCount(e, perEpoch)
		if !ok || it > total {
			break
		}
		pts = append(pts, ReleasePoint{Iteration: it, Label: fmt.Sprintf("epoch %d", e), Epoch: e})
		if len(pts) > MaxReleasePoints {
			break
		}
		if e, ok = addCount(e, every); !ok {
			break
		}
	}
	if len(pts) == 0 {
		return nil, field.Errorf(nil, "a run of %d iterations has no complete epoch of %d iterations", total, perEpoch)
	}
	return pts, nil
}

// snapshotPoints are the iterations of r.At, sorted, each in [1, total]
// and listed once.
func (r ReleaseSpec) snapshotPoints(total int) ([]ReleasePoint, error) {
	if len(r.At) == 0 {
		return nil, field.Errorf(field.At("At", "at"), "snapshots need at least one iteration")
	}
	at := append([]int(nil), r.At...)
	sort.Ints(at)
	var pts []ReleasePoint
	for i, k := range at {
		if k < 1 || k > total {
			return nil, field.Errorf(field.At("At", "at"), "iterations must be in [1, %d], got %d", total, k)
		}
		if i > 0 && at[i-1] == k {
			return nil, field.Errorf(field.At("At", "at"), "iteration %d listed twice", k)
		}
		pts = append(pts, ReleasePoint{Iteration: k, Label: fmt.Sprintf("iteration %d", k)})
	}
	return pts, nil
}

// trajectoryPoints are every every-th iteration within total (stopping
// once past MaxReleasePoints, which Points refuses).
func trajectoryPoints(total, every int) ([]ReleasePoint, error) {
	if every > total {
		return nil, field.Errorf(field.At("Every", "every"), "must be at most the run's %d iterations, got %d", total, every)
	}
	var pts []ReleasePoint
	for k, ok := every, true; ok && k <= total; k, ok = addCount(k, every) {
		pts = append(pts, ReleasePoint{Iteration: k, Label: fmt.Sprintf("iteration %d", k)})
		if len(pts) > MaxReleasePoints {
			break
		}
	}
	return pts, nil
}
