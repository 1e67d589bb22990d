package mechanisms

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
)

// Plant is a deliberately planted bug, to measure an audit's power: the
// sampler runs with its privacy noise's standard deviation × Noise, its
// clip bound × Clip, its subsampling rate × Rate and Steps iterations more
// than declared, while everything that declares its privacy — the theorem
// guarantees (Guarantees), the claims and the bounds of "audit bounds" —
// keeps the declared values. An unset factor is 1. Each sampler allows
// only the fields that apply to it (PlantFields), a factor of exactly 1
// (the declared value) being accepted everywhere; a nil *Plant plants
// nothing, and the configuration then means what it meant without it.
//
// Steps runs k extra iterations before the declared ones: the release the
// schedule places after t iterations is made after t + k, so that every
// release sees k more data-dependent updates than its guarantee counts
// (Info.Iterations and the per-release snapshots count the iterations
// run).
type Plant struct {
	// Noise multiplies the standard deviation of the privacy noise.
	Noise *float64 `yaml:"noise,omitempty" json:"noise,omitempty"`
	// Clip multiplies the clip bound (the noise keeps its declared scale).
	Clip *float64 `yaml:"clip,omitempty" json:"clip,omitempty"`
	// Rate multiplies the subsampling rate.
	Rate *float64 `yaml:"rate,omitempty" json:"rate,omitempty"`
	// Steps is the number of extra iterations, ≥ 0.
	Steps int `yaml:"steps,omitempty" json:"steps,omitempty"`
}

// PlantFields says which fields of a Plant apply to a sampler
// configuration: for each that does not, why not (empty when it applies).
type PlantFields struct {
	Noise, Clip, Rate, Steps string
}

// Planter is implemented by the samplers that take a planted bug: the
// plant set (nil when none) and the note a report states about it.
type Planter interface {
	// Planted returns the sampler's plant, nil when none.
	Planted() *Plant
	// PlantNote says what the planted sampler runs with against what it
	// declares, for a dataset of n records ("" without a plant).
	PlantNote(n int) string
}

func factor(p *float64) float64 {
	if p == nil {
		return 1
	}
	return *p
}

// noise returns the noise factor (1 when p is nil or unset).
func (p *Plant) noise() float64 {
	if p == nil {
		return 1
	}
	return factor(p.Noise)
}

// clip returns the clip factor (1 when p is nil or unset).
func (p *Plant) clip() float64 {
	if p == nil {
		return 1
	}
	return factor(p.Clip)
}

// rate returns the rate factor (1 when p is nil or unset).
func (p *Plant) rate() float64 {
	if p == nil {
		return 1
	}
	return factor(p.Rate)
}

// steps returns the extra iterations (0 when p is nil).
func (p *Plant) steps() int {
	if p == nil {
		return 0
	}
	return p.Steps
}

// check validates the plant against what applies to the sampler; errors
// are *field.Error about plant.FIELD, relative to the sampler.
func (p *Plant) check(ok PlantFields) error {
	if p == nil {
		return nil
	}
	at := field.At("Plant", "plant")
	for _, f := range []struct {
		goName, yamlName string
		v                *float64
		why              string
	}{{"Noise", "noise", p.Noise, ok.Noise}, {"Clip", "clip", p.Clip, ok.Clip}, {"Rate", "rate", p.Rate, ok.Rate}} {
		if f.v == nil || *f.v == 1 {
			continue // 1 is the declared value, whatever applies
		}
		if f.why != "" {
			return field.Errorf(at.Field(f.goName, f.yamlName), "does not apply: %s", f.why)
		}
		if !(*f.v > 0) || math.IsInf(*f.v, 0) {
			return field.Errorf(at.Field(f.goName, f.yamlName), "must be a finite factor > 0, got %g", *f.v)
		}
	}
	if p.Steps != 0 && ok.Steps != "" {
		return field.Errorf(at.Field("Steps", "steps"), "does not apply: %s", ok.Steps)
	}
	if p.Steps < 0 || p.Steps > MaxIterations {
		return field.Errorf(at.Field("Steps", "steps"), "must be in [0, 2^40], got %d", p.Steps)
	}
	return nil
}

// parts lists the planted deviations ("noise × 0.5", "steps + 3").
func (p *Plant) parts() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, f := range []struct {
		name string
		v    *float64
	}{{"noise", p.Noise}, {"clip", p.Clip}, {"rate", p.Rate}} {
		if f.v != nil && *f.v != 1 {
			out = append(out, fmt.Sprintf("%s × %.6g", f.name, *f.v))
		}
	}
	if p.Steps > 0 {
		out = append(out, fmt.Sprintf("steps + %d", p.Steps))
	}
	return out
}

// suffix is what a planted sampler's Name ends with: " [planted: noise ×
// 0.5, steps + 3]", or "" when nothing is planted.
func (p *Plant) suffix() string {
	parts := p.parts()
	if len(parts) == 0 {
		return ""
	}
	return " [planted: " + strings.Join(parts, ", ") + "]"
}

// note builds a PlantNote from the sampler's name and the declared and run
// values of each planted quantity ("" when nothing is planted).
func (p *Plant) note(sampler string, values []string) string {
	if len(p.parts()) == 0 {
		return ""
	}
	return fmt.Sprintf("Planted bug (%s): %s runs with %s; the theorem bounds and claims keep the declared values.",
		strings.Join(p.parts(), ", "), strings.TrimSuffix(sampler, p.suffix()), strings.Join(values, ", "))
}

// stepsNote is the part of a note about extra iterations.
func (p *Plant) stepsNote() []string {
	if p.steps() == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d extra iterations before the declared ones (a release declared after t iterations is made after t + %d)", p.Steps, p.Steps)}
}

// runValue formats a declared and a run value.
func runValue(what string, declared, run float64) string {
	return fmt.Sprintf("%s %.6g (declared %.6g)", what, run, declared)
}

// shiftAt returns the release iterations of a run with k extra
// iterations: each moved by k (at itself when k is 0; a new slice
// otherwise, at being shared read-only by every run).
func shiftAt(at []int, k int) []int {
	if k == 0 {
		return at
	}
	out := make([]int, len(at))
	for i, v := range at {
		out[i] = v + k
	}
	return out
}
