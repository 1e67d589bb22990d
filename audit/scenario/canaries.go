package scenario

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/canary"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The designs of audit.design.
const (
	DesignRuns     = "runs"
	DesignCanaries = "canaries"
)

// CanaryConfig configures the one-run (canary) design, audit.design:
// canaries (Steinke, Nasr & Jagielski 2023): Count canaries of Kind, each
// in the training data with probability ½ from the seed, Runs runs pooled,
// and the guesses of the attack.
type CanaryConfig struct {
	// Count is m, the number of canaries.
	Count int `yaml:"count" json:"count"`
	// Kind is mislabel (records of D with their label changed), deepfool
	// (records of D moved across the decision boundaries of models trained
	// on D, keeping their label: the crafting of neighbour.deepfool) or
	// random (each feature uniform on its range in D, or on range; a
	// random label).
	Kind string `yaml:"kind" json:"kind"`
	// Guesses is r = k₊ + k₋, split evenly (k₊ = ⌈r/2⌉); or give
	// GuessesPlus and GuessesMinus; or GuessGrid, a list of r each split
	// evenly, paid for with Bonferroni. Default: r = count/10.
	Guesses      int   `yaml:"guesses,omitempty" json:"guesses,omitempty"`
	GuessesPlus  *int  `yaml:"guesses_plus,omitempty" json:"guesses_plus,omitempty"`
	GuessesMinus *int  `yaml:"guesses_minus,omitempty" json:"guesses_minus,omitempty"`
	GuessGrid    []int `yaml:"guess_grid,omitempty" json:"guess_grid,omitempty"`
	// Runs is the number of runs pooled (default 1); every canary belongs
	// to exactly one.
	Runs int `yaml:"runs,omitempty" json:"runs,omitempty"`
	// Score is raw (default: each canary's log-likelihood under the
	// release, or the program's score) or calibrated (that score minus its
	// mean over References reference runs, whose data ReferenceCanaries
	// says; audit.ScoreCalibrated).
	Score string `yaml:"score,omitempty" json:"score,omitempty"`
	// References is R, the reference runs of a calibrated score (default
	// 1); refused with the raw score.
	References int `yaml:"references,omitempty" json:"references,omitempty"`
	// ReferenceCanaries is none (default: the reference runs train on D
	// alone) or all (on D plus every canary); only with score calibrated.
	ReferenceCanaries string `yaml:"reference_canaries,omitempty" json:"reference_canaries,omitempty"`
	// AverageReleases scores a canary at each release by the mean of its
	// scores at the releases so far (audit.CanaryDesign.AverageReleases).
	AverageReleases bool `yaml:"average_releases,omitempty" json:"average_releases,omitempty"`
	// Features, Classes and Range describe random canaries when the
	// scenario has no data of its own (a program that loads its own).
	Features int       `yaml:"features,omitempty" json:"features,omitempty"`
	Classes  int       `yaml:"classes,omitempty" json:"classes,omitempty"`
	Range    []float64 `yaml:"range,omitempty" json:"range,omitempty"`
	// Pool is a CSV file of records (header x1,…,xd,y; the label last) to
	// draw mislabel canaries from when the scenario has no data of its own
	// (a program that loads its data itself); relative to the scenario's
	// directory. PoolSHA256 pins its digest (filled in when empty).
	Pool       string `yaml:"pool,omitempty" json:"pool,omitempty"`
	PoolSHA256 string `yaml:"pool_sha256,omitempty" json:"pool_sha256,omitempty"`
	// DeepFool configures kind deepfool (models, canary, sampler), as
	// neighbour.deepfool does.
	DeepFool *DeepFoolConfig `yaml:"deepfool,omitempty" json:"deepfool,omitempty"`
	// Slope is K of kind gradient: canary i's log-likelihood is K·θ_i
	// (0: mechanisms.DefaultCanarySlope), its clipped gradient min(K, C).
	Slope float64 `yaml:"slope,omitempty" json:"slope,omitempty"`
}

// canaryDesign reports whether the scenario is in the canary design.
func (c *Config) canaryDesign() bool { return c.Audit.Design == DesignCanaries }

// canaryKind registers a kind of canary (audit.canaries.kind): its
// reference text, where its canaries may come from and how they are drawn
// from D. Adding a kind is an entry here (and its drawing function).
type canaryKind struct {
	// Name is the kind's name in audit.canaries.kind.
	Name string
	// Doc says what the canaries are, for the reference.
	Doc string
	// Crafted kinds need audit.canaries.deepfool, the others refuse it.
	Crafted bool
	// Pool kinds may be drawn from audit.canaries.pool in a scenario
	// without data.
	Pool bool
	// Own kinds may be drawn, in a scenario without data, from
	// audit.canaries.features, classes and range.
	Own bool
	// Gradient kinds are no records: each canary has a coordinate of its
	// own in the chain (mechanisms.CanaryPaths), under threat: path.
	Gradient bool
	// FromData draws the canaries from a non-empty D.
	FromData func(c *Config, p *Plan, d *dataset.Dataset, rng *rand.Rand) ([]dataset.Record, error)
}

// canaryKinds lists the kinds in the order the reference gives them.
var canaryKinds = []canaryKind{
	{Name: "mislabel", Pool: true,
		Doc: "records of D (without replacement while they last) with a label drawn among the others (classifiers: logistic, softmax, mlp)",
		FromData: func(c *Config, p *Plan, d *dataset.Dataset, rng *rand.Rand) ([]dataset.Record, error) {
			return mislabelled(c.Audit.Canaries.Count, d, p.Model, rng)
		}},
	{Name: "deepfool", Crafted: true,
		Doc: "records of D moved across the decision boundaries of an ensemble trained on D, keeping their label (as neighbour.deepfool; softmax, mlp)",
		FromData: func(c *Config, p *Plan, d *dataset.Dataset, _ *rand.Rand) ([]dataset.Record, error) {
			return deepfoolCanaries(c, p, d)
		}},
	{Name: "gradient", Gradient: true,
		Doc:      "gradient canaries (threat: path, model inert, data inert): canary i has a coordinate θ_i of its own with a flat prior and log-likelihood slope·θ_i, so its clipped gradient sits at the clip bound; its score is its path statistic (sgld, dp_hmc, dp_penalty)",
		FromData: func(*Config, *Plan, *dataset.Dataset, *rand.Rand) ([]dataset.Record, error) { return nil, nil }},
	{Name: "random", Own: true,
		Doc: "every feature uniform on its range in D (or on range), a uniform label (a uniform value on the labels' range for linreg)",
		FromData: func(c *Config, p *Plan, d *dataset.Dataset, rng *rand.Rand) ([]dataset.Record, error) {
			return randomFromData(c.Audit.Canaries.Count, d, p.Model, rng), nil
		}},
}

// lookupCanaryKind returns the entry of a kind.
func lookupCanaryKind(name string) (canaryKind, bool) {
	for _, k := range canaryKinds {
		if k.Name == name {
			return k, true
		}
	}
	return canaryKind{}, false
}

// canaryKindNames lists the names of the kinds for which keep holds (all
// for nil).
func canaryKindNames(keep func(canaryKind) bool) []string {
	var out []string
	for _, k := range canaryKinds {
		if keep == nil || keep(k) {
			out = append(out, k.Name)
		}
	}
	return out
}

// canaryKindRange is the reference's range of audit.canaries.kind.
func canaryKindRange() string { return strings.Join(canaryKindNames(nil), ", ") }

// canaryKindMeaning is the reference's meaning of audit.canaries.kind.
func canaryKindMeaning() string {
	var docs []string
	for _, k := range canaryKinds {
		docs = append(docs, k.Name+": "+k.Doc)
	}
	return strings.Join(docs, "; ") + "."
}

func isPool(k canaryKind) bool { return k.Pool }
func isOwn(k canaryKind) bool  { return k.Own }

// validateCanaries checks audit.design and audit.canaries.
func (c *Config) validateCanaries() error {
	a := c.Audit
	switch a.Design {
	case "", DesignRuns:
		if a.Canaries != nil {
			return errAt("audit.canaries", "only with audit.design: canaries")
		}
		return nil
	case DesignCanaries:
	default:
		return errAt("audit.design", "must be runs or canaries, got %s", clip.Quote(a.Design))
	}
	cc := a.Canaries
	if cc == nil {
		return errAt("audit.canaries", "required with audit.design: canaries, e.g. {count: 1000, kind: mislabel, guesses: 100}")
	}
	if cc.Count < audit.MinCanaries || cc.Count > MaxRecords {
		return errAt("audit.canaries.count", "must be in [%d, %d], got %d", audit.MinCanaries, MaxRecords, cc.Count)
	}
	if err := cc.validateKind(); err != nil {
		return err
	}
	if err := c.validateCanaryRuns(); err != nil {
		return err
	}
	return cc.validateRandom(c.Data.empty())
}

// validateKind checks audit.canaries.kind and the crafting it needs.
func (cc *CanaryConfig) validateKind() error {
	k, ok := lookupCanaryKind(cc.Kind)
	switch {
	case !ok:
		return errAt("audit.canaries.kind", "must be %s, got %s", wordList(canaryKindNames(nil), "or"), clip.Quote(cc.Kind))
	case !k.Crafted && cc.DeepFool != nil:
		return errAt("audit.canaries.deepfool", "only with kind: %s", strings.Join(canaryKindNames(func(k canaryKind) bool { return k.Crafted }), " or "))
	case k.Crafted && cc.DeepFool == nil:
		return errAt("audit.canaries.deepfool", "required with kind: %s, e.g. {models: 10}", k.Name)
	case k.Crafted && (cc.DeepFool.Models < 1 || cc.DeepFool.Models > 10000):
		return errAt("audit.canaries.deepfool.models", "must be in [1, 10000], got %d", cc.DeepFool.Models)
	case cc.Slope != 0 && !k.Gradient:
		return errAt("audit.canaries.slope", "only with kind: gradient")
	case !(cc.Slope >= 0) || math.IsInf(cc.Slope, 0):
		return errAt("audit.canaries.slope", "must be finite and > 0 (0: %g), got %g", mechanisms.DefaultCanarySlope, cc.Slope)
	}
	return nil
}

// validateCanaryRuns checks the runs, the guesses, and the sections the
// canary design does without.
func (c *Config) validateCanaryRuns() error {
	a, cc := c.Audit, c.Audit.Canaries
	if cc.Runs < 0 || cc.Runs > cc.Count {
		return errAt("audit.canaries.runs", "must be in [1, count=%d], got %d", cc.Count, cc.Runs)
	}
	if err := cc.validateScore(); err != nil {
		return err
	}
	if a.Trials != 0 && a.Trials != cc.trials() {
		return errAt("audit.trials", "the canary design's runs are audit.canaries.runs (and references); remove audit.trials")
	}
	if _, err := cc.guesses(); err != nil {
		return err
	}
	if c.Neighbour != nil {
		return errAt("neighbour", "the canary design adds and removes canaries itself; remove the neighbour section")
	}
	if k, _ := lookupCanaryKind(cc.Kind); c.Claim != nil && c.Claim.Theorems && !k.Gradient {
		return errAt("claim.theorems", "not available in the canary design with kind %s: the theorems bound replace-one pairs of datasets of a fixed size n, while the canaries are added or removed (the size varies with the coins), and a replace-one guarantee implies no add/remove bound; kind gradient (n public) is tested against the add/remove bound of one canary", cc.Kind)
	}
	return nil
}

// validateScore checks audit.canaries.score and references.
func (cc *CanaryConfig) validateScore() error {
	switch cc.Score {
	case "", audit.ScoreRaw:
		if cc.References != 0 {
			return errAt("audit.canaries.references", "only with score: %s (the raw score has no reference runs); remove it", audit.ScoreCalibrated)
		}
	case audit.ScoreCalibrated:
		if k, _ := lookupCanaryKind(cc.Kind); k.Gradient {
			return errAt("audit.canaries.score", "calibrated is for log-likelihood scores; gradient canaries are scored by their path statistic, a likelihood ratio already: remove score")
		}
		if cc.References < 0 || cc.References > audit.MaxReferences {
			return errAt("audit.canaries.references", "must be in [1, %d], got %d", audit.MaxReferences, cc.References)
		}
	default:
		return errAt("audit.canaries.score", "must be %s or %s, got %s", audit.ScoreRaw, audit.ScoreCalibrated, clip.Quote(cc.Score))
	}
	switch cc.ReferenceCanaries {
	case "":
	case audit.ReferenceNone, audit.ReferenceAll:
		if cc.Score != audit.ScoreCalibrated {
			return errAt("audit.canaries.reference_canaries", "only with score: %s; remove it", audit.ScoreCalibrated)
		}
	default:
		return errAt("audit.canaries.reference_canaries", "must be %s or %s, got %s", audit.ReferenceNone, audit.ReferenceAll, clip.Quote(cc.ReferenceCanaries))
	}
	return nil
}

// trials returns the design's trials: its runs and, with a calibrated
// score, its reference runs.
func (cc *CanaryConfig) trials() int {
	d := audit.CanaryDesign{Runs: cc.Runs, Score: cc.Score, References: cc.References,
		ReferenceCanaries: cc.ReferenceCanaries, AverageReleases: cc.AverageReleases}
	return d.Trials()
}

// ownCanaries reports whether features, classes or range are given.
func (cc *CanaryConfig) ownCanaries() bool {
	return cc.Features != 0 || cc.Classes != 0 || len(cc.Range) != 0
}

// validateRandom checks pool, features, classes and range: a pool only
// for the pool kinds, the others only for the own kinds (random), both
// only without data.
func (cc *CanaryConfig) validateRandom(noData bool) error {
	k, _ := lookupCanaryKind(cc.Kind)
	own := cc.ownCanaries()
	if k.Gradient {
		if own || cc.Pool != "" || cc.PoolSHA256 != "" {
			return errAt("audit.canaries.kind", "gradient canaries are coordinates, not records: remove features, classes, range and pool")
		}
		return nil
	}
	if cc.Pool != "" || cc.PoolSHA256 != "" {
		return cc.validatePool(k, noData)
	}
	switch {
	case own && (!k.Own || !noData):
		return errAt("audit.canaries.features", "features, classes and range are for %s canaries of a scenario without data; remove them", strings.Join(canaryKindNames(isOwn), " or "))
	case !own && noData:
		return errAt("audit.canaries", "the scenario has no data to draw canaries from: use kind: %s with features, classes and range", strings.Join(canaryKindNames(isOwn), " or "))
	case !own:
		return nil
	}
	return cc.validateOwn()
}

// validatePool checks audit.canaries.pool and pool_sha256.
func (cc *CanaryConfig) validatePool(k canaryKind, noData bool) error {
	switch {
	case !k.Pool:
		return errAt("audit.canaries.pool", "only with kind: %s, got kind %s", strings.Join(canaryKindNames(isPool), " or "), clip.Quote(cc.Kind))
	case !noData:
		return errAt("audit.canaries.pool", "only for a scenario without data (%s canaries are drawn from the data otherwise); remove it", strings.Join(canaryKindNames(isPool), " or "))
	case cc.Pool == "":
		return errAt("audit.canaries.pool", "required with pool_sha256, e.g. canary-pool.csv")
	case cc.ownCanaries():
		return errAt("audit.canaries.features", "features, classes and range are for %s canaries; remove them", strings.Join(canaryKindNames(isOwn), " or "))
	}
	return nil
}

// validateOwn checks the features, classes and range of canaries drawn
// without data.
func (cc *CanaryConfig) validateOwn() error {
	if cc.Features < 1 || cc.Features > 1<<20 {
		return errAt("audit.canaries.features", "must be in [1, 1048576], got %d", cc.Features)
	}
	if cc.Classes < 0 || cc.Classes == 1 || cc.Classes > 1<<16 {
		return errAt("audit.canaries.classes", "must be 0 (no label) or in [2, 65536], got %d", cc.Classes)
	}
	if len(cc.Range) != 2 || !(cc.Range[0] < cc.Range[1]) || math.IsInf(cc.Range[0], 0) || math.IsInf(cc.Range[1], 0) {
		return errAt("audit.canaries.range", "must be [lo, hi] with finite lo < hi, got %v", cc.Range)
	}
	if float64(cc.Count)*float64(cc.Features) > MaxDataValues {
		return errAt("audit.canaries", "%d canaries × %d features exceed the limit of %d values", cc.Count, cc.Features, MaxDataValues)
	}
	return nil
}

// guesses returns the design's guess pairs.
func (cc *CanaryConfig) guesses() ([]audit.Guess, error) {
	forms := 0
	if cc.Guesses != 0 {
		forms++
	}
	if cc.GuessesPlus != nil || cc.GuessesMinus != nil {
		forms++
	}
	if len(cc.GuessGrid) > 0 {
		forms++
	}
	if forms > 1 {
		return nil, errAt("audit.canaries.guesses", "give one of guesses, guesses_plus with guesses_minus, or guess_grid")
	}
	check := func(path string, g audit.Guess) error {
		if g.Plus < 0 || g.Minus < 0 || g.R() < 1 || g.R() > cc.Count {
			return errAt(path, "the guesses must number between 1 and count=%d, got k+ = %d, k- = %d", cc.Count, g.Plus, g.Minus)
		}
		return nil
	}
	var gs []audit.Guess
	switch {
	case cc.Guesses != 0:
		gs = []audit.Guess{audit.SplitGuesses(cc.Guesses)}
	case cc.GuessesPlus != nil || cc.GuessesMinus != nil:
		g := audit.Guess{}
		if cc.GuessesPlus != nil {
			g.Plus = *cc.GuessesPlus
		}
		if cc.GuessesMinus != nil {
			g.Minus = *cc.GuessesMinus
		}
		gs = []audit.Guess{g}
	case len(cc.GuessGrid) > audit.MaxGuessGrid:
		return nil, errAt("audit.canaries.guess_grid", "at most %d values (each costs a Bonferroni share of α), got %d", audit.MaxGuessGrid, len(cc.GuessGrid))
	default:
		for _, r := range cc.GuessGrid {
			gs = append(gs, audit.SplitGuesses(r))
		}
	}
	for _, g := range gs {
		if err := check("audit.canaries.guesses", g); err != nil {
			return nil, err
		}
	}
	return gs, nil
}

// design returns the engine's canary design.
func (cc *CanaryConfig) design() *audit.CanaryDesign {
	gs, _ := cc.guesses()
	return &audit.CanaryDesign{Count: cc.Count, Runs: cc.Runs, Kind: cc.Kind, Guesses: gs, Score: cc.Score, References: cc.References,
		ReferenceCanaries: cc.ReferenceCanaries, AverageReleases: cc.AverageReleases}
}

// streamCanaryDraw is the random stream the canaries are drawn from,
// apart from every trial's streams and from the inclusion coins.
const streamCanaryDraw uint64 = 0x4452415743414e // "DRAWCAN"

// drawCanaries makes the scenario's canary records from D (nil for a
// program without data).
func drawCanaries(c *Config, p *Plan, d *dataset.Dataset) ([]dataset.Record, error) {
	cc := c.Audit.Canaries
	rng := mechanisms.TrialRNG(c.Seed, dataset.SideDPrime, 0, streamCanaryDraw)
	k, _ := lookupCanaryKind(cc.Kind)
	switch {
	case k.Own && d == nil:
		return randomCanaries(cc, rng), nil
	case k.Pool && cc.Pool != "" && d == nil:
		pool, err := loadPool(c)
		if err != nil {
			return nil, err
		}
		return mislabelled(cc.Count, pool, nil, rng)
	case d == nil || d.Len() == 0:
		return nil, errAt("audit.canaries.kind", "%s canaries are drawn from the data, and the scenario has none", cc.Kind)
	}
	return k.FromData(c, p, d, rng)
}

// randomCanaries draws features uniform on range and a uniform label.
func randomCanaries(cc *CanaryConfig, rng *rand.Rand) []dataset.Record {
	out := make([]dataset.Record, cc.Count)
	for i := range out {
		x := make([]float64, cc.Features)
		for j := range x {
			x[j] = cc.Range[0] + (cc.Range[1]-cc.Range[0])*rng.Float64()
		}
		out[i].X = x
		if cc.Classes > 0 {
			out[i].Y = float64(rng.IntN(cc.Classes))
		}
	}
	return out
}

// classes returns the number of labels a model's records take: K for a
// classifier, 2 for logistic regression, 0 for a model without labels or
// with real-valued ones.
func classes(m mechanisms.Model) int {
	switch m := m.(type) {
	case mechanisms.Classifier:
		return m.NumClasses()
	case mechanisms.Logistic, *mechanisms.Logistic:
		return 2
	}
	return 0
}

// labelsOf returns the number of classes of a model, or — for a program
// without a model — of the data, when its labels are the integers 0..K−1.
func labelsOf(m mechanisms.Model, d *dataset.Dataset) int {
	if m != nil {
		return classes(m)
	}
	k := 0
	for _, r := range d.Records {
		if r.Y < 0 || r.Y != math.Trunc(r.Y) || r.Y >= 1<<16 {
			return 0
		}
		k = max(k, int(r.Y)+1)
	}
	if k < 2 {
		return 0
	}
	return k
}

// hasLabels reports whether the model's records carry a label y.
func hasLabels(m mechanisms.Model) bool {
	switch m.(type) {
	case mechanisms.LinReg, *mechanisms.LinReg:
		return true
	}
	return classes(m) > 0
}

// randomFromData draws each feature uniform on its range in D and a label
// uniform among the classes (or on the labels' range for regression).
func randomFromData(m int, d *dataset.Dataset, model mechanisms.Model, rng *rand.Rand) []dataset.Record {
	dim := len(d.Records[0].X)
	lo, hi := make([]float64, dim+1), make([]float64, dim+1)
	for j := range lo {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	for _, r := range d.Records {
		for j, v := range append(r.X[:dim:dim], r.Y) {
			lo[j], hi[j] = math.Min(lo[j], v), math.Max(hi[j], v)
		}
	}
	k := labelsOf(model, d)
	out := make([]dataset.Record, m)
	for i := range out {
		x := make([]float64, dim)
		for j := range x {
			x[j] = lo[j] + (hi[j]-lo[j])*rng.Float64()
		}
		out[i].X = x
		switch {
		case k > 0:
			out[i].Y = float64(rng.IntN(k))
		case hasLabels(model):
			out[i].Y = lo[dim] + (hi[dim]-lo[dim])*rng.Float64()
		}
	}
	return out
}

// mislabelled draws records of D (without replacement while they last)
// and gives each a label drawn uniformly among the others.
func mislabelled(m int, d *dataset.Dataset, model mechanisms.Model, rng *rand.Rand) ([]dataset.Record, error) {
	k := labelsOf(model, d)
	if k < 2 {
		name := "no model, and labels that are not classes 0..K-1"
		if model != nil {
			name = model.Name()
		}
		return nil, errAt("audit.canaries.kind", "mislabel needs a classification model (logistic, softmax or mlp) whose labels can be changed, got %s; use kind: random", name)
	}
	out := make([]dataset.Record, 0, m)
	for len(out) < m {
		for _, i := range rng.Perm(d.Len()) {
			if len(out) == m {
				break
			}
			r := d.Records[i]
			y := min(max(int(math.Round(r.Y)), 0), k-1)
			out = append(out, dataset.Record{X: append([]float64(nil), r.X...), Y: float64((y + 1 + rng.IntN(k-1)) % k)})
		}
	}
	return out, nil
}

// deepfoolCanaries crafts canaries as neighbour.deepfool crafts its one:
// an ensemble trained on D, then records all its models classify correctly
// and alike moved across their decision boundaries, keeping their label.
func deepfoolCanaries(c *Config, p *Plan, d *dataset.Dataset) ([]dataset.Record, error) {
	cc := c.Audit.Canaries
	cl, ok := p.Model.(mechanisms.Classifier)
	if !ok {
		name := "none"
		if p.Model != nil {
			name = p.Model.Name()
		}
		return nil, errAt("audit.canaries.kind", "deepfool needs a classification model (softmax or mlp), got %s", name)
	}
	thetas, err := trainEnsemble(c, p, d, cc.DeepFool, "audit.canaries.deepfool")
	if err != nil {
		return nil, err
	}
	agreed, err := canary.AgreedRecords(cl, thetas, d, true)
	if err != nil {
		return nil, errAt("audit.canaries.deepfool", "%w", err)
	}
	var out []dataset.Record
	var lastErr error
	for _, idx := range agreed {
		if len(out) == cc.Count {
			break
		}
		can, err := canary.Craft(cl, thetas, d, idx, cc.DeepFool.Canary)
		if err != nil {
			lastErr = err
			continue
		}
		out = append(out, can.Record())
	}
	if len(out) < cc.Count {
		why := ""
		if lastErr != nil {
			why = fmt.Sprintf(" (the last failure: %v)", lastErr)
		}
		return nil, errAt("audit.canaries.count", "must be at most %d here: the %d models agree on %d records, of which %d could be crafted%s", len(out), cc.DeepFool.Models, len(agreed), len(out), why)
	}
	return out, nil
}

// canaryFeatures returns the scores of the canary design: each canary's
// log-likelihood under the released θ.
func canaryScores(m mechanisms.Model, cs []dataset.Record) attacks.FeatureMap {
	ll := attacks.LogLik{Model: m, Records: cs}
	for i := range cs {
		ll.Labels = append(ll.Labels, fmt.Sprintf("canary %d", i))
	}
	// A classifier scores the m canaries as one product per release: at
	// one record at a time, scoring 300 canaries took a fifth of a digits
	// run's CPU.
	if bc, ok := m.(mechanisms.BatchClassifier); ok {
		if set, err := mechanisms.NewLogLikSet(bc, cs); err == nil {
			ll.Batch = set
		}
	}
	return ll
}

// Limits on audit.canaries.pool: the pool only supplies count canaries
// (a few thousand in practice: MNIST's 10,000 test images are 7.84·10⁶
// values), so it is held to far less than data.csv, and a larger file is
// refused before its values are kept, in a few tens of MB.
const (
	// MaxPoolBytes bounds the pool file as stored (it is read whole, for
	// its digest and for trials files): 32 MiB.
	MaxPoolBytes = 32 << 20
	// MaxPoolRecords bounds the pool's records.
	MaxPoolRecords = 100_000
	// MaxPoolValues bounds its feature values (records × features).
	MaxPoolValues = 10_000_000
)

// loadPool reads audit.canaries.pool, its digest checked against, or
// pinned into, pool_sha256 (a trials file carries the bytes, as it carries
// data.csv's). The file is refused by its size before it is read (or once
// it has grown past MaxPoolBytes while being read), and its text is
// scanned under MaxPoolRecords and MaxPoolValues, keeping nothing, before
// its values are parsed.
func loadPool(c *Config) (*dataset.Dataset, error) {
	cc := c.Audit.Canaries
	path := cc.Pool
	if !filepath.IsAbs(path) && c.baseDir != "" {
		path = filepath.Join(c.baseDir, path)
	}
	raw, err := c.pinnedFile(path, &cc.PoolSHA256, "audit.canaries.pool", MaxPoolBytes)
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxPoolBytes {
		// Bytes a trials file brought, written under other limits.
		return nil, errAt("audit.canaries.pool", "%s has %d bytes, more than the limit of %d", path, len(raw), MaxPoolBytes)
	}
	opts := dataset.CSVOptions{Name: dataset.NameFromPath(cc.Pool), Header: true, MaxRecords: MaxPoolRecords}
	if _, err := dataset.ScanCSVFrom(bytes.NewReader(raw), opts, dataset.CSVLimits{MaxValues: MaxPoolValues}); err != nil {
		return nil, wrapAt(err, "audit.canaries.pool")
	}
	d, err := dataset.ReadCSVFrom(bytes.NewReader(raw), opts)
	if err != nil {
		return nil, wrapAt(err, "audit.canaries.pool")
	}
	if d.Len() == 0 {
		return nil, errAt("audit.canaries.pool", "%s holds no records", path)
	}
	return d, nil
}
