package stats

import (
	"encoding/json"
	"math"
	"strconv"
)

// JSONFloat is a float64 that encodes non-finite values as the strings
// "+Inf", "-Inf" and "NaN" instead of failing, so that an unbounded point
// estimate survives a JSON report and is visibly not a number.
type JSONFloat float64

// MarshalJSON implements json.Marshaler.
func (f JSONFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler, accepting numbers and the three
// strings written by MarshalJSON.
func (f *JSONFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"+Inf"`:
		*f = JSONFloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = JSONFloat(math.Inf(-1))
		return nil
	case `"NaN"`:
		*f = JSONFloat(math.NaN())
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*f = JSONFloat(x)
	return nil
}

// MarshalJSON encodes an Estimate, writing a +Inf point estimate as "+Inf",
// and the μ of a GDP estimate even when it is 0 (μ_lb = 0 is a result).
func (e Estimate) MarshalJSON() ([]byte, error) {
	type plain Estimate
	if e.Guesses != nil {
		return e.marshalGuesses()
	}
	if e.Estimator == EstimatorGDP && e.Mu == 0 {
		// The field's omitempty would drop it: written last, where a
		// non-zero μ keeps its place (the reports' bytes unchanged).
		return json.Marshal(struct {
			plain
			Epsilon JSONFloat `json:"epsilon"`
			Mu      float64   `json:"mu"`
		}{plain(e), JSONFloat(e.Epsilon), e.Mu})
	}
	return json.Marshal(struct {
		plain
		Epsilon JSONFloat `json:"epsilon"`
	}{plain(e), JSONFloat(e.Epsilon)})
}

// marshalGuesses writes an estimate from guesses: the fields of a
// one-run bound (OneRunEstimate's layout, its counts under "guesses"),
// without the error counts and rates it does not use; the μ of the f-DP
// bound is written even when it is 0.
func (e Estimate) marshalGuesses() ([]byte, error) {
	var mu *float64
	if e.Mu != 0 || e.Estimator == EstimatorOneRunFDP {
		mu = &e.Mu
	}
	return json.Marshal(struct {
		Kind       Kind          `json:"kind"`
		Estimator  string        `json:"estimator"`
		Delta      float64       `json:"delta"`
		Confidence float64       `json:"confidence"`
		Guesses    *OneRunCounts `json:"guesses"`
		Mu         *float64      `json:"mu,omitempty"`
		Assumption string        `json:"assumption,omitempty"`
		Epsilon    JSONFloat     `json:"epsilon"`
	}{e.Kind, e.Estimator, e.Delta, e.Confidence, e.Guesses, mu, e.Assumption, JSONFloat(e.Epsilon)})
}

// UnmarshalJSON reads what MarshalJSON writes, an ε of "+Inf" included:
// the bounds of either design (error counts or guesses) decode into it.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	type plain Estimate
	var v struct {
		plain
		Epsilon JSONFloat `json:"epsilon"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Estimate(v.plain)
	e.Epsilon = float64(v.Epsilon)
	return nil
}
