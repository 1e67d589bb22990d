package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// checkLimits bounds what Build is about to materialise or compute, using
// only the config and the model, before any dataset is loaded or any
// model trained: the size of the data of every source (a CSV file is
// scanned without keeping its values, and its width checked against the
// model at the first row), the attacks' dimension limits for the features
// the config asks for, and the work of training a DeepFool ensemble. The
// audit's own runs are bounded by the engine (audit.Execution.MaxWork)
// before they start. Errors name the field and the limit.
func checkLimits(c *Config, m mechanisms.Model) error {
	if m == nil {
		// A program sampler without a model: the records' width is only
		// known once they are read, and the releases' dimension once the
		// program has answered its handshake (the engine then bounds the
		// attacks and the work before any run).
		return checkModelFreeData(c)
	}
	n, err := dataRecords(c, m)
	if err != nil {
		return err
	}
	if err := checkAttackSizes(c, m); err != nil {
		return err
	}
	return checkCanaryWork(c, m, n)
}

// checkModelFreeData bounds the data of a scenario without a model.
func checkModelFreeData(c *Config) error {
	if c.Data.CSV != nil {
		// No width to check the file against (DataDim −1: any width).
		_, err := scanCSV(c, recordsModel{dim: -1})
		return err
	}
	if recs := c.Data.Records; len(recs) > 0 {
		if len(recs) > MaxRecords {
			return errAt("data.records", "must be ≤ %d records, got %d", MaxRecords, len(recs))
		}
		if v := float64(len(recs)) * float64(len(recs[0].X)); v > MaxDataValues {
			return errAt("data.records", "%d records × %d features exceed the limit of %d values", len(recs), len(recs[0].X), MaxDataValues)
		}
	}
	return nil
}

// dataRecords checks the size of D for the sources the config validation
// does not bound (CSV files and inline records) and returns its number of
// records (0 when the source is analytical or not known here).
func dataRecords(c *Config, m mechanisms.Model) (int, error) {
	dc := c.Data
	switch {
	case dc.CSV != nil:
		return scanCSV(c, m)
	case len(dc.Records) > 0:
		n := len(dc.Records)
		if n > MaxRecords {
			return 0, errAt("data.records", "must be ≤ %d records, got %d", MaxRecords, n)
		}
		if v := float64(n) * float64(m.DataDim()); v > MaxDataValues {
			return 0, errAt("data.records", "%d records × %d features exceed the limit of %d values", n, m.DataDim(), MaxDataValues)
		}
		return n, nil
	case dc.SyntheticLinReg != nil:
		return dc.SyntheticLinReg.N, nil
	case dc.SyntheticLogistic != nil:
		return dc.SyntheticLogistic.N, nil
	case dc.SyntheticGauss != nil:
		return dc.SyntheticGauss.N, nil
	case dc.SyntheticBanana != nil:
		return dc.SyntheticBanana.N, nil
	case dc.SyntheticMixture != nil:
		return dc.SyntheticMixture.N, nil
	case dc.Counterexample != nil:
		return dc.Counterexample.N, nil
	}
	return 0, nil
}

// scanCSV streams data.csv once, keeping no value: a file that is not a
// regular file, is larger than MaxCSVFileBytes, has a first row whose
// width is not the model's features plus a label, or more than MaxRecords
// rows or MaxDataValues values, is refused after reading at most one line
// past the limit. It returns the number of data rows.
func scanCSV(c *Config, m mechanisms.Model) (int, error) {
	dc := c.Data.CSV
	var in io.Reader
	if raw, ok := c.files[strings.ToLower(dc.SHA256)]; ok && dc.SHA256 != "" {
		in = bytes.NewReader(raw)
	} else {
		path := dc.Path
		if !filepath.IsAbs(path) && c.baseDir != "" {
			path = filepath.Join(c.baseDir, path)
		}
		f, err := openDataFile(path, MaxCSVFileBytes)
		if err != nil {
			return 0, wrapAt(err, "data.csv.path")
		}
		defer f.Close()
		in = f
	}
	var opts dataset.CSVOptions
	switch dc.Preset {
	case "":
	case "digits":
		opts = dataset.DigitsOptions()
	case "breast_cancer":
		opts = dataset.BreastCancerOptions()
	default:
		return 0, errAt("data.csv.preset", "must be digits or breast_cancer, got %s", clip.Quote(dc.Preset))
	}
	if dc.Options != nil {
		opts = *dc.Options
	}
	if opts.Name == "" {
		opts.Name = dataset.NameFromPath(dc.Path)
	}
	if opts.MaxRecords == 0 || opts.MaxRecords > MaxRecords {
		opts.MaxRecords = MaxRecords
	}
	want := m.DataDim() + 1
	shape, err := dataset.ScanCSVFrom(in, opts, dataset.CSVLimits{Columns: want, MaxValues: MaxDataValues})
	var we *dataset.CSVWidthError
	switch {
	case errors.As(err, &we):
		return 0, errAt("data.csv", "line %d has %d columns; the model (%s) needs %d: %d features and a label", we.Line, we.Have, m.Name(), want, m.DataDim())
	case err != nil:
		return 0, wrapAt(err, "data.csv")
	}
	return shape.Rows, nil
}

// openDataFile opens a regular file of at most limit bytes without
// blocking: a FIFO, a device or a directory is refused before any read.
func openDataFile(path string, limit int64) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", path, unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, filekind.Of(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s has %d bytes, more than the limit of %d", path, st.Size(), limit)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", path, unwrapPathError(err))
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// checkAttackSizes refuses, before anything is built, an attack whose
// dimension limit the features exceed (say qda on a 10⁵-dimensional θ).
func checkAttackSizes(c *Config, m mechanisms.Model) error {
	if c.Sampler.Program != nil {
		// A program's releases need not have the model's dimension (the
		// model then only describes the canary-crafting models): the
		// engine bounds the attacks once the handshake has declared the
		// release dimension.
		return nil
	}
	f := featureCount(c, m)
	nTr, _, _ := c.Audit.Split.Sizes(c.Audit.Trials)
	for _, name := range c.Audit.Attacks {
		a, err := attacks.ByName(name)
		if err != nil {
			continue // Build names the unknown attack
		}
		if err := attacks.CheckSize(a, nTr, f); err != nil {
			return errAt("audit.attacks", "%v with audit.features %v on a model of dimension %d", err, c.Audit.Features, m.Dim())
		}
	}
	return nil
}

// checkCanaryWork bounds the DeepFool ensemble: neighbour.deepfool.models
// runs of the scenario's sampler on n records, under the engine's default
// work limit.
func checkCanaryWork(c *Config, m mechanisms.Model, n int) error {
	nb := c.Neighbour
	if nb == nil || nb.DeepFool == nil || n < 1 {
		return nil
	}
	s := c.Sampler.sampler()
	if s == nil {
		return nil
	}
	ch := &mechanisms.Chain{Model: m, Sampler: s, Init: c.Init, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}
	per := ch.RunCost(&dataset.Dataset{Virtual: n})
	if w := float64(nb.DeepFool.Models) * per; w > audit.DefaultMaxWork {
		return errAt("neighbour.deepfool.models", "%d training runs × %.3g work units each = %.3g exceed the work limit of %.3g (a unit takes a few nanoseconds): train fewer or shorter models", nb.DeepFool.Models, per, w, audit.DefaultMaxWork)
	}
	return nil
}
