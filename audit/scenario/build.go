package scenario

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/canary"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/synthetic"
)

// Plan is a validated, built scenario: the engine's audit and what the
// scenario's reports and bounds need besides.
type Plan struct {
	Config *Config
	// Hash identifies the config (see Config.Hash); it is the audit's ID.
	Hash  string
	Model mechanisms.Model
	// Sampler is the scenario's sampler (nil for a mechanism that is not a
	// step-by-step chain, such as the exact counterexample sampler).
	Sampler   mechanisms.Sampler
	Mechanism mechanisms.Mechanism
	Pair      dataset.Pair
	// Canary is the DeepFool canary when the neighbour was crafted.
	Canary *canary.Canary
	// TestSet holds the records kept out of D for the accuracy metric.
	TestSet *dataset.Dataset
	// Audit is the engine's prepared audit.
	Audit *audit.Audit

	// tempDir holds the data files written for a program sampler.
	tempDir string
	// canaries are the canary design's records, once drawn.
	canaries []dataset.Record
}

// Points returns the release points.
func (p *Plan) Points() []mechanisms.ReleasePoint { return p.Audit.Points() }

// Build turns a validated config into a plan, checking everything that
// needs the built objects (dimensions, batch sizes, release points, …).
// Errors name the field by its YAML path and, for a config decoded from
// YAML, the line (see Error). A plan with a program sampler has processes
// running: Close it.
func Build(c *Config) (*Plan, error) { return BuildWith(c, BuildOptions{}) }

// BuildWith is Build with options.
func BuildWith(c *Config, bo BuildOptions) (*Plan, error) {
	p := &Plan{Config: c}
	p, err := p.build(bo)
	if err != nil && p != nil {
		p.Close()
	}
	if err != nil {
		return nil, c.locate(err)
	}
	return p, nil
}

func (p *Plan) build(bo BuildOptions) (*Plan, error) {
	c := p.Config
	if err := p.buildMechanism(bo); err != nil {
		return p, err
	}
	// The data are loaded (a CSV's digest pinned into the config): the
	// hash is final.
	p.Hash = c.Hash()
	o, err := c.options()
	if err != nil {
		return p, err
	}
	o.ID = p.Hash
	t := audit.Target{Name: c.Name, Mechanism: p.Mechanism, Pair: p.Pair}
	if prog := c.Sampler.Program; prog != nil {
		t.Described, _ = prog.Datasets.described() // validated with the config
	}
	t.Notes = append(plantNotes(c, p.Pair), threatNotes(c)...)
	if err := p.targetFeatures(&t, &o); err != nil {
		return p, err
	}
	if err := p.targetMetrics(&t); err != nil {
		return p, err
	}
	if err := c.attacksAndClaims(&o); err != nil {
		return p, err
	}
	if !c.canaryDesign() {
		if t.Posterior, err = targetPosterior(p); err != nil {
			return p, err
		}
		if pts, err := p.Mechanism.Points(p.Pair.D); err == nil {
			t.Exact, t.ExactSource = exactEpsilons(c, p, pts)
		}
	}
	return p, p.newAudit(t, o)
}

// targetFeatures checks the features against the mechanism (a program's
// releases, an estimator's scalar) and sets the options' feature map: the
// canaries' scores in the canary design, audit.features otherwise.
func (p *Plan) targetFeatures(t *audit.Target, o *audit.Options) error {
	c := p.Config
	if pm, ok := p.Mechanism.(*program.Mechanism); ok {
		if err := programFeatures(c.Audit.Features, p.Model, pm.Dim()); err != nil {
			return err
		}
		t.ReportedTestSize = pm.TestSize()
		o.Repeats = audit.RepeatsRefused
		if c.Sampler.Program.AllowRepeatedReleases {
			o.Repeats = audit.RepeatsNoted
		}
	}
	if _, ok := p.Mechanism.(*mechanisms.Estimator); ok {
		if err := estimatorFeatures(c.Audit.Features); err != nil {
			return err
		}
	}
	if c.canaryDesign() {
		return p.canaryTarget(t, o)
	}
	var err error
	o.Features, err = buildFeatures(c.Audit.Features, p, p.Mechanism.Dim())
	return err
}

// targetMetrics sets what is measured besides ε (audit.metrics): the
// tool's accuracy on the test set, or the accuracy a program reports.
func (p *Plan) targetMetrics(t *audit.Target) error {
	c := p.Config
	if t.ReportedTestSize == 0 {
		var err error
		t.Accuracy, err = buildMetrics(c.Audit.Metrics, p)
		return err
	}
	if len(c.Audit.Metrics) != 1 || c.Audit.Metrics[0] != "accuracy" {
		return errAt("audit.metrics", "must be accuracy, got %v", c.Audit.Metrics)
	}
	return nil
}

// newAudit prepares the engine's audit, naming an option's error by its
// scenario field.
func (p *Plan) newAudit(t audit.Target, o audit.Options) error {
	var err error
	p.Audit, err = audit.New(t, o)
	if err == nil {
		p.Audit, err = p.Audit.WithExecution(p.Config.execution())
	}
	if err != nil {
		var fe *audit.FieldError
		if errors.As(err, &fe) {
			if name, ok := auditFields[fe.Path.Go()]; ok {
				return errAt(name, "%s", fe.Msg)
			}
		}
		return err
	}
	return nil
}

// canaryTarget draws the canaries of the canary design (a program's are
// drawn before it starts) and sets the target's and the options' canary
// fields: the scores are the canaries' log-likelihoods under the model,
// or the program's own scores when its handshake says "scores": true.
func (p *Plan) canaryTarget(t *audit.Target, o *audit.Options) error {
	c := p.Config
	if c.Sampler.ExactCyclicSGLD != nil {
		return errAt("audit.design", "the exact cyclic-SGLD sampler has no records to add canaries to (it samples the counterexample in closed form); use sampler.sgld")
	}
	if p.canaries == nil {
		cs, err := drawCanaries(c, p, p.Pair.D)
		if err != nil {
			return err
		}
		p.canaries = cs
	}
	t.Canaries = p.canaries
	if pm, ok := p.Mechanism.(*program.Mechanism); ok && pm.Handshake().Scores {
		return nil // the releases are the scores
	}
	if c.gradientCanaries() {
		return nil // the releases are the canaries' path statistics
	}
	if p.Model == nil {
		return errAt("model", "required in the canary design to score the canaries (their log-likelihoods under each release), unless the program answers with scores (handshake \"scores\": true)")
	}
	if d := p.Mechanism.Dim(); d != p.Model.Dim() {
		return errAt("model", "the tool scores the releases with the model, whose parameters number %d, but the sampler releases %d values", p.Model.Dim(), d)
	}
	for i, r := range t.Canaries {
		if len(r.X) != p.Model.DataDim() {
			return errAt("audit.canaries", "canary %d has %d features, the model takes %d", i, len(r.X), p.Model.DataDim())
		}
	}
	o.Features = canaryScores(p.Model, t.Canaries)
	return nil
}

// buildMechanism builds the model, checks the limits, and builds the
// datasets and the mechanism: the exact cyclic-SGLD sampler, a program, or
// a chain of a step-by-step sampler.
func (p *Plan) buildMechanism(bo BuildOptions) error {
	c := p.Config
	var err error
	if !c.Model.empty() {
		if p.Model, err = buildModel(c.Model); err != nil {
			return err
		}
	}
	if err = checkLimits(c, p.Model); err != nil {
		return err
	}
	switch {
	case c.Sampler.ExactCyclicSGLD != nil:
		ex, err := buildExact(c, p)
		if err != nil {
			return err
		}
		p.Mechanism = ex
	case c.Sampler.Program != nil:
		if !c.Data.empty() {
			if err = buildPair(c, p); err != nil {
				return err
			}
		}
		if c.canaryDesign() {
			// The program reads the canaries when it starts.
			if p.canaries, err = drawCanaries(c, p, p.Pair.D); err != nil {
				return err
			}
		}
		pm, err := buildProgram(c, p, bo)
		if err != nil {
			return err
		}
		p.Mechanism = pm
	default:
		p.Sampler = c.Sampler.sampler()
		if err = buildPair(c, p); err != nil {
			return err
		}
		if c.gradientCanaries() {
			if p.Mechanism, err = c.canaryPaths(p); err != nil {
				return err
			}
			break
		}
		ch := &mechanisms.Chain{Model: p.Model, Sampler: p.Sampler, Init: c.Init, Release: c.Release}
		if err = c.pathModel(p, ch); err != nil {
			return err
		}
		p.Mechanism = ch
		if c.Release.Mode == mechanisms.ReleaseEstimator {
			if p.Mechanism, err = mechanisms.NewEstimator(p.Mechanism.(*mechanisms.Chain)); err != nil {
				return err
			}
		}
	}
	return p.checkInert()
}

// buildMetrics parses the metrics list: accuracy.
func buildMetrics(names []string, p *Plan) (*audit.Accuracy, error) {
	var acc *audit.Accuracy
	for _, m := range names {
		switch m {
		case "accuracy":
			cl, ok := p.Model.(mechanisms.Classifier)
			if !ok || p.TestSet == nil {
				return nil, errAt("audit.metrics", "accuracy needs a classification model and data.csv with test_fraction > 0")
			}
			acc = &audit.Accuracy{Model: cl, Test: p.TestSet}
		default:
			return nil, errAt("audit.metrics", "must be accuracy, got %s", clip.Quote(m))
		}
	}
	return acc, nil
}

// buildExact prepares the exact counterexample sampler; the pair is then
// the virtual one (nothing materialised, any n).
func buildExact(c *Config, p *Plan) (*mechanisms.ExactCounterexample, error) {
	ce, lr, ex := c.Data.Counterexample, c.Model.LinReg, c.Sampler.ExactCyclicSGLD
	if ce == nil || lr == nil || p.Model.Dim() != 1 {
		return nil, errAt("sampler.exact_cyclic_sgld", "needs data.counterexample and a one-dimensional model.linreg")
	}
	if !c.Init.FromPrior || len(c.Init.Theta) > 0 {
		return nil, errAt("init", "the exact sampler starts from the prior (Heller & Fetaya §IV.B); set init.from_prior: true")
	}
	pair, err := dataset.VirtualCounterexamplePair(ce.N, ce.XH, ce.C)
	if err != nil {
		return nil, wrapAt(err, "data.counterexample")
	}
	p.Pair = pair
	model := closedform.Counterexample{N: ce.N, Alpha: lr.Alpha, Beta: lr.Beta, XH: ce.XH, C: ce.C}
	switch {
	case (ex.Eta > 0) == (ex.EtaScale > 0):
		return nil, errAt("sampler.exact_cyclic_sgld", "set exactly one of eta > 0 or eta_scale > 0 (η = eta_scale/s²)")
	case ex.Eta > 0:
		model.Eta = ex.Eta
	default:
		model.Eta = model.EtaScaled(ex.EtaScale)
	}
	if err := model.Validate(); err != nil {
		return nil, exactFieldError(err, ex)
	}
	e, err := mechanisms.NewExactCounterexample(model, ex.Epochs, c.Release)
	var fe *field.Error
	switch {
	case err == nil:
	case errors.As(err, &fe) && len(fe.Path) > 0 && fe.Path[0].Go == "Release":
		return nil, err // the scenario's own release section
	default:
		return nil, wrapAt(err, "sampler.exact_cyclic_sgld")
	}
	return e, nil
}

// exactFieldError names the scenario field behind a parameter error of the
// counterexample's closed form.
func exactFieldError(err error, ex *ExactCyclicSGLD) error {
	name, msg, ok := strings.Cut(err.Error(), ": ")
	if !ok {
		return wrapAt(err, "sampler.exact_cyclic_sgld")
	}
	field := map[string]string{"n": "data.counterexample.n", "xh": "data.counterexample.xh", "c": "data.counterexample.c",
		"alpha": "model.linreg.alpha", "beta": "model.linreg.beta", "eta": "sampler.exact_cyclic_sgld.eta"}[name]
	if name == "eta" && ex.EtaScale > 0 {
		field, msg = "sampler.exact_cyclic_sgld.eta_scale", "gives η = eta_scale/s² outside "+strings.TrimPrefix(msg, "must be in ")
	}
	if field == "" {
		return wrapAt(err, "sampler.exact_cyclic_sgld")
	}
	return errAt(field, "%s (the exact sampler's closed form)", msg)
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
	if m == nil {
		// A program sampler without a model: the records only need to
		// agree among themselves.
		m = recordsModel{}
	}
	if ce := c.Data.Counterexample; ce != nil {
		if m.Dim() != 1 {
			return dataset.Pair{}, errAt("data.counterexample", "needs a one-dimensional model (model.linreg.dim: 1)")
		}
		p, err := dataset.CounterexamplePair(ce.N, ce.XH, ce.C)
		if err != nil {
			return dataset.Pair{}, wrapAt(err, "data.counterexample")
		}
		return p, nil
	}
	d, err := buildDataset(c, p, m)
	if err != nil {
		return dataset.Pair{}, err
	}
	if _, ok := m.(recordsModel); ok && len(d.Records) > 0 {
		m = recordsModel{dim: len(d.Records[0].X)}
	}
	if err := d.Validate(m.DataDim()); err != nil {
		return dataset.Pair{}, wrapAt(err, "data")
	}
	if c.canaryDesign() {
		return dataset.Pair{D: d}, nil
	}
	if c.Neighbour.DeepFool != nil {
		return craftCanary(c, p, d)
	}
	if c.Neighbour.GradientCanary != nil {
		return gradientCanaryPair(c, p, d)
	}
	return neighbourOf(c.Neighbour, d, m)
}

// buildDataset builds D from the data section (a synthetic generator, a
// CSV file with its held-out test set, or inline records) for model m.
func buildDataset(c *Config, p *Plan, m mechanisms.Model) (*dataset.Dataset, error) {
	dc := c.Data
	switch {
	case dc.CSV != nil:
		d, test, err := loadCSV(c, m)
		if err != nil {
			return nil, err
		}
		p.TestSet = test
		return d, nil
	case len(dc.Records) > 0:
		return &dataset.Dataset{Name: "inline", Records: dc.Records}, nil
	case dc.Inert != nil:
		return &dataset.Dataset{Name: "inert", Records: make([]dataset.Record, dc.Inert.N)}, nil
	}
	return buildSynthetic(dc, m)
}

// buildSynthetic draws D from the chosen synthetic generator (nil when
// none is chosen).
func buildSynthetic(dc DataConfig, m mechanisms.Model) (*dataset.Dataset, error) {
	var (
		d    *dataset.Dataset
		err  error
		kind string
	)
	switch {
	case dc.SyntheticLinReg != nil:
		kind = "data.synthetic_linreg"
		s := dc.SyntheticLinReg // defaults are written into the config (and its hash)
		if s.XScale == 0 {
			s.XScale = 1
		}
		if lr, ok := m.(mechanisms.LinReg); ok && s.Beta == 0 {
			s.Beta = lr.Beta
		}
		d, err = synthetic.LinReg(s.N, s.ThetaStar, s.Beta, s.XScale, s.Seed)
	case dc.SyntheticLogistic != nil:
		kind = "data.synthetic_logistic"
		s := dc.SyntheticLogistic
		if s.XScale == 0 {
			s.XScale = 1
		}
		d, err = synthetic.Logistic(s.N, s.ThetaStar, s.XScale, s.Seed)
	case dc.SyntheticGauss != nil:
		return syntheticGauss(dc.SyntheticGauss, m)
	case dc.SyntheticBanana != nil:
		return syntheticBanana(dc.SyntheticBanana, m)
	case dc.SyntheticMixture != nil:
		kind = "data.synthetic_mixture"
		mx, ok := m.(mechanisms.Mixture)
		if !ok {
			return nil, errAt(kind, "needs model.mixture")
		}
		s := dc.SyntheticMixture
		d, err = synthetic.Mixture(s.N, s.ThetaStar, mx, s.Seed)
	}
	if err != nil {
		return nil, wrapAt(err, kind)
	}
	return d, nil
}

// syntheticGauss draws D for the Gauss model.
func syntheticGauss(s *SyntheticData, m mechanisms.Model) (*dataset.Dataset, error) {
	g, ok := m.(*mechanisms.Gauss)
	if !ok {
		return nil, errAt("data.synthetic_gauss", "needs model.gauss")
	}
	d, err := synthetic.Gauss(s.N, s.ThetaStar, g.Cov(), s.Seed)
	if err != nil {
		return nil, wrapAt(err, "data.synthetic_gauss")
	}
	return d, nil
}

// syntheticBanana draws D for the banana model.
func syntheticBanana(s *SyntheticData, m mechanisms.Model) (*dataset.Dataset, error) {
	b, ok := m.(mechanisms.Banana)
	if !ok {
		return nil, errAt("data.synthetic_banana", "needs model.banana")
	}
	if len(s.ThetaStar) != 2 {
		return nil, errAt("data.synthetic_banana.theta_star", "must have 2 values, got %d", len(s.ThetaStar))
	}
	d, err := synthetic.Banana(s.N, [2]float64{s.ThetaStar[0], s.ThetaStar[1]}, b, s.Seed)
	if err != nil {
		return nil, wrapAt(err, "data.synthetic_banana")
	}
	return d, nil
}

// neighbourOf builds D′ from D as the neighbour section says.
func neighbourOf(nb *NeighbourConfig, d *dataset.Dataset, m mechanisms.Model) (dataset.Pair, error) {
	var rec dataset.Record
	if nb.Adjacency != dataset.RemoveOne {
		if nb.Record == nil {
			return dataset.Pair{}, errAt("neighbour.record", "required for %s adjacency", nb.Adjacency)
		}
		rec = *nb.Record
		if len(rec.X) != m.DataDim() {
			return dataset.Pair{}, errAt("neighbour.record.x", "must have %d values, got %d", m.DataDim(), len(rec.X))
		}
	}
	pair, err := dataset.Neighbour(d, nb.Adjacency, nb.Index, rec)
	if err != nil {
		return dataset.Pair{}, wrapAt(err, "neighbour")
	}
	return pair, nil
}

// Document is the JSON written by "audit run --json": what produced the
// result, the scenario, and the result.
type Document struct {
	Versions audit.Versions `json:"versions"`
	Config   *Config        `json:"config"`
	Report   *audit.Report  `json:"report"`
}

// recordsModel stands in for the model of a program sampler that has none:
// it knows only the records' dimension (every other model question is
// refused before it is asked).
type recordsModel struct {
	mechanisms.Model
	dim int
}

func (r recordsModel) DataDim() int { return r.dim }
func (r recordsModel) Dim() int     { return r.dim }
func (recordsModel) Name() string   { return "(no model)" }

// programFeatures checks the features of a program's releases: theta (the
// releases themselves), norm and coord:K always; features that read a
// release as the model's parameters (loglik, probs, logprobs) only when
// the scenario has a model whose dimension is the program's.
func programFeatures(names []string, m mechanisms.Model, dim int) error {
	for _, f := range names {
		if e, _, ok := lookupFeature(f); !ok || !e.ReadsModel {
			continue
		}
		if m == nil || m.Dim() != dim {
			have := "no model"
			if m != nil {
				have = fmt.Sprintf("model %s has %d", m.Name(), m.Dim())
			}
			return errAt("audit.features", "%s reads a release as the model's parameters, but the program releases %d values (%s); use %s", f, dim, have, wordList(featureNames(readsRelease, ""), "or"))
		}
	}
	return nil
}

// attacksAndClaims sets the options' attacks (audit.attacks) and claims
// (the claim section).
func (c *Config) attacksAndClaims(o *audit.Options) error {
	for _, name := range c.Audit.Attacks {
		a, err := attacks.ByName(name)
		if err != nil {
			return errAt("audit.attacks", "%s", strings.TrimPrefix(err.Error(), "attacks: "))
		}
		o.Attacks = append(o.Attacks, a)
	}
	if cl := c.Claim; cl != nil {
		if cl.Epsilon != nil {
			o.Claims = append(o.Claims, audit.PureClaim(*cl.Epsilon, *cl.Delta))
		}
		if cl.GDP != nil {
			o.Claims = append(o.Claims, audit.GDPClaim(*cl.GDP))
		}
		o.Theorems = cl.Theorems
	}
	return nil
}

// plantNotes states a planted bug (sampler.KEY.plant): what the sampler
// runs with against what it declares; none without a plant.
func plantNotes(c *Config, pair dataset.Pair) []string {
	pl, ok := c.Sampler.sampler().(mechanisms.Planter)
	if !ok || pl.Planted() == nil {
		return nil
	}
	n := 0
	if pair.D != nil {
		n = pair.D.Len()
	}
	if note := pl.PlantNote(n); note != "" {
		return []string{note}
	}
	return nil
}
