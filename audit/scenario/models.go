package scenario

import (
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/presets"
)

// ModelConfig chooses the model: exactly one field is set.
type ModelConfig struct {
	LinReg   *mechanisms.LinReg   `yaml:"linreg,omitempty" json:"linreg,omitempty"`
	Logistic *mechanisms.Logistic `yaml:"logistic,omitempty" json:"logistic,omitempty"`
	Gauss    *GaussModel          `yaml:"gauss,omitempty" json:"gauss,omitempty"`
	Banana   *mechanisms.Banana   `yaml:"banana,omitempty" json:"banana,omitempty"`
	Mixture  *mechanisms.Mixture  `yaml:"mixture,omitempty" json:"mixture,omitempty"`
	Softmax  *mechanisms.Softmax  `yaml:"softmax,omitempty" json:"softmax,omitempty"`
	MLP      *mechanisms.MLP      `yaml:"mlp,omitempty" json:"mlp,omitempty"`
	Inert    *InertModel          `yaml:"inert,omitempty" json:"inert,omitempty"`
}

// InertModel chooses mechanisms.Inert: no parameters, records without
// features; only a gradient canary moves anything.
type InertModel struct{}

// GaussModel configures Räisä et al.'s Gauss model: records x ~ N(θ, Σ),
// prior θ ~ N(prior_mean, prior_sd²·I). Give Σ row-major in cov, or draw it
// as the paper does with raisa_cov.
type GaussModel struct {
	PriorMean []float64       `yaml:"prior_mean,omitempty" json:"prior_mean,omitempty"`
	PriorSD   float64         `yaml:"prior_sd" json:"prior_sd"`
	Cov       []float64       `yaml:"cov,omitempty" json:"cov,omitempty"`
	RaisaCov  *RaisaCovConfig `yaml:"raisa_cov,omitempty" json:"raisa_cov,omitempty"`
}

// RaisaCovConfig draws Σ by presets.RaisaCovariance.
type RaisaCovConfig struct {
	Dim   int     `yaml:"dim" json:"dim"`
	Shape float64 `yaml:"shape" json:"shape"`
	Seed  uint64  `yaml:"seed" json:"seed"`
}

// modelEntry registers a model: its key is the YAML name of its field in
// ModelConfig (the field's type decodes it), and the entry holds how the
// decoded value becomes the model (with its checks) and the reference's
// entries (model.KEY and its fields). Adding a model is a field of
// ModelConfig and its entry here, besides its implementation.
type modelEntry struct {
	// Key is the model's YAML key.
	Key string
	// Build checks the model's section (set in mc) and returns the model.
	Build func(mc ModelConfig) (mechanisms.Model, error)
	// Docs are the reference's entries of model.KEY and its fields.
	Docs []Field
}

// modelRegistry lists the models in the order of ModelConfig's fields.
var modelRegistry = []modelEntry{
	{Key: "linreg", Build: func(mc ModelConfig) (mechanisms.Model, error) {
		m := *mc.LinReg
		if m.D == 0 {
			m.D = 1
		}
		return checked(m, "model.linreg")
	}, Docs: []Field{
		{Path: "model.linreg", ExampleData: "data.synthetic_linreg", ExampleRecord: "{x: [3], y: -6}",
			Meaning: "Bayesian linear regression y = θᵀx + ξ, ξ ~ N(0, 1/beta), θ ~ N(0, I/alpha); in one dimension the model of Heller & Fetaya eq. 4. Its posterior is Gaussian (Bishop 2006, eqs. 3.53–3.54)."},
		{Path: "model.linreg.dim", Default: "1", Range: "[1, ∞)", UsedBy: "model.linreg", Example: "1",
			Meaning: "Dimension of θ and of every record's x."},
		{Path: "model.linreg.alpha", Required: "yes", Range: posRange, UsedBy: "model.linreg", Example: "1",
			Meaning: "Prior precision α: θ ~ N(0, I/α)."},
		{Path: "model.linreg.beta", Required: "yes", Range: posRange, UsedBy: "model.linreg", Example: "1",
			Meaning: "Noise precision β: y − θᵀx ~ N(0, 1/β)."},
	}},
	{Key: "logistic", Build: func(mc ModelConfig) (mechanisms.Model, error) { return checked(*mc.Logistic, "model.logistic") }, Docs: []Field{
		{Path: "model.logistic", ExampleData: "data.synthetic_logistic", ExampleRecord: "{x: [3, -2], y: 0}",
			Meaning: "Bayesian logistic regression, labels y ∈ {0, 1}: p(y = 1 | x, θ) = σ(θᵀx), θ ~ N(0, I/alpha). An intercept is a constant feature."},
		{Path: "model.logistic.dim", Required: "yes", Range: "[1, ∞)", UsedBy: "model.logistic", Example: "2",
			Meaning: "Dimension of θ and of every record's x."},
		{Path: "model.logistic.alpha", Required: "yes", Range: posRange, UsedBy: "model.logistic", Example: "1",
			Meaning: "Prior precision α: θ ~ N(0, I/α)."},
	}},
	{Key: "gauss", Build: buildGauss, Docs: []Field{
		{Path: "model.gauss", ExampleData: "data.synthetic_gauss", ExampleRecord: "{x: [6, 6], y: 0}",
			Meaning: "The Gaussian model of Räisä et al. (2021) §4.1: records x ~ N(θ, Σ), prior θ ~ N(prior_mean, prior_sd²·I). Give Σ in cov, or draw it with raisa_cov."},
		{Path: "model.gauss.prior_mean", Default: "[]", DefaultNote: "zeros", Range: "d finite numbers (d = dimension of Σ)", UsedBy: "model.gauss", Example: "[0, 0]",
			Meaning: "Prior mean of θ."},
		{Path: "model.gauss.prior_sd", Required: "yes", Range: posRange, UsedBy: "model.gauss", Example: "10",
			Meaning: "Prior standard deviation of every coordinate of θ."},
		{Path: "model.gauss.cov", Group: "gauss covariance", Range: "d×d finite numbers, row-major, symmetric positive definite", UsedBy: "model.gauss", Example: "[1, 0.3, 0.3, 1]",
			Meaning: "The records' covariance Σ, row by row. Exactly one of cov and raisa_cov."},
		{Path: "model.gauss.raisa_cov", Group: "gauss covariance", UsedBy: "model.gauss", Example: "{dim: 2, shape: 0.5, seed: 1}",
			Meaning: "Draws Σ as Räisä et al. (2021) §4.1 did: eigenvalues i.i.d. Gamma(shape, 1), eigenvectors from the QR factorisation of a matrix of U[0, 1] entries. Exactly one of cov and raisa_cov."},
		{Path: "model.gauss.raisa_cov.dim", Required: "yes", Range: "[1, 1000]", UsedBy: "model.gauss.raisa_cov", Example: "2",
			Meaning: "Dimension d of Σ."},
		{Path: "model.gauss.raisa_cov.shape", Required: "yes", Range: posRange, UsedBy: "model.gauss.raisa_cov", Example: "0.5",
			Meaning: "Shape of the Gamma law of the eigenvalues (the paper uses 0.5; small shapes give ill-conditioned Σ)."},
		{Path: "model.gauss.raisa_cov.seed", Default: "0", Range: seedRange, UsedBy: "model.gauss.raisa_cov", Example: "1",
			Meaning: "Seed of the draw: the same seed gives the same Σ."},
	}},
	{Key: "banana", Build: func(mc ModelConfig) (mechanisms.Model, error) { return checked(*mc.Banana, "model.banana") }, Docs: []Field{
		{Path: "model.banana", ExampleData: "data.synthetic_banana", ExampleRecord: "{x: [40, 80], y: 0}",
			Meaning: "The banana model of Räisä et al. (2021) §4.1: φ = (θ₁, θ₂ + a·θ₁²) ~ N(0, prior_var·I) a priori, records x₁ ~ N(θ₁, var1), x₂ ~ N(θ₂ + a·θ₁², var2). θ and x have 2 coordinates."},
		{Path: "model.banana.a", Default: "0", DefaultNote: "no bend: a Gaussian model", Range: "any finite number", UsedBy: "model.banana", Example: "20",
			Meaning: "Curvature a of the bend (the paper uses 20)."},
		{Path: "model.banana.prior_var", Required: "yes", Range: posRange, UsedBy: "model.banana", Example: "1000",
			Meaning: "Prior variance σ₀² of each coordinate of φ."},
		{Path: "model.banana.var1", Required: "yes", Range: posRange, UsedBy: "model.banana", Example: "2000",
			Meaning: "Variance σ₁² of x₁."},
		{Path: "model.banana.var2", Required: "yes", Range: posRange, UsedBy: "model.banana", Example: "2500",
			Meaning: "Variance σ₂² of x₂."},
	}},
	{Key: "mixture", Build: func(mc ModelConfig) (mechanisms.Model, error) { return checked(*mc.Mixture, "model.mixture") }, Docs: []Field{
		{Path: "model.mixture", ExampleData: "data.synthetic_mixture", ExampleRecord: "{x: [4], y: 0}",
			Meaning: "The two-component Gaussian mixture of Heikkilä et al. (2019) eqs. 24–25: θⱼ ~ N(0, varⱼ), x ~ ½N(θ₁, var_x) + ½N(θ₁ + θ₂, var_x). θ has 2 coordinates, records 1."},
		{Path: "model.mixture.var1", Required: "yes", Range: posRange, UsedBy: "model.mixture", Example: "10",
			Meaning: "Prior variance σ₁² of θ₁ (the paper: 10)."},
		{Path: "model.mixture.var2", Required: "yes", Range: posRange, UsedBy: "model.mixture", Example: "1",
			Meaning: "Prior variance σ₂² of θ₂ (the paper: 1)."},
		{Path: "model.mixture.var_x", Required: "yes", Range: posRange, UsedBy: "model.mixture", Example: "2",
			Meaning: "Variance σ_x² of each component (the paper: 2)."},
	}},
	{Key: "softmax", Build: func(mc ModelConfig) (mechanisms.Model, error) { return checked(*mc.Softmax, "model.softmax") }, Docs: []Field{
		{Path: "model.softmax", ExampleData: "data.records", ExampleRecord: "{x: [0.9, 0.9], y: 0}",
			Meaning: "Bayesian multinomial logistic regression: p(y | x, θ) = softmax(Wx + b)_y, θ = (W, b) ~ N(0, I/alpha); labels are class indices 0…classes−1."},
		{Path: "model.softmax.features", Required: "yes", Range: "[1, 2^20], features × classes ≤ 2^24", UsedBy: "model.softmax", Example: "2",
			Meaning: "Number of features D of a record."},
		{Path: "model.softmax.classes", Required: "yes", Range: "[2, 2^16]", UsedBy: "model.softmax", Example: "2",
			Meaning: "Number of classes K."},
		{Path: "model.softmax.alpha", Required: "yes", Range: posRange, UsedBy: "model.softmax", Example: "1",
			Meaning: "Prior precision of every parameter."},
	}},
	{Key: "mlp", Build: func(mc ModelConfig) (mechanisms.Model, error) { return checked(*mc.MLP, "model.mlp") }, Docs: []Field{
		{Path: "model.mlp", ExampleData: "data.records", ExampleRecord: "{x: [0.9, 0.9], y: 0}",
			Meaning: "A Bayesian neural network with one hidden layer of tanh units and a softmax output; every weight and bias ~ N(0, 1/alpha)."},
		{Path: "model.mlp.features", Required: "yes", Range: "[1, 2^20]", UsedBy: "model.mlp", Example: "2",
			Meaning: "Number of features D of a record."},
		{Path: "model.mlp.hidden", Required: "yes", Range: "[1, 2^16], hidden × (features + classes + 1) ≤ 2^24", UsedBy: "model.mlp", Example: "3",
			Meaning: "Number of hidden units H."},
		{Path: "model.mlp.classes", Required: "yes", Range: "[2, 2^16]", UsedBy: "model.mlp", Example: "2",
			Meaning: "Number of classes K."},
		{Path: "model.mlp.alpha", Required: "yes", Range: posRange, UsedBy: "model.mlp", Example: "1",
			Meaning: "Prior precision of every weight and bias."},
	}},
	{Key: "inert", Build: func(ModelConfig) (mechanisms.Model, error) { return mechanisms.Inert{}, nil }, Docs: []Field{
		{Path: "model.inert", ExampleData: "data.inert", ExampleNeighbour: "{gradient_canary: {}}", NotSamplers: []string{"program"},
			OtherModels: "a gradient canary needs a built-in step-by-step sampler, which evaluates the model",
			Meaning:     "No parameters; records without features whose log-likelihood is 0. Only with neighbour.gradient_canary: the canary's coordinate is then the whole model, and its path has the law it has beside any model (no ordinary record uses that coordinate), at the cost of that coordinate alone."},
	}},
}

// modelDocs returns every model's reference entries.
func modelDocs() []Field {
	var out []Field
	for _, e := range modelRegistry {
		out = append(out, e.Docs...)
	}
	return out
}

// buildModel builds the chosen model through its registry entry.
func buildModel(mc ModelConfig) (mechanisms.Model, error) {
	key, err := exactlyOne("model", &mc)
	if err != nil {
		return nil, errAt("model", "no model set")
	}
	for _, e := range modelRegistry {
		if e.Key == key {
			return e.Build(mc)
		}
	}
	return nil, errAt("model", "no model set")
}

// checked returns m once its own Check passes, its errors named under
// path.
func checked[M interface {
	mechanisms.Model
	Check() error
}](m M, path string) (mechanisms.Model, error) {
	if err := m.Check(); err != nil {
		return nil, wrapAt(err, path)
	}
	return m, nil
}

// buildGauss builds model.gauss, drawing Σ when raisa_cov asks.
func buildGauss(mc ModelConfig) (mechanisms.Model, error) {
	g := mc.Gauss
	cov := g.Cov
	if (len(cov) > 0) == (g.RaisaCov != nil) {
		return nil, errAt("model.gauss", "give exactly one of cov or raisa_cov")
	}
	if g.RaisaCov != nil {
		var err error
		if cov, err = presets.RaisaCovariance(g.RaisaCov.Dim, g.RaisaCov.Shape, g.RaisaCov.Seed); err != nil {
			return nil, wrapAt(err, "model.gauss.raisa_cov")
		}
	}
	m, err := mechanisms.NewGauss(g.PriorMean, g.PriorSD, cov)
	if err != nil {
		return nil, wrapAt(err, "model.gauss")
	}
	return m, nil
}
