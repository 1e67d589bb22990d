package mechanisms

import (
	"errors"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// A Go caller that builds a chain with a bad field gets an error naming it
// by its Go path, as a *field.Error.
func TestCheckNamesGoFields(t *testing.T) {
	d, _ := syntheticLinReg(10, []float64{1}, 1, 1, 1)
	c := &Chain{
		Model:   NewLinReg1D(1, 1),
		Sampler: &SGLD{Step: StepSchedule{Eta: -1}, Batch: 1, Scheme: Cyclic, Epochs: 1},
		Init:    Init{FromPrior: true},
		Release: ReleaseSpec{Mode: ReleaseFinal},
	}
	err := c.Check(d)
	var fe *field.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *field.Error", err, err)
	}
	if got, want := err.Error(), "Sampler.Step.Eta: must be finite and > 0, got -1"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if got := fe.Path.YAML(); got != "sampler.step.eta" {
		t.Errorf("YAML path %q, want sampler.step.eta", got)
	}
}

// yamlText writes err as the scenario layer names its field: the YAML path
// below prefix (the section that holds the checked value), then the
// message. An error without a path reads as err.Error(); nil as "".
func yamlText(err error, prefix string) string {
	if err == nil {
		return ""
	}
	var fe *field.Error
	if !errors.As(err, &fe) {
		return err.Error()
	}
	p := fe.Path.YAML()
	switch {
	case prefix == "":
	case p == "":
		p = prefix
	case p[0] == '[':
		p = prefix + p
	default:
		p = prefix + "." + p
	}
	if p == "" {
		return fe.Msg
	}
	return p + ": " + fe.Msg
}

// A sampler's objection to the model is about the chain's Model, and a
// release spec's error about its Release, not about the sampler.
func TestCheckNamesModelAndRelease(t *testing.T) {
	d := &dataset.Dataset{Name: "d", Records: []dataset.Record{{X: []float64{1, 2}, Y: 0}, {X: []float64{0, 1}, Y: 1}}}
	c := &Chain{Model: Softmax{Features: 2, Classes: 3, Alpha: 1}, Sampler: &GaussianQuery{Sigma: 1}, Release: ReleaseSpec{Mode: ReleaseFinal}}
	err := c.Check(d)
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Path.Go() != "Model" {
		t.Errorf("model mismatch: error %v, want a *field.Error about Model", err)
	}
	c = &Chain{Model: NewLinReg1D(1, 1), Sampler: &ULA{Gamma: 0.1, Iters: 10}, Release: ReleaseSpec{Mode: ReleaseTrajectory, Every: 11}}
	d1, _ := syntheticLinReg(10, []float64{1}, 1, 1, 1)
	err = c.Check(d1)
	if !errors.As(err, &fe) || fe.Path.Go() != "Release.Every" || fe.Path.YAML() != "release.every" {
		t.Errorf("release: error %v, want a *field.Error about Release.Every", err)
	}
}
