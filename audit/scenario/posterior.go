package scenario

import (
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
)

// The utility figures compare the releases with the exact posterior of
// the scenario's model wherever it has one (the Gaussian-mean and
// linear-regression models), whoever produced the releases: a built-in
// chain (audit.ExactPosterior), a program sampler, or precomputed samples
// analysed with the scenario. For a program and for samples, the model
// section states the model whose parameters the releases are, so its
// posterior on the scenario's D and D′ is the law a sampler of that
// posterior should follow; a program that releases something else (a
// noisy query) shows its distance to that posterior, which is then a
// description, not a defect.

// targetPosterior returns the law the releases are compared with: a
// built-in chain's exact posterior, or a program's (programPosterior).
func targetPosterior(p *Plan) (*audit.Posterior, error) {
	post, err := audit.ExactPosterior(p.Mechanism, p.Pair)
	if post != nil || err != nil {
		return post, err
	}
	return programPosterior(p)
}

// programPosterior returns the posterior a program sampler's releases are
// compared with: the model's exact posterior on the materialised pair,
// when the model has one and its dimension is the program's.
func programPosterior(p *Plan) (*audit.Posterior, error) {
	pm, ok := p.Mechanism.(*program.Mechanism)
	if !ok || p.Model == nil || p.Model.Dim() != pm.Dim() {
		return nil, nil
	}
	return audit.ModelPosterior(p.Model, p.Pair)
}

// SamplesPosterior returns the law precomputed samples of dimension dim
// are compared with when analysed with the scenario c: the exact posterior
// of its model on its D and D′, built from its model, data and neighbour
// sections (nil when it has none of them, the model has no closed-form
// posterior or a different dimension, or the neighbour is crafted by
// DeepFool, which needs a sampler).
func SamplesPosterior(c *Config, dim int) (*audit.Posterior, error) {
	if c.Model.empty() || c.Data.empty() || (c.Neighbour != nil && c.Neighbour.DeepFool != nil) {
		return nil, nil
	}
	m, err := buildModel(c.Model)
	if err != nil {
		return nil, c.named(err)
	}
	if m.Dim() != dim {
		return nil, nil
	}
	if err := checkLimits(c, m); err != nil {
		return nil, c.named(err)
	}
	pair, err := buildPairOf(c, &Plan{Config: c, Model: m})
	if err != nil {
		return nil, c.named(err)
	}
	return audit.ModelPosterior(m, pair)
}
