package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/canary"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"go.yaml.in/yaml/v3"
)

// Config is an audit scenario, as written in a YAML file. Every section
// that offers alternatives (model, data, sampler) holds exactly one of its
// keys; unknown fields anywhere are an error.
type Config struct {
	// Name identifies the scenario in reports.
	Name string `yaml:"name" json:"name"`
	// Description is free text shown in reports.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Seed makes the audit reproducible: trial i on side s draws its
	// randomness from (Seed, s, i) only.
	Seed uint64 `yaml:"seed" json:"seed"`

	Model     ModelConfig            `yaml:"model" json:"model"`
	Data      DataConfig             `yaml:"data" json:"data"`
	Neighbour *NeighbourConfig       `yaml:"neighbour,omitempty" json:"neighbour,omitempty"`
	Sampler   SamplerConfig          `yaml:"sampler" json:"sampler"`
	Init      mechanisms.Init        `yaml:"init,omitempty" json:"init"`
	Release   mechanisms.ReleaseSpec `yaml:"release,omitempty" json:"release"`
	Audit     AuditConfig            `yaml:"audit" json:"audit"`
	Claim     *ClaimConfig           `yaml:"claim,omitempty" json:"claim,omitempty"`
	// Threat is what the adversary observes: the releases (default), or
	// the path — every quantity the sampler's privacy proof treats as
	// released, at every iteration, reduced to its exact log-likelihood
	// ratio (mechanisms.PathSpec). The path needs a gradient canary.
	Threat string `yaml:"threat,omitempty" json:"threat,omitempty"`

	// baseDir resolves relative data paths ("" = the working directory).
	baseDir string
	// files holds the contents of the data files, by lower-case SHA-256:
	// filled when Build reads them, or from a trials file's spec.
	files map[string][]byte
	// src locates the fields in the YAML text (nil when the config was
	// not decoded from YAML).
	src *source
}

// DataConfig chooses the dataset D (and, for the counterexample, D′ too):
// exactly one field is set.
type DataConfig struct {
	// Counterexample is Heller & Fetaya's pair (eq. 8); it defines D′ itself.
	Counterexample *CounterexampleData `yaml:"counterexample,omitempty" json:"counterexample,omitempty"`
	// SyntheticLinReg draws a linear-regression dataset from a seed.
	SyntheticLinReg *SyntheticData `yaml:"synthetic_linreg,omitempty" json:"synthetic_linreg,omitempty"`
	// SyntheticLogistic draws a logistic-regression dataset from a seed.
	SyntheticLogistic *SyntheticData `yaml:"synthetic_logistic,omitempty" json:"synthetic_logistic,omitempty"`
	// SyntheticGauss draws records x ~ N(θ*, Σ) for the Gauss model.
	SyntheticGauss *SyntheticData `yaml:"synthetic_gauss,omitempty" json:"synthetic_gauss,omitempty"`
	// SyntheticBanana draws records from the banana model at θ* (two values).
	SyntheticBanana *SyntheticData `yaml:"synthetic_banana,omitempty" json:"synthetic_banana,omitempty"`
	// SyntheticMixture draws records from Heikkilä et al.'s mixture at θ*.
	SyntheticMixture *SyntheticData `yaml:"synthetic_mixture,omitempty" json:"synthetic_mixture,omitempty"`
	// CSV reads the dataset from a file.
	CSV *CSVData `yaml:"csv,omitempty" json:"csv,omitempty"`
	// Records lists the records inline.
	Records []dataset.Record `yaml:"records,omitempty" json:"records,omitempty"`
	// Inert holds N records without features, for model.inert.
	Inert *InertData `yaml:"inert,omitempty" json:"inert,omitempty"`
}

// InertData is a dataset of N featureless records (model.inert).
type InertData struct {
	N int `yaml:"n" json:"n"`
}

// CSVData reads a dataset from a CSV file (gzip allowed), relative to the
// scenario file's directory (to the working directory for a scenario not
// read from a file). Preset digits or breast_cancer gives the options of
// the bundled sets (testdata/DATA.md); Options overrides them. A held-out
// test set (TestFraction of the records, stratified by class, from Seed)
// is kept out of D and used only to report the accuracy of the releases.
type CSVData struct {
	Path         string              `yaml:"path" json:"path"`
	Preset       string              `yaml:"preset,omitempty" json:"preset,omitempty"`
	Options      *dataset.CSVOptions `yaml:"options,omitempty" json:"options,omitempty"`
	TestFraction float64             `yaml:"test_fraction,omitempty" json:"test_fraction,omitempty"`
	Seed         uint64              `yaml:"seed,omitempty" json:"seed,omitempty"`
	// SHA256 pins the file's contents: Build fills it in, and refuses a
	// file whose digest differs from a given one (so shards and merges of
	// one audit read the same data).
	SHA256 string `yaml:"sha256,omitempty" json:"sha256,omitempty"`
}

// CounterexampleData parametrises Heller & Fetaya eq. 8.
type CounterexampleData struct {
	N  int     `yaml:"n" json:"n"`
	XH float64 `yaml:"xh" json:"xh"`
	C  float64 `yaml:"c" json:"c"`
}

// SyntheticData parametrises the seeded generators of package mechanisms.
type SyntheticData struct {
	N         int       `yaml:"n" json:"n"`
	ThetaStar []float64 `yaml:"theta_star" json:"theta_star"`
	// Beta is the noise precision (linear regression only).
	Beta   float64 `yaml:"beta,omitempty" json:"beta,omitempty"`
	XScale float64 `yaml:"x_scale,omitempty" json:"x_scale,omitempty"`
	Seed   uint64  `yaml:"seed" json:"seed"`
}

// NeighbourConfig builds D′ from D (not used with the counterexample pair).
type NeighbourConfig struct {
	// DeepFool crafts the canary as Heller & Fetaya §V do: train Models
	// models on D with the scenario's sampler, pick a record they all
	// classify correctly and alike, and move it minimally across their
	// decision boundaries (canary.Craft); D′ replaces the record
	// by the crafted one with its original label. Index and Record are then
	// not used.
	DeepFool *DeepFoolConfig `yaml:"deepfool,omitempty" json:"deepfool,omitempty"`
	// Adjacency is replace-one (default), remove-one or add-one.
	Adjacency dataset.Adjacency `yaml:"adjacency,omitempty" json:"adjacency,omitempty"`
	// Index of the record replaced or removed (replace-one, remove-one).
	Index int `yaml:"index" json:"index"`
	// Record is the canary that replaces record Index, or is added.
	Record *dataset.Record `yaml:"record,omitempty" json:"record,omitempty"`
	// GradientCanary makes the canary a gradient canary
	// (mechanisms.GradientCanary): the model gains a coordinate θ_c that
	// only the canary uses; under replace-one record Index becomes the
	// canary of sign −1 in D and of sign +1 in D′, under add-one D′ adds
	// the canary of sign +1. Record is then not used.
	GradientCanary *GradientCanaryConfig `yaml:"gradient_canary,omitempty" json:"gradient_canary,omitempty"`
}

// GradientCanaryConfig configures a gradient canary.
type GradientCanaryConfig struct {
	// Slope is K, the canary's log-likelihood s·K·θ_c (0 means
	// mechanisms.DefaultCanarySlope).
	Slope float64 `yaml:"slope,omitempty" json:"slope,omitempty"`
}

// DeepFoolConfig configures the canary crafting of NeighbourConfig.
type DeepFoolConfig struct {
	// Models is the size of the ensemble trained on D (its runs use a
	// random stream of their own, never an audited trial's).
	Models int `yaml:"models" json:"models"`
	// Canary sets the margin, feature box and targets of the crafting.
	Canary canary.Options `yaml:"canary,omitempty" json:"canary"`
	// Sampler trains the ensemble (default: the scenario's sampler);
	// required when the audited sampler is a program, which the tool
	// cannot use for that.
	Sampler *SamplerConfig `yaml:"sampler,omitempty" json:"sampler,omitempty"`
}

// AuditConfig sets the statistics of the audit.
type AuditConfig struct {
	// Design is runs (default: many runs on D and D′, attacks trained and
	// evaluated on them) or canaries (the one-run design of Steinke, Nasr
	// & Jagielski 2023, configured by Canaries; trials, split, features
	// and attacks are then not used).
	Design string `yaml:"design,omitempty" json:"design,omitempty"`
	// Canaries configures the canary design.
	Canaries *CanaryConfig `yaml:"canaries,omitempty" json:"canaries,omitempty"`
	// Trials is the total number of runs (both sides).
	Trials int `yaml:"trials" json:"trials"`
	// Assignment is random (default) or balanced.
	Assignment string `yaml:"assignment,omitempty" json:"assignment"`
	// Split divides the trials (required: train and eval).
	Split audit.Split `yaml:"split" json:"split"`
	// Features lists the feature maps: theta, norm, coord:K, loglik.
	Features []string `yaml:"features,omitempty" json:"features"`
	// Metrics lists what is reported per release besides ε: accuracy (of
	// the released model on the held-out test set of data.csv).
	Metrics []string `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	// Attacks lists the classifiers: threshold, linear, logistic, qda.
	Attacks []string `yaml:"attacks,omitempty" json:"attacks"`
	// AttackSelection is training (default) or bonferroni.
	AttackSelection string `yaml:"attack_selection,omitempty" json:"attack_selection"`
	// PointSelection decides how the verdict treats several release
	// points: training (default: one point chosen on training runs) or
	// bonferroni (every point tested at α/P).
	PointSelection string `yaml:"point_selection,omitempty" json:"point_selection"`
	// Estimators lists the estimators that turn the attacks' errors into
	// bounds, by their registered names (default: region and gdp). The
	// headline rests on region when it is listed, else on the first.
	Estimators []string `yaml:"estimators,omitempty" json:"estimators,omitempty"`
	Delta      float64  `yaml:"delta" json:"delta"`
	Confidence float64  `yaml:"confidence" json:"confidence"`
	// SelectionConfidence is audit.Options.SelectionConfidence.
	SelectionConfidence float64 `yaml:"selection_confidence,omitempty" json:"selection_confidence,omitempty"`
	// Workers is the number of concurrent runs (0: one per CPU). It never
	// changes the result.
	Workers int `yaml:"workers,omitempty" json:"-"`
}

// ClaimConfig is a claimed upper bound to test. Set Epsilon and Delta for an
// (ε, δ)-DP claim, or GDP for a μ-GDP claim, and/or Theorems to test the
// sampler's applicable theoretical guarantees.
type ClaimConfig struct {
	Epsilon  *float64 `yaml:"epsilon,omitempty" json:"epsilon,omitempty"`
	Delta    *float64 `yaml:"delta,omitempty" json:"delta,omitempty"`
	GDP      *float64 `yaml:"gdp,omitempty" json:"gdp,omitempty"`
	Theorems bool     `yaml:"theorems,omitempty" json:"theorems,omitempty"`
}

// Limits on a config, so that a typo cannot exhaust the machine.
const (
	// MaxRecords bounds a materialised dataset, and MaxDataValues its
	// records × features.
	MaxRecords    = 1_000_000
	MaxDataValues = 20_000_000
)

// ParseConfig decodes a YAML scenario strictly, fills defaults and
// validates it. Every error names the field by its YAML path and, when the
// value came from the text, its line (see Error): unknown fields (with the
// nearest known name), values of the wrong type (in YAML terms: "a
// number", "a list of numbers", "a mapping {eta, b, gamma}"), integers
// that are not exactly integers in range (1e6 is accepted for an integer
// field because it is exactly one; 40.5 is not), keys given twice, and
// every range checked by Validate.
//
// The settings, if any, are applied in order to the document before it
// is decoded, as if the file had been edited (see Setting): a value set
// is decoded, defaulted and validated as one written in the file, and an
// error about it names its field without a line.
func ParseConfig(b []byte, sets ...Setting) (*Config, error) {
	c, err := decodeConfig(b, sets)
	if err != nil {
		return nil, err
	}
	if err := c.checkRequired(); err != nil {
		return nil, err
	}
	if err := c.checkWritten(); err != nil {
		return nil, err
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadConfig reads and parses a scenario file; relative data paths in it
// are resolved from the file's directory. The file must be a regular file:
// a FIFO, a device or a directory is refused without blocking (opening a
// FIFO would wait for a writer). It reads at most MaxConfigBytes + 1
// bytes, so that a file growing without end is refused too. The settings
// are applied as ParseConfig applies them.
func LoadConfig(path string, sets ...Setting) (*Config, error) {
	f, _, err := filekind.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	defer f.Close()
	b, err := readConfig(f)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %v", path, err)
	}
	c, err := ParseConfig(b, sets...)
	if err != nil {
		return nil, err
	}
	c.baseDir = filepath.Dir(path)
	return c, nil
}

// readConfig reads a scenario, refusing one longer than MaxConfigBytes
// after reading at most one byte more. A regular file is read into a buffer
// of its size; a stream of unknown length in chunks of 1 MiB, joined only
// if it ends within the limit, so that refusing an endless stream costs
// about the limit in memory, not a multiple of it.
func readConfig(r io.Reader) ([]byte, error) {
	lr := io.LimitReader(r, MaxConfigBytes+1)
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() <= MaxConfigBytes {
			// One buffer of the file's size plus the byte that tells EOF
			// (bytes.Buffer.ReadFrom would double it when fewer than 512
			// bytes are left free); it grows only if the file grows while
			// being read, up to the limit.
			buf := make([]byte, 0, st.Size()+1)
			for {
				if len(buf) == cap(buf) {
					buf = append(buf, 0)[:len(buf)]
				}
				n, err := lr.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, fmt.Errorf("cannot read: %v", err)
				}
			}
			if len(buf) > MaxConfigBytes {
				return nil, fmt.Errorf("larger than %d bytes (64 MiB)", MaxConfigBytes)
			}
			return buf, nil
		}
	}
	var chunks [][]byte
	total := 0
	for {
		chunk := make([]byte, 1<<20)
		n, err := io.ReadFull(lr, chunk)
		chunks, total = append(chunks, chunk[:n]), total+n
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read: %v", err)
		}
	}
	if total > MaxConfigBytes {
		return nil, fmt.Errorf("larger than %d bytes (64 MiB)", MaxConfigBytes)
	}
	return bytes.Join(chunks, nil), nil
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (c *Config) defaults() {
	a := &c.Audit
	if a.Design == DesignCanaries && a.Canaries != nil && a.Trials == 0 {
		a.Trials = a.Canaries.trials() // the canary design's trials are its runs (and references)
	}
	if a.Assignment == "" {
		a.Assignment = audit.AssignRandom.String()
	}
	if len(a.Features) == 0 {
		a.Features = []string{"theta"}
	}
	if len(a.Attacks) == 0 {
		a.Attacks = []string{"threshold"}
	}
	if a.AttackSelection == "" {
		a.AttackSelection = audit.SelectOnTraining.String()
	}
	if a.PointSelection == "" {
		a.PointSelection = audit.SelectOnTraining.String()
	}
	if c.Release.Mode == "" {
		c.Release.Mode = mechanisms.ReleaseFinal
	}
	if c.Neighbour != nil && c.Neighbour.Adjacency == "" {
		c.Neighbour.Adjacency = dataset.ReplaceOne
	}
}

// exactlyOne checks that exactly one pointer/slice field of a section is set.
func exactlyOne(section string, v any) (string, error) {
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	var set, names []string
	for i := 0; i < rt.NumField(); i++ {
		tag := strings.Split(rt.Field(i).Tag.Get("yaml"), ",")[0]
		names = append(names, tag)
		f := rv.Field(i)
		if (f.Kind() == reflect.Pointer && !f.IsNil()) || (f.Kind() == reflect.Slice && f.Len() > 0) {
			set = append(set, tag)
		}
	}
	if len(set) != 1 {
		return "", errAt(section, "must set exactly one of %s, got %d", strings.Join(names, ", "), len(set))
	}
	return set[0], nil
}

// Validate checks the parts of a config that do not need the built objects
// (those are checked by Build). Errors name the field by its YAML path and,
// for a value still as decoded from YAML, its line (see Error).
func (c *Config) Validate() error { return c.locate(c.validate()) }

func (c *Config) validate() error {
	for _, step := range []func() error{c.validateSections, c.validateData, c.validateCanaries, c.validateNeighbour, c.validateThreat, c.validateAudit, c.validateClaim} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// validateSections checks that model, data and sampler each choose one;
// a program sampler may do without a model and without data (it then owns
// its data).
func (c *Config) validateSections() error {
	prog := c.Sampler.Program != nil
	if !prog || !c.Model.empty() {
		if _, err := exactlyOne("model", &c.Model); err != nil {
			return err
		}
	}
	if !prog || !c.Data.empty() {
		if _, err := exactlyOne("data", &c.Data); err != nil {
			return err
		}
	} else if c.Neighbour != nil {
		return errAt("neighbour", "needs a data section (D) to build D′ from")
	}
	if _, err := exactlyOne("sampler", &c.Sampler); err != nil {
		return err
	}
	if prog && c.Sampler.Program.Datasets != nil && !c.Data.empty() {
		return errAt("sampler.program.datasets", "describes datasets the program gets from elsewhere; with a data section the audit gives it D and D′ itself: remove one of them")
	}
	if prog {
		return c.Sampler.Program.validate()
	}
	return nil
}

// empty reports whether no model is chosen.
func (m *ModelConfig) empty() bool { return reflect.ValueOf(*m).IsZero() }

// empty reports whether no data are given.
func (d *DataConfig) empty() bool { return reflect.ValueOf(*d).IsZero() }

// validateData bounds the size of the dataset to materialise, and refuses
// the fields of a synthetic generator that it would ignore.
func (c *Config) validateData() error {
	if c.Data.empty() {
		return nil
	}
	data, _ := exactlyOne("data", &c.Data)
	for kind, s := range map[string]*SyntheticData{"synthetic_logistic": c.Data.SyntheticLogistic,
		"synthetic_gauss": c.Data.SyntheticGauss, "synthetic_banana": c.Data.SyntheticBanana, "synthetic_mixture": c.Data.SyntheticMixture} {
		switch {
		case s == nil:
		case s.Beta != 0:
			return errAt("data."+kind+".beta", "not used by %s (only synthetic_linreg draws noisy labels); remove it", kind)
		case s.XScale != 0 && kind != "synthetic_logistic":
			return errAt("data."+kind+".x_scale", "not used by %s (only synthetic_linreg and synthetic_logistic scale their features); remove it", kind)
		}
	}
	n, dim := 0, 1
	switch {
	case c.Data.Counterexample != nil:
		n = c.Data.Counterexample.N
	case c.Data.SyntheticLinReg != nil:
		n, dim = c.Data.SyntheticLinReg.N, len(c.Data.SyntheticLinReg.ThetaStar)
	case c.Data.SyntheticLogistic != nil:
		n, dim = c.Data.SyntheticLogistic.N, len(c.Data.SyntheticLogistic.ThetaStar)
	case c.Data.SyntheticGauss != nil:
		n, dim = c.Data.SyntheticGauss.N, len(c.Data.SyntheticGauss.ThetaStar)
	case c.Data.SyntheticBanana != nil:
		n, dim = c.Data.SyntheticBanana.N, 2
	case c.Data.SyntheticMixture != nil:
		n = c.Data.SyntheticMixture.N
	case c.Data.Inert != nil:
		if n = c.Data.Inert.N; n < 1 {
			return errAt("data.inert.n", "must be in [1, %d], got %d", MaxRecords, n)
		}
	case c.Data.CSV != nil && c.Data.CSV.Path == "":
		return errAt("data.csv.path", "required")
	}
	if n > MaxRecords && c.Sampler.ExactCyclicSGLD == nil {
		return errAt("data."+data+".n", "must be ≤ %d records (larger counterexamples: sampler.exact_cyclic_sgld), got %d", MaxRecords, n)
	}
	if float64(n)*float64(dim) > MaxDataValues {
		return errAt("data."+data, "%d records × %d features exceed the limit of %d values", n, dim, MaxDataValues)
	}
	return nil
}

// validateNeighbour checks how D′ is built from D.
func (c *Config) validateNeighbour() error {
	if c.Data.empty() || c.canaryDesign() {
		return nil
	}
	data, _ := exactlyOne("data", &c.Data)
	nb := c.Neighbour
	switch {
	case data == "counterexample" && nb != nil:
		return errAt("neighbour", "the counterexample data defines D′ itself; remove the neighbour section")
	case data != "counterexample" && nb == nil:
		return errAt("neighbour", "required to build D′ from D (adjacency, index, record)")
	case nb == nil:
		return nil
	}
	switch nb.Adjacency {
	case dataset.ReplaceOne, dataset.RemoveOne, dataset.AddOne:
	default:
		return errAt("neighbour.adjacency", "must be one of replace-one, remove-one, add-one, got %s", clip.Quote(string(nb.Adjacency)))
	}
	if nb.DeepFool != nil {
		if s := nb.DeepFool.Sampler; s != nil {
			name, err := exactlyOne("neighbour.deepfool.sampler", s)
			if err != nil {
				return err
			}
			if s.sampler() == nil {
				return errAt("neighbour.deepfool.sampler", "must be a built-in step-by-step sampler, got %s", name)
			}
		} else if c.Sampler.sampler() == nil {
			return errAt("neighbour.deepfool.sampler", "required: the audited sampler cannot train the crafting models, give a built-in one (e.g. sgld)")
		}
		if nb.DeepFool.Models < 1 || nb.DeepFool.Models > 10000 {
			return errAt("neighbour.deepfool.models", "must be in [1, 10000], got %d", nb.DeepFool.Models)
		}
		if nb.Adjacency != dataset.ReplaceOne {
			return errAt("neighbour.adjacency", "a DeepFool canary replaces a record (replace-one), got %s", clip.Quote(string(nb.Adjacency)))
		}
	}
	return nil
}

// auditFields maps the engine's option names to the scenario's fields.
var auditFields = map[string]string{
	"Trials": "audit.trials", "Split": "audit.split", "Split.Train": "audit.split.train",
	"Split.Select": "audit.split.select", "Split.Eval": "audit.split.eval", "Delta": "audit.delta",
	"Confidence": "audit.confidence", "SelectionConfidence": "audit.selection_confidence", "Workers": "audit.workers", "Theorems": "claim.theorems",
	"Estimators": "audit.estimators",
}

// validateAudit checks the statistics by building the engine's options.
func (c *Config) validateAudit() error {
	a := c.Audit
	if a.Split == (audit.Split{}) && !c.canaryDesign() {
		return errAt("audit.split", "required, e.g. {train: 0.5, eval: 0.5} (train and eval > 0, summing to 1 with an optional select)")
	}
	if !(a.Confidence > 0 && a.Confidence < 1) {
		return errAt("audit.confidence", "must be in (0, 1), got %g", a.Confidence)
	}
	_, err := c.options()
	return err
}

// options returns the engine's options for the scenario's statistics
// (features, attacks and claims are added by Build). Errors name the
// scenario's fields.
func (c *Config) options() (audit.Options, error) {
	a := c.Audit
	o := audit.Options{Trials: a.Trials, Seed: c.Seed, Split: a.Split, Delta: a.Delta, Confidence: a.Confidence, SelectionConfidence: a.SelectionConfidence}
	if c.canaryDesign() {
		o.Canaries = a.Canaries.design()
	}
	var err error
	if o.Assignment, err = audit.ParseAssignment(a.Assignment); err != nil {
		return o, wrapAt(err, "audit.assignment")
	}
	if o.AttackSelection, err = audit.ParseSelection(a.AttackSelection); err != nil {
		return o, wrapAt(err, "audit.attack_selection")
	}
	if o.PointSelection, err = audit.ParseSelection(a.PointSelection); err != nil {
		return o, wrapAt(err, "audit.point_selection")
	}
	if len(a.Estimators) > 0 {
		if o.Estimators, err = audit.EstimatorsByName(a.Estimators); err != nil {
			return o, errAt("audit.estimators", "%s", err)
		}
	}
	err = o.Validate()
	if err == nil {
		err = c.execution().Validate()
	}
	if err != nil {
		var fe *audit.FieldError
		if errors.As(err, &fe) {
			if name, ok := auditFields[fe.Path.Go()]; ok {
				return o, errAt(name, "%s", strings.ReplaceAll(fe.Msg, "the number of trials", "audit.trials"))
			}
		}
		return o, err
	}
	return o, nil
}

// execution returns how the scenario's runs are made (audit.workers).
func (c *Config) execution() audit.Execution {
	return audit.Execution{Workers: c.Audit.Workers}
}

// validateClaim checks the claim section.
func (c *Config) validateClaim() error {
	cl := c.Claim
	if cl == nil {
		return nil
	}
	if (cl.Epsilon == nil) != (cl.Delta == nil) {
		return errAt("claim", "epsilon and delta go together")
	}
	if cl.Epsilon == nil && cl.GDP == nil && !cl.Theorems {
		return errAt("claim", "set epsilon and delta, gdp, or theorems: true")
	}
	if cl.Epsilon != nil {
		if !(*cl.Epsilon >= 0) || math.IsInf(*cl.Epsilon, 0) {
			return errAt("claim.epsilon", "must be finite and ≥ 0, got %g", *cl.Epsilon)
		}
		if !(*cl.Delta >= 0 && *cl.Delta < 1) {
			return errAt("claim.delta", "must be in [0, 1), got %g", *cl.Delta)
		}
	}
	if cl.GDP != nil && (!(*cl.GDP >= 0) || math.IsInf(*cl.GDP, 0)) {
		return errAt("claim.gdp", "must be finite and ≥ 0, got %g", *cl.GDP)
	}
	return nil
}

// Hash is the SHA-256 of the canonical JSON of everything that determines
// the trials' outputs and the analysis (the worker count excluded), so that
// shards and checkpoints of different scenarios are never mixed.
func (c *Config) Hash() string {
	b, err := json.Marshal(c)
	if err != nil {
		// Only an unvalidated config (say, with a NaN parameter) fails to
		// encode; it still gets a stable hash (YAML spells NaN), and Build
		// rejects it anyway.
		y, yerr := yaml.Marshal(c)
		if yerr != nil {
			y = []byte(yerr.Error())
		}
		b = append([]byte("unencodable\n"), y...)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
