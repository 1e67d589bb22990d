package scenario

import (
	"fmt"
	"slices"

	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Threat models (Config.Threat).
const (
	ThreatReleases = "releases"
	ThreatPath     = "path"
)

// pathSamplers are the samplers with a path threat model.
var pathSamplers = []string{"sgld", "dp_hmc", "dp_penalty", "dp_barker"}

// path reports whether the scenario's threat model is the path.
func (c *Config) path() bool { return c.Threat == ThreatPath }

// validateThreat checks threat, model.inert and neighbour.gradient_canary
// against each other.
func (c *Config) validateThreat() error {
	gc := c.Neighbour != nil && c.Neighbour.GradientCanary != nil
	switch {
	case c.Threat != "" && c.Threat != ThreatReleases && c.Threat != ThreatPath:
		return errAt("threat", "must be releases or path, got %s", clip.Quote(c.Threat))
	case gc:
		if err := c.validateGradientCanary(); err != nil {
			return err
		}
	}
	if c.canaryDesign() {
		return c.validateCanaryThreat()
	}
	if !c.path() {
		return nil
	}
	if !gc {
		return errAt("threat", "path needs a gradient canary (neighbour.gradient_canary), whose contribution is the one thing D and D′ differ by")
	}
	return c.validatePathRelease(pathSamplers)
}

// validatePathRelease checks the sampler (one of samplers), the release
// mode and the features of a scenario under threat: path.
func (c *Config) validatePathRelease(samplers []string) error {
	name, _ := exactlyOne("sampler", &c.Sampler)
	if !slices.Contains(samplers, name) {
		return errAt("threat", "path is built for sampler %s; got sampler %s", wordList(samplers, "or"), name)
	}
	if c.Release.Mode == mechanisms.ReleaseEstimator {
		return errAt("threat", "path releases the path's log-likelihood ratio, not an estimator: use another release.mode")
	}
	for _, f := range c.Audit.Features {
		if f != "theta" {
			return errAt("audit.features", "under threat: path every release is one value, the path's log-likelihood ratio: use [theta], got %s", clip.Quote(f))
		}
	}
	return nil
}

// canaryPathSamplers are the samplers of kind gradient in the canary
// design (mechanisms.CanaryPaths).
var canaryPathSamplers = []string{"sgld", "dp_hmc", "dp_penalty"}

// validateCanaryThreat checks threat against the canary design: kind
// gradient needs threat: path, model inert and data inert; the other
// kinds keep the releases.
func (c *Config) validateCanaryThreat() error {
	k, _ := lookupCanaryKind(c.Audit.Canaries.Kind)
	switch {
	case k.Gradient && !c.path():
		return errAt("threat", "audit.canaries.kind gradient scores each canary by its path statistic: set threat: path")
	case !k.Gradient && c.path():
		return errAt("threat", "path in the canary design needs audit.canaries.kind: gradient (the canaries' path statistics are the scores)")
	case !k.Gradient:
		return nil
	case c.Model.Inert == nil:
		return errAt("model", "audit.canaries.kind gradient runs the canaries' own coordinates, which have the same law beside any model: use model: {inert: {}}")
	case c.Data.Inert == nil:
		return errAt("data", "audit.canaries.kind gradient needs data: {inert: {n: N}}; n is public: it sets SGLD's gradient scale n/b and rate b/n")
	}
	return c.validatePathRelease(canaryPathSamplers)
}

// gradientCanaries reports whether the scenario runs gradient canaries in
// the canary design.
func (c *Config) gradientCanaries() bool {
	if !c.canaryDesign() || c.Audit.Canaries == nil {
		return false
	}
	k, _ := lookupCanaryKind(c.Audit.Canaries.Kind)
	return k.Gradient
}

// canaryPaths builds the mechanism of gradient canaries in the canary
// design: the sampler's canary coordinates on the public base data D.
func (c *Config) canaryPaths(p *Plan) (*mechanisms.CanaryPaths, error) {
	cc := c.Audit.Canaries
	cp := &mechanisms.CanaryPaths{Sampler: p.Sampler, Release: c.Release, Base: p.Pair.D, Count: cc.Count, Runs: max(cc.Runs, 1), Slope: cc.Slope}
	if err := cp.Check(nil); err != nil {
		return nil, wrapAt(err, "sampler")
	}
	return cp, nil
}

// validateGradientCanary checks neighbour.gradient_canary.
func (c *Config) validateGradientCanary() error {
	nb := c.Neighbour
	switch {
	case nb.DeepFool != nil:
		return errAt("neighbour.gradient_canary", "give a gradient canary or a DeepFool canary, not both")
	case nb.Record != nil:
		return errAt("neighbour.record", "not used with a gradient canary (its contribution defines it); remove it")
	case nb.Adjacency != dataset.ReplaceOne && nb.Adjacency != dataset.AddOne:
		return errAt("neighbour.adjacency", "a gradient canary replaces a record (replace-one) or is added (add-one), got %s", clip.Quote(string(nb.Adjacency)))
	}
	return nil
}

// checkInert refuses, once the mechanism is built, a model.inert left
// without a gradient canary.
func (p *Plan) checkInert() error {
	if _, ok := p.Model.(mechanisms.Inert); ok && !p.Config.gradientCanaries() {
		return errAt("model.inert", "only with neighbour.gradient_canary: inert records alone release nothing")
	}
	return nil
}

// gradientCanaryPair adds the gradient canary to the plan's model and
// builds the pair from D's ordinary records d: every record gains the
// canary sign 0; under replace-one record Index becomes the canary of sign
// −1 in D and +1 in D′, under add-one D′ adds the canary of sign +1.
func gradientCanaryPair(c *Config, p *Plan, d *dataset.Dataset) (dataset.Pair, error) {
	nb := c.Neighbour
	if c.Sampler.Program != nil {
		return dataset.Pair{}, errAt("neighbour.gradient_canary", "a gradient canary needs a built-in step-by-step sampler, which evaluates the model")
	}
	inner := p.Model
	m, err := mechanisms.NewGradientCanary(inner, nb.GradientCanary.Slope)
	if err != nil {
		return dataset.Pair{}, wrapAt(err, "neighbour.gradient_canary")
	}
	p.Model = m
	ord := &dataset.Dataset{Name: d.Name, Records: make([]dataset.Record, d.Len())}
	for i, r := range d.Records {
		ord.Records[i] = dataset.Record{X: append(slices.Clip(slices.Clone(r.X)), 0), Y: r.Y}
	}
	canary := func(s float64) dataset.Record {
		x := make([]float64, inner.DataDim()+1)
		x[len(x)-1] = s
		return dataset.Record{X: x}
	}
	var pair dataset.Pair
	if nb.Adjacency == dataset.ReplaceOne {
		if nb.Index < 0 || nb.Index >= ord.Len() {
			return dataset.Pair{}, errAt("neighbour.index", "must be in [0, %d], got %d", ord.Len()-1, nb.Index)
		}
		ord.Records[nb.Index] = canary(-1)
		if pair, err = dataset.Neighbour(ord, dataset.ReplaceOne, nb.Index, canary(1)); err != nil {
			return dataset.Pair{}, wrapAt(err, "neighbour")
		}
		pair.Note = fmt.Sprintf("record %d is a gradient canary of sign -1 in D and +1 in D′ (slope %g)", nb.Index, mechanisms.CanaryOf(m).Slope())
		return pair, nil
	}
	if pair, err = dataset.Neighbour(ord, dataset.AddOne, 0, canary(1)); err != nil {
		return dataset.Pair{}, wrapAt(err, "neighbour")
	}
	pair.Note = fmt.Sprintf("D′ adds a gradient canary of sign +1 (slope %g)", mechanisms.CanaryOf(m).Slope())
	return pair, nil
}

// pathModel completes a chain on a model with a gradient canary: a
// starting point without θ_c starts it at 0, and under threat: path the
// chain releases the path's log-likelihood ratio.
func (c *Config) pathModel(p *Plan, ch *mechanisms.Chain) error {
	g := mechanisms.CanaryOf(p.Model)
	if g == nil {
		return nil
	}
	if !ch.Init.FromPrior && len(ch.Init.Theta) == g.Coord() && g.Coord() > 0 {
		ch.Init.Theta = append(slices.Clone(ch.Init.Theta), 0)
	}
	if !c.path() {
		return nil
	}
	spec, err := mechanisms.PathSpecOf(p.Model, p.Pair)
	if err != nil {
		return wrapAt(err, "neighbour.gradient_canary")
	}
	ch.Path = spec
	return nil
}

// threatNotes are the report's notes on the threat model.
func threatNotes(c *Config) []string {
	if !c.path() {
		return nil
	}
	if c.gradientCanaries() {
		return []string{"threat model: path. Each canary's score is Λ_i = ln p(path | canary i in) − ln p(path | canary i out), " +
			"under the declared sampler, of every quantity its privacy proof treats as released along the canary's coordinate up to that iteration; " +
			"the add/remove bounds of one canary apply with n public (the public base data's size sets the gradient scale and the rate), since they bound the path"}
	}
	return []string{"threat model: path. Every release is Λ = ln p(path | D) − ln p(path | D′), the exact log-likelihood ratio, " +
		"under the declared sampler, of every quantity its privacy proof treats as released up to that iteration (the adversary knows D and D′); " +
		"the theorem bounds apply unchanged, since they bound the path"}
}
