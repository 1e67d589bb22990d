package scenario

import (
	"errors"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
)

// fieldErrScenario has a bad step size on line 9.
const fieldErrScenario = `name: field-errors
seed: 1
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data:
  synthetic_linreg: {n: 20, theta_star: [0.5], seed: 1}
neighbour: {adjacency: replace-one, index: 0, record: {x: [3], y: 3}}
sampler:
  sgld:
    step: {eta: -1}
    batch: 1
    scheme: cyclic
    epochs: 2
init: {from_prior: true}
release: {mode: epochs}
audit:
  trials: 40
  split: {train: 0.5, eval: 0.5}
  delta: 1.0e-5
  confidence: 0.95
`

// buildFieldErr parses and builds a scenario and returns the error.
func buildFieldErr(t *testing.T, src string) error {
	t.Helper()
	c, err := ParseConfig([]byte(src))
	if err != nil {
		return err
	}
	p, err := Build(c)
	if err == nil {
		p.Close()
	}
	return err
}

// The error a Go caller reads as "Sampler.Step.Eta: …" reads, for a YAML
// user, with the YAML path and the line of the field.
func TestFieldErrorLocatedInYAML(t *testing.T) {
	err := buildFieldErr(t, fieldErrScenario)
	if got, want := err.Error(), "line 9: sampler.sgld.step.eta: must be finite and > 0, got -1"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Line != 9 || e.Path != "sampler.sgld.step.eta" {
		t.Errorf("error %#v", e)
	}
}

// The line comes from the error's path, never from its message: any
// wording, even one that starts like another field's path, is located at
// the field the path names.
func TestLocateReadsThePathNotTheMessage(t *testing.T) {
	c, err := ParseConfig([]byte(fieldErrScenario))
	if err != nil {
		t.Fatal(err)
	}
	batch := field.At("Sampler", "sampler").Field("Batch", "batch")
	for _, msg := range []string{"must be in [1, n=20], got 0", "audit.trials: reworded entirely", "", "line 3: model.linreg: x"} {
		err := c.locate(&field.Error{Path: batch, Msg: msg})
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%q: not located: %v", msg, err)
		}
		if e.Line != 10 || e.Path != "sampler.sgld.batch" || e.Msg != msg {
			t.Errorf("%q: located as line %d, path %q, message %q; want line 10, sampler.sgld.batch, the message unchanged", msg, e.Line, e.Path, e.Msg)
		}
	}
	// A path in the scenario's own terms (the sampler's key included) is
	// located the same way.
	eta := field.At("Sampler", "sampler").Field("SGLD", "sgld").Field("Step", "step").Field("Eta", "eta")
	if err := c.locate(field.Errorf(eta, "anything")); err.Error() != "line 9: sampler.sgld.step.eta: anything" {
		t.Errorf("located as %q", err)
	}
	// A message that merely looks like a path is not located, and an
	// engine option's error (Go names only) is left in Go terms.
	var e *Error
	if err := c.locate(errors.New("sampler.sgld.batch: plain text")); errors.As(err, &e) {
		t.Errorf("a plain message was located: %#v", e)
	}
	if err := c.locate(field.Errorf(field.At("Trials", ""), "must be in [20, 100000000], got 3")); errors.As(err, &e) || err.Error() != "Trials: must be in [20, 100000000], got 3" {
		t.Errorf("an engine option's error became %q", err)
	}
}
