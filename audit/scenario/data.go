package scenario

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/canary"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"golang.org/x/sync/errgroup"
)

// MaxCSVFileBytes bounds the size of a data.csv file as stored (it may be
// gzip-compressed; the decompressed text is bounded by
// dataset.MaxCSVBytes).
const MaxCSVFileBytes = 256 << 20

// loadCSV reads data.csv: the file (its digest checked against, or pinned
// into, the config; from the config's embedded files when a trials file
// brought them), the options of its preset, and the held-out test set.
func loadCSV(c *Config, m mechanisms.Model) (d, test *dataset.Dataset, err error) {
	dc := c.Data.CSV
	path := dc.Path
	if !filepath.IsAbs(path) && c.baseDir != "" {
		path = filepath.Join(c.baseDir, path)
	}
	raw, err := c.pinnedFile(path, &dc.SHA256, "data.csv.path", MaxCSVFileBytes)
	if err != nil {
		return nil, nil, err
	}
	var opts dataset.CSVOptions
	switch dc.Preset {
	case "":
	case "digits":
		opts = dataset.DigitsOptions()
	case "breast_cancer":
		opts = dataset.BreastCancerOptions()
	default:
		return nil, nil, errAt("data.csv.preset", "must be digits or breast_cancer, got %s", clip.Quote(dc.Preset))
	}
	if dc.Options != nil {
		opts = *dc.Options
	}
	if opts.Name == "" {
		opts.Name = dataset.NameFromPath(dc.Path)
	}
	all, err := dataset.ReadCSVFrom(bytes.NewReader(raw), opts)
	if err != nil {
		return nil, nil, wrapAt(err, "data.csv")
	}
	if dc.TestFraction == 0 {
		return all, nil, nil
	}
	if !(dc.TestFraction > 0 && dc.TestFraction < 1) || math.IsNaN(dc.TestFraction) {
		return nil, nil, errAt("data.csv.test_fraction", "must be in [0, 1), got %g", dc.TestFraction)
	}
	if cl, ok := m.(mechanisms.Classifier); ok {
		d, test, err = dataset.StratifiedSplit(all, cl.NumClasses(), dc.TestFraction, dc.Seed)
	} else {
		d, test, err = dataset.Split(all, dc.TestFraction, dc.Seed)
	}
	if err != nil {
		return nil, nil, wrapAt(err, "data.csv")
	}
	return d, test, nil
}

// readDataFile reads a regular file of at most limit bytes, opening it
// once and without blocking (a FIFO, a device or a directory is refused
// before any read, a larger file by its size, a file growing past the
// limit after reading one byte more).
func readDataFile(path string, limit int64) ([]byte, error) {
	f, err := openDataFile(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s grew beyond the limit of %d bytes while being read", path, limit)
	}
	return b, nil
}

// craftCanary follows Heller & Fetaya §V: train an ensemble on D with the
// scenario's sampler (final states), find the records every model
// classifies correctly and alike, and craft the nearest x* that every
// model assigns to another class; D′ holds (x*, y⁰) instead of the record.
func craftCanary(c *Config, p *Plan, d *dataset.Dataset) (dataset.Pair, error) {
	cl, ok := p.Model.(mechanisms.Classifier)
	if !ok {
		name := "none"
		if p.Model != nil {
			name = p.Model.Name()
		}
		return dataset.Pair{}, errAt("neighbour.deepfool", "needs a classification model (softmax or mlp), got %s", name)
	}
	df := c.Neighbour.DeepFool
	thetas, err := trainEnsemble(c, p, d, df, "neighbour.deepfool")
	if err != nil {
		return dataset.Pair{}, err
	}
	agreed, err := canary.AgreedRecords(cl, thetas, d, true)
	if err != nil {
		return dataset.Pair{}, errAt("neighbour.deepfool", "%w", err)
	}
	if len(agreed) == 0 {
		return dataset.Pair{}, errAt("neighbour.deepfool", "the %d models agree on no record (train them longer)", df.Models)
	}
	var lastErr error
	for _, idx := range agreed {
		can, err := canary.Craft(cl, thetas, d, idx, df.Canary)
		if err != nil {
			lastErr = err
			continue
		}
		p.Canary = &can
		return can.Pair(d)
	}
	return dataset.Pair{}, errAt("neighbour.deepfool.canary", "no agreed record could be crafted: %v", lastErr)
}

// canaryFeatures are the four features of Heller & Fetaya §V:
// p(y*|x*,θ), p(y⁰|x*,θ), p(y*|x⁰,θ), p(y⁰|x⁰,θ) (or their logarithms).
type canaryFeatures struct {
	model mechanisms.Classifier
	can   canary.Canary
	log   bool
}

// Names implements attacks.FeatureMap.
func (f canaryFeatures) Names() []string {
	p := "p"
	if f.log {
		p = "ln p"
	}
	return []string{p + "(y*|x*)", p + "(y0|x*)", p + "(y*|x0)", p + "(y0|x0)"}
}

// Map implements attacks.FeatureMap.
func (f canaryFeatures) Map(theta, out []float64) {
	if f.log {
		f.can.LogFeatures(f.model, theta, out)
	} else {
		f.can.Features(f.model, theta, out)
	}
}

// trainEnsemble trains the crafting models of df on d (path names the
// configuration in errors).
func trainEnsemble(c *Config, p *Plan, d *dataset.Dataset, df *DeepFoolConfig, path string) ([][]float64, error) {
	trainer := p.Sampler
	if df.Sampler != nil {
		trainer = df.Sampler.sampler()
	}
	if trainer == nil {
		return nil, errAt(path+".sampler", "required to train the models (a built-in sampler such as sgld)")
	}
	ch := &mechanisms.Chain{Model: p.Model, Sampler: trainer, Init: c.Init, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}
	if err := ch.Check(d); err != nil {
		return nil, err
	}
	// The models are trained concurrently (each from a stream of its own,
	// which no audited trial uses: the ensemble is the same for any worker
	// count).
	thetas := make([][]float64, df.Models)
	var g errgroup.Group
	g.SetLimit(audit.Workers(c.Audit.Workers))
	for i := range thetas {
		g.Go(func() error {
			tr := mechanisms.Trial{Index: i, RNG: mechanisms.TrialRNG(c.Seed, dataset.SideD, i, mechanisms.StreamCanary)}
			if _, err := ch.Run(context.Background(), tr, d, func(_ int, th []float64) error {
				thetas[i] = append([]float64(nil), th...)
				return nil
			}); err != nil {
				return errAt(path, "training model %d: %w", i, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return thetas, nil
}

// pinnedFile reads a data file the scenario names at field (from the
// config's embedded files when a trials file brought them), of at most
// limit bytes, checks its SHA-256 against *pin (field's sibling sha256
// key), or pins it there when empty, and keeps its bytes for trials files.
func (c *Config) pinnedFile(path string, pin *string, field string, limit int64) ([]byte, error) {
	raw, ok := c.files[strings.ToLower(*pin)]
	if !ok {
		var err error
		if raw, err = readDataFile(path, limit); err != nil {
			return nil, wrapAt(err, field)
		}
	}
	sum := sha256.Sum256(raw)
	digest := hex.EncodeToString(sum[:])
	switch {
	case *pin == "":
		*pin = digest
	case !strings.EqualFold(*pin, digest):
		shaField := strings.TrimSuffix(field, ".path") + ".sha256"
		if !strings.HasSuffix(field, ".path") {
			shaField = field + "_sha256"
		}
		return nil, errAt(shaField, "%s has digest %s, the scenario pins %s", path, digest, *pin)
	}
	if c.files == nil {
		c.files = map[string][]byte{}
	}
	c.files[digest] = raw
	return raw, nil
}
