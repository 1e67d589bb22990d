package attacks

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// FeatureMap turns a released state θ into the feature vector an attack
// sees. Implementations must be safe for concurrent use.
type FeatureMap interface {
	// Names labels the output columns.
	Names() []string
	// Map writes the features of theta into out (len(out) == len(Names())).
	Map(theta []float64, out []float64)
}

// Theta is the raw released state, all coordinates.
type Theta struct{ D int }

// Names implements FeatureMap.
func (t Theta) Names() []string {
	out := make([]string, t.D)
	for i := range out {
		out[i] = fmt.Sprintf("theta[%d]", i)
	}
	return out
}

// Map implements FeatureMap.
func (t Theta) Map(theta, out []float64) { copy(out, theta) }

// Coords selects coordinates of θ.
type Coords struct{ Idx []int }

// Names implements FeatureMap.
func (c Coords) Names() []string {
	out := make([]string, len(c.Idx))
	for i, k := range c.Idx {
		out[i] = fmt.Sprintf("theta[%d]", k)
	}
	return out
}

// Map implements FeatureMap.
func (c Coords) Map(theta, out []float64) {
	for i, k := range c.Idx {
		out[i] = theta[k]
	}
}

// Norm is the Euclidean norm ‖θ‖ (a user-selected statistic).
type Norm struct{}

// Names implements FeatureMap.
func (Norm) Names() []string { return []string{"|theta|"} }

// Map implements FeatureMap.
func (Norm) Map(theta, out []float64) {
	var s float64
	for _, t := range theta {
		s += t * t
	}
	out[0] = math.Sqrt(s)
}

// LogLik is the model-output feature of Heller & Fetaya §V: the model's
// log-likelihood ln p(r | θ) of chosen records under the released θ — for
// an audit, the record that differs between D and D′ in both its versions
// (the canary and the record it replaced).
type LogLik struct {
	Model   mechanisms.Model
	Records []dataset.Record
	Labels  []string
	// Batch, when set, holds the same records packed for a classifier's
	// batched logits (mechanisms.NewLogLikSet), which Map then uses: many
	// records scored as one product, each value within a few ulps of
	// Model.LogLik's.
	Batch *mechanisms.LogLikSet
}

// Names implements FeatureMap.
func (l LogLik) Names() []string {
	out := make([]string, len(l.Records))
	for i := range out {
		name := fmt.Sprintf("record %d", i)
		if i < len(l.Labels) {
			name = l.Labels[i]
		}
		out[i] = "loglik(" + name + ")"
	}
	return out
}

// Map implements FeatureMap.
func (l LogLik) Map(theta, out []float64) {
	if l.Batch != nil && l.Batch.Len() == len(l.Records) {
		l.Batch.LogLiks(theta, out[:len(l.Records)])
		return
	}
	for i, r := range l.Records {
		out[i] = l.Model.LogLik(theta, r)
	}
}

// Concat joins feature maps side by side.
type Concat []FeatureMap

// Names implements FeatureMap.
func (c Concat) Names() []string {
	var out []string
	for _, f := range c {
		out = append(out, f.Names()...)
	}
	return out
}

// Map implements FeatureMap.
func (c Concat) Map(theta, out []float64) {
	k := 0
	for _, f := range c {
		n := len(f.Names())
		f.Map(theta, out[k:k+n])
		k += n
	}
}
