package audit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/canary"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Plan is a validated, built scenario: everything the trials and the
// analysis need.
type Plan struct {
	Config *Config
	// Hash identifies the config (see Config.Hash).
	Hash     string
	Model    mechanisms.Model
	Pair     dataset.Pair
	Sampler  mechanisms.Sampler
	Mech     mechanisms.Mechanism
	Points   []mechanisms.ReleasePoint
	Features attacks.FeatureMap
	// FeatureNames labels the feature columns.
	FeatureNames []string
	Attacks      []attacks.Classifier
	Claims       []Claim
	// Canary is the DeepFool canary when the neighbour was crafted.
	Canary *canary.Canary
	// TestSet holds the records kept out of D for the accuracy metric.
	TestSet *dataset.Dataset
	// Accuracy reports the test accuracy of every release.
	Accuracy bool
}

// Build turns a validated config into a plan, checking everything that
// needs the built objects (dimensions, batch sizes, release points, …).
func Build(c *Config) (*Plan, error) {
	p := &Plan{Config: c}
	var err error
	if p.Model, err = buildModel(c.Model); err != nil {
		return nil, err
	}
	switch {
	case c.Sampler.SGLD != nil:
		p.Sampler = c.Sampler.SGLD
	case c.Sampler.ULA != nil:
		p.Sampler = c.Sampler.ULA
	case c.Sampler.DPPenalty != nil:
		p.Sampler = c.Sampler.DPPenalty
	case c.Sampler.DPHMC != nil:
		p.Sampler = c.Sampler.DPHMC
	case c.Sampler.DPBarker != nil:
		p.Sampler = c.Sampler.DPBarker
	case c.Sampler.GaussianQuery != nil:
		p.Sampler = c.Sampler.GaussianQuery
	case c.Sampler.ExactCyclicSGLD != nil:
		ex, err := buildExact(c, p)
		if err != nil {
			return nil, err
		}
		p.Sampler, p.Mech = mechanisms.ExactSampler{E: ex}, ex
	}
	if c.Sampler.ExactCyclicSGLD == nil {
		if err = buildPair(c, p); err != nil {
			return nil, err
		}
	}
	if p.Mech == nil {
		p.Mech = &mechanisms.Chain{Model: p.Model, Sampler: p.Sampler, Init: c.Init, Release: c.Release}
	}
	for _, d := range []*dataset.Dataset{p.Pair.D, p.Pair.DPrime} {
		if err := p.Mech.Check(d); err != nil {
			return nil, err
		}
	}
	pd, err := p.Mech.Points(p.Pair.D)
	if err != nil {
		return nil, err
	}
	pp, err := p.Mech.Points(p.Pair.DPrime)
	if err != nil {
		return nil, err
	}
	if len(pd) != len(pp) {
		return nil, fmt.Errorf("release: D and D′ have different release points (%d vs %d): use release.mode final or snapshots with add/remove adjacency", len(pd), len(pp))
	}
	p.Points = pd
	if p.Features, err = buildFeatures(c.Audit.Features, p); err != nil {
		return nil, err
	}
	p.FeatureNames = p.Features.Names()
	for _, m := range c.Audit.Metrics {
		switch m {
		case "accuracy":
			if _, ok := p.Model.(mechanisms.Classifier); !ok || p.TestSet == nil {
				return nil, fmt.Errorf("audit.metrics: accuracy needs a classification model and data.csv with test_fraction > 0")
			}
			p.Accuracy = true
		default:
			return nil, fmt.Errorf("audit.metrics: must be accuracy, got %q", m)
		}
	}
	if b := float64(c.Audit.Trials) * float64(len(p.Points)) * float64(len(p.FeatureNames)) * 8; b > MaxFeatureBytes {
		return nil, fmt.Errorf("audit.trials: %d trials × %d release points × %d features need %.3g GB of features (limit %d GB): release fewer points or run fewer trials",
			c.Audit.Trials, len(p.Points), len(p.FeatureNames), b/1e9, MaxFeatureBytes>>30)
	}
	for _, name := range c.Audit.Attacks {
		a, err := attacks.ByName(name)
		if err != nil {
			return nil, fmt.Errorf("audit.attacks: %s", strings.TrimPrefix(err.Error(), "attacks: "))
		}
		p.Attacks = append(p.Attacks, a)
	}
	if p.Claims, err = buildClaims(c, p); err != nil {
		return nil, err
	}
	p.Hash = c.Hash()
	return p, nil
}

// buildExact prepares the exact counterexample sampler; the pair is then
// the virtual one (nothing materialised, any n).
func buildExact(c *Config, p *Plan) (*mechanisms.ExactCounterexample, error) {
	ce, lr, ex := c.Data.Counterexample, c.Model.LinReg, c.Sampler.ExactCyclicSGLD
	if ce == nil || lr == nil || p.Model.Dim() != 1 {
		return nil, fmt.Errorf("sampler.exact_cyclic_sgld: needs data.counterexample and a one-dimensional model.linreg")
	}
	if !c.Init.FromPrior || len(c.Init.Theta) > 0 {
		return nil, fmt.Errorf("init: the exact sampler starts from the prior (Heller & Fetaya §IV.B); set init.from_prior: true")
	}
	pair, err := dataset.VirtualCounterexamplePair(ce.N, ce.XH, ce.C)
	if err != nil {
		return nil, fmt.Errorf("data.counterexample.%s", err)
	}
	p.Pair = pair
	model := closedform.Counterexample{N: ce.N, Alpha: lr.Alpha, Beta: lr.Beta, XH: ce.XH, C: ce.C}
	switch {
	case (ex.Eta > 0) == (ex.EtaScale > 0):
		return nil, fmt.Errorf("sampler.exact_cyclic_sgld: set exactly one of eta > 0 or eta_scale > 0 (η = eta_scale/s²)")
	case ex.Eta > 0:
		model.Eta = ex.Eta
	default:
		model.Eta = model.EtaScaled(ex.EtaScale)
	}
	e, err := mechanisms.NewExactCounterexample(model, ex.Epochs, c.Release, pair.DPrime)
	if err != nil {
		return nil, fmt.Errorf("sampler.exact_cyclic_sgld: %s", strings.TrimPrefix(err.Error(), "sampler."))
	}
	return e, nil
}

func buildModel(mc ModelConfig) (mechanisms.Model, error) {
	switch {
	case mc.LinReg != nil:
		m := *mc.LinReg
		if m.D == 0 {
			m.D = 1
		}
		if err := m.Check(); err != nil {
			return nil, fmt.Errorf("model.linreg.%s", err)
		}
		return m, nil
	case mc.Logistic != nil:
		m := *mc.Logistic
		if err := m.Check(); err != nil {
			return nil, fmt.Errorf("model.logistic.%s", err)
		}
		return m, nil
	case mc.Gauss != nil:
		g := mc.Gauss
		cov := g.Cov
		if (len(cov) > 0) == (g.RaisaCov != nil) {
			return nil, fmt.Errorf("model.gauss: give exactly one of cov or raisa_cov")
		}
		if g.RaisaCov != nil {
			var err error
			if cov, err = mechanisms.RaisaCovariance(g.RaisaCov.Dim, g.RaisaCov.Shape, g.RaisaCov.Seed); err != nil {
				return nil, fmt.Errorf("model.gauss.raisa_cov.%s", err)
			}
		}
		m, err := mechanisms.NewGauss(g.PriorMean, g.PriorSD, cov)
		if err != nil {
			return nil, fmt.Errorf("model.gauss.%s", err)
		}
		return m, nil
	case mc.Banana != nil:
		if err := mc.Banana.Check(); err != nil {
			return nil, fmt.Errorf("model.banana.%s", err)
		}
		return *mc.Banana, nil
	case mc.Softmax != nil:
		if err := mc.Softmax.Check(); err != nil {
			return nil, fmt.Errorf("model.softmax.%s", err)
		}
		return *mc.Softmax, nil
	case mc.MLP != nil:
		if err := mc.MLP.Check(); err != nil {
			return nil, fmt.Errorf("model.mlp.%s", err)
		}
		return *mc.MLP, nil
	case mc.Mixture != nil:
		if err := mc.Mixture.Check(); err != nil {
			return nil, fmt.Errorf("model.mixture.%s", err)
		}
		return *mc.Mixture, nil
	}
	return nil, fmt.Errorf("model: no model set")
}

// buildPair builds D (and the held-out test set of a CSV dataset) and its
// neighbour D′, crafting a DeepFool canary when asked.
func buildPair(c *Config, p *Plan) error {
	pair, err := buildPairOf(c, p)
	if err != nil {
		return err
	}
	p.Pair = pair
	return nil
}

func buildPairOf(c *Config, p *Plan) (dataset.Pair, error) {
	m := p.Model
	dc := c.Data
	var d *dataset.Dataset
	var err error
	switch {
	case dc.Counterexample != nil:
		ce := dc.Counterexample
		if m.Dim() != 1 {
			return dataset.Pair{}, fmt.Errorf("data.counterexample: needs a one-dimensional model (model.linreg.dim: 1)")
		}
		p, err := dataset.CounterexamplePair(ce.N, ce.XH, ce.C)
		if err != nil {
			return dataset.Pair{}, fmt.Errorf("data.counterexample.%s", err)
		}
		return p, nil
	case dc.SyntheticLinReg != nil:
		s := dc.SyntheticLinReg
		if s.XScale == 0 {
			s.XScale = 1
		}
		if s.Beta == 0 {
			if lr, ok := m.(mechanisms.LinReg); ok {
				s.Beta = lr.Beta
			}
		}
		d, err = mechanisms.SyntheticLinReg(s.N, s.ThetaStar, s.Beta, s.XScale, s.Seed)
		if err != nil {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_linreg.%s", err)
		}
	case dc.SyntheticLogistic != nil:
		s := dc.SyntheticLogistic
		if s.XScale == 0 {
			s.XScale = 1
		}
		d, err = mechanisms.SyntheticLogistic(s.N, s.ThetaStar, s.XScale, s.Seed)
		if err != nil {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_logistic.%s", err)
		}
	case dc.SyntheticGauss != nil:
		g, ok := m.(*mechanisms.Gauss)
		if !ok {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_gauss: needs model.gauss")
		}
		s := dc.SyntheticGauss
		d, err = mechanisms.SyntheticGauss(s.N, s.ThetaStar, g.Cov(), s.Seed)
		if err != nil {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_gauss.%s", err)
		}
	case dc.SyntheticBanana != nil:
		b, ok := m.(mechanisms.Banana)
		if !ok {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_banana: needs model.banana")
		}
		s := dc.SyntheticBanana
		if len(s.ThetaStar) != 2 {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_banana.theta_star: must have 2 values, got %d", len(s.ThetaStar))
		}
		d, err = mechanisms.SyntheticBanana(s.N, [2]float64{s.ThetaStar[0], s.ThetaStar[1]}, b, s.Seed)
		if err != nil {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_banana.%s", err)
		}
	case dc.SyntheticMixture != nil:
		mx, ok := m.(mechanisms.Mixture)
		if !ok {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_mixture: needs model.mixture")
		}
		s := dc.SyntheticMixture
		d, err = mechanisms.SyntheticMixture(s.N, s.ThetaStar, mx, s.Seed)
		if err != nil {
			return dataset.Pair{}, fmt.Errorf("data.synthetic_mixture.%s", err)
		}
	case dc.CSV != nil:
		if d, p.TestSet, err = loadCSV(c, m); err != nil {
			return dataset.Pair{}, err
		}
	case len(dc.Records) > 0:
		d = &dataset.Dataset{Name: "inline", Records: dc.Records}
	}
	if err := d.Validate(m.DataDim()); err != nil {
		return dataset.Pair{}, fmt.Errorf("data: %s", err)
	}
	nb := c.Neighbour
	if nb.DeepFool != nil {
		return craftCanary(c, p, d)
	}
	var rec dataset.Record
	if nb.Adjacency != dataset.RemoveOne {
		if nb.Record == nil {
			return dataset.Pair{}, fmt.Errorf("neighbour.record: required for %s adjacency", nb.Adjacency)
		}
		rec = *nb.Record
		if len(rec.X) != m.DataDim() {
			return dataset.Pair{}, fmt.Errorf("neighbour.record.x: must have %d values, got %d", m.DataDim(), len(rec.X))
		}
	}
	pair, err := dataset.Neighbour(d, nb.Adjacency, nb.Index, rec)
	if err != nil {
		return dataset.Pair{}, fmt.Errorf("neighbour.%s", err)
	}
	return pair, nil
}

// buildFeatures parses the feature list: theta, norm, coord:K, loglik.
func buildFeatures(names []string, p *Plan) (attacks.FeatureMap, error) {
	var maps attacks.Concat
	for _, name := range names {
		switch {
		case name == "theta":
			maps = append(maps, attacks.Theta{D: p.Model.Dim()})
		case name == "norm":
			maps = append(maps, attacks.Norm{})
		case strings.HasPrefix(name, "coord:"):
			k, err := strconv.Atoi(strings.TrimPrefix(name, "coord:"))
			if err != nil || k < 0 || k >= p.Model.Dim() {
				return nil, fmt.Errorf("audit.features: coord:K needs K in [0, %d], got %q", p.Model.Dim()-1, name)
			}
			maps = append(maps, attacks.Coords{Idx: []int{k}})
		case name == "probs" || name == "logprobs":
			cl, ok := p.Model.(mechanisms.Classifier)
			if !ok || p.Canary == nil {
				return nil, fmt.Errorf("audit.features: %s needs a classification model and a DeepFool canary (neighbour.deepfool)", name)
			}
			maps = append(maps, canaryFeatures{cl, *p.Canary, name == "logprobs"})
		case name == "loglik":
			ll := attacks.LogLik{Model: p.Model}
			pr := p.Pair
			switch pr.Adjacency {
			case dataset.ReplaceOne:
				ll.Records = []dataset.Record{pr.D.Records[pr.Index], pr.DPrime.Records[pr.Index]}
				ll.Labels = []string{"record in D", "record in D′"}
			case dataset.RemoveOne:
				ll.Records = []dataset.Record{pr.D.Records[pr.Index]}
				ll.Labels = []string{"removed record"}
			case dataset.AddOne:
				ll.Records = []dataset.Record{pr.DPrime.Records[pr.Index]}
				ll.Labels = []string{"added record"}
			}
			maps = append(maps, ll)
		default:
			return nil, fmt.Errorf("audit.features: must be theta, norm, coord:K, loglik, probs or logprobs, got %q", name)
		}
	}
	if len(maps) == 1 {
		return maps[0], nil
	}
	return maps, nil
}
