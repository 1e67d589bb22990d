package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
)

// ProgramSampler is a sampler that is a program in any language speaking
// the line protocol mcmcaudit/1 (docs/protocol.md). When the scenario has
// data and neighbour sections, the program finds D and D′ in the CSV files
// named by MCMCAUDIT_D and MCMCAUDIT_DPRIME (features, then the label; a
// header row x1,…,xd,y), the held-out test set in MCMCAUDIT_TEST (with
// data.csv.test_fraction > 0) and a DeepFool canary in MCMCAUDIT_CANARY
// (JSON: index, x0, y0, x_star, y_star); without them it owns its data.
type ProgramSampler struct {
	// Command is the program and its arguments; a relative path is
	// relative to Dir.
	Command []string `yaml:"command" json:"command"`
	// Dir is the program's working directory, relative to the scenario
	// file's directory (default: that directory).
	Dir string `yaml:"dir,omitempty" json:"dir,omitempty"`
	// Env adds environment variables.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Timeout bounds each trial (a Go duration such as "60s"; default 60s).
	Timeout string `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Retries is the number of further attempts after a crash or a hang,
	// each in another process (nil: program.DefaultRetries; 0: none, a
	// single attempt).
	Retries *int `yaml:"retries,omitempty" json:"retries,omitempty"`
	// DeterminismChecks is the number of trials also run in a fresh
	// process, whose releases must be identical (default 4; 0 disables).
	DeterminismChecks *int `yaml:"determinism_checks,omitempty" json:"determinism_checks,omitempty"`
	// AllowRepeatedReleases accepts trials on one dataset whose releases
	// repeat another trial's exactly more often than independent runs
	// would at the values' resolution (a program with a discrete output);
	// by default they are refused, as the sign of a program that ignores
	// its seed (audit.RepeatsRefused); allowed, the report counts them
	// (audit.RepeatsNoted).
	AllowRepeatedReleases bool `yaml:"allow_repeated_releases,omitempty" json:"allow_repeated_releases,omitempty"`
	// TestSize is the size of a test set the program holds itself (the
	// scenario has none): with audit.metrics [accuracy], its answers'
	// info "correct" counts, out of TestSize, are the test accuracy.
	TestSize int `yaml:"test_size,omitempty" json:"test_size,omitempty"`
	// Datasets describes, for the reports, the datasets the program gets
	// from elsewhere than the scenario (the Python package's d= and
	// d_prime=); only without a data section.
	Datasets *ProgramDatasets `yaml:"datasets,omitempty" json:"datasets,omitempty"`
}

// ProgramDatasets describes D and D′ given to a program by its caller,
// for the reports (audit.DescribedPair); the audit neither reads nor
// checks them.
type ProgramDatasets struct {
	// D and DPrime name the datasets and count their records.
	D      ProgramDataset `yaml:"d" json:"d"`
	DPrime ProgramDataset `yaml:"d_prime" json:"d_prime"`
	// Adjacency is how they differ, as the caller states it (replace-one,
	// remove-one, add-one), or "" when not stated.
	Adjacency string `yaml:"adjacency,omitempty" json:"adjacency,omitempty"`
	// Note says more about how they differ ("record 2 differs").
	Note string `yaml:"note,omitempty" json:"note,omitempty"`
}

// ProgramDataset names a dataset and counts its records.
type ProgramDataset struct {
	Name    string `yaml:"name" json:"name"`
	Records int    `yaml:"records" json:"records"`
}

// maxDescription bounds the names and the note of sampler.program.datasets.
const maxDescription = 200

// described validates s and returns the datasets it describes, or nil.
func (s *ProgramDatasets) described() (*audit.DescribedPair, error) {
	if s == nil {
		return nil, nil
	}
	for _, f := range []struct {
		path string
		d    ProgramDataset
	}{{"sampler.program.datasets.d", s.D}, {"sampler.program.datasets.d_prime", s.DPrime}} {
		if f.d.Name == "" || len(f.d.Name) > maxDescription || !printable(f.d.Name) {
			return nil, errAt(f.path+".name", "must be 1 to %d printable characters, got %s", maxDescription, clip.Quote(f.d.Name))
		}
		if f.d.Records < 0 {
			return nil, errAt(f.path+".records", "must be >= 0, got %d", f.d.Records)
		}
	}
	switch dataset.Adjacency(s.Adjacency) {
	case "", dataset.ReplaceOne, dataset.RemoveOne, dataset.AddOne:
	default:
		return nil, errAt("sampler.program.datasets.adjacency", "must be replace-one, remove-one or add-one (or omitted: not stated), got %s", clip.Quote(s.Adjacency))
	}
	if len(s.Note) > maxDescription || !printable(s.Note) {
		return nil, errAt("sampler.program.datasets.note", "must be at most %d printable characters, got %s", maxDescription, clip.Quote(s.Note))
	}
	return &audit.DescribedPair{D: audit.DatasetInfo{Name: s.D.Name, Records: s.D.Records},
		DPrime:    audit.DatasetInfo{Name: s.DPrime.Name, Records: s.DPrime.Records},
		Adjacency: s.Adjacency, Note: s.Note}, nil
}

// printable reports whether every rune of s is printable.
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// MaxProgramTestSize bounds sampler.program.test_size.
const MaxProgramTestSize = 1_000_000_000

// MaxProgramTimeout bounds sampler.program.timeout.
const MaxProgramTimeout = 24 * time.Hour

// retries is program.Config.Retries for the scenario's retries, whose 0
// is a single attempt: there, 0 is the default and −1 none.
func (s *ProgramSampler) retries() int {
	switch {
	case s.Retries == nil:
		return 0
	case *s.Retries == 0:
		return -1
	}
	return *s.Retries
}

func (s *ProgramSampler) validate() error {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return errAt("sampler.program.command", "required, e.g. [python3, my_sampler.py]")
	}
	if _, err := s.timeout(); err != nil {
		return err
	}
	if r := s.Retries; r != nil && (*r < 0 || *r > program.MaxRetries) {
		return errAt("sampler.program.retries", "must be in [0, %d] (0: a single attempt; omit it for the default %d), got %d", program.MaxRetries, program.DefaultRetries, *r)
	}
	if d := s.DeterminismChecks; d != nil && (*d < 0 || *d > 1000) {
		return errAt("sampler.program.determinism_checks", "must be in [0, 1000], got %d", *d)
	}
	if s.TestSize < 0 || s.TestSize > MaxProgramTestSize {
		return errAt("sampler.program.test_size", "must be in [0, %d] (0: the program holds no test set), got %d", MaxProgramTestSize, s.TestSize)
	}
	if _, err := s.Datasets.described(); err != nil {
		return err
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.HasPrefix(k, "MCMCAUDIT_") {
			return errAt("sampler.program.env", "%s is not a variable the scenario may set (no '=', not MCMCAUDIT_*)", clip.Quote(k))
		}
	}
	return nil
}

func (s *ProgramSampler) timeout() (time.Duration, error) {
	if s.Timeout == "" {
		return program.DefaultTimeout, nil
	}
	d, err := time.ParseDuration(s.Timeout)
	if err != nil || d <= 0 || d > MaxProgramTimeout {
		return 0, errAt("sampler.program.timeout", "must be a duration in (0, 24h] such as \"60s\", got %s", clip.Quote(s.Timeout))
	}
	return d, nil
}

func (s *ProgramSampler) checks() int {
	if s.DeterminismChecks == nil {
		return program.DefaultDeterminismChecks
	}
	return *s.DeterminismChecks
}

// BuildOptions tune what Build does beyond the scenario.
type BuildOptions struct {
	// Context bounds starting a program sampler.
	Context context.Context
	// Stderr receives a program sampler's stderr, line by line and
	// prefixed (nil: only its last lines are kept, for error messages).
	Stderr io.Writer
}

// buildProgram starts the program (or, for a plan rebuilt from a trials
// file, only restores its handshake) and hands it the data.
func buildProgram(c *Config, p *Plan, o BuildOptions) (*program.Mechanism, error) {
	s := c.Sampler.Program
	timeout, _ := s.timeout()
	dir := c.baseDir
	if s.Dir != "" {
		dir = filepath.Join(c.baseDir, s.Dir)
		if filepath.IsAbs(s.Dir) {
			dir = s.Dir
		}
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, wrapAt(err, "sampler.program.dir")
		}
		dir = abs
	}
	var env []string
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	mc := program.MechanismConfig{
		Config: program.Config{Command: s.Command, Dir: dir, Timeout: timeout, Retries: s.retries(),
			Stderr: o.Stderr, MaxProcs: audit.Workers(c.Audit.Workers)},
		CheckTrials: program.CheckTrialsOf(c.Audit.Trials, s.checks()),
	}
	if c.canaryDesign() {
		mc.Canaries = c.Audit.Canaries.Count
	}
	if s.TestSize > 0 && !hasMetric(c, "accuracy") {
		return nil, errAt("sampler.program.test_size", "needs audit.metrics: [accuracy] (the size serves only to turn the program's correct counts into a test accuracy), got %d", s.TestSize)
	}
	if hasMetric(c, "accuracy") {
		switch {
		case p.TestSet != nil && s.TestSize > 0:
			return nil, errAt("sampler.program.test_size", "must be omitted when the scenario splits off a test set (data.csv.test_fraction), got %d", s.TestSize)
		case p.TestSet != nil:
			mc.TestSize = p.TestSet.Len()
		default:
			mc.TestSize = s.TestSize
		}
	}
	files, err := p.writeDataFiles()
	if err != nil {
		return nil, err
	}
	mc.Env = append(env, files...)
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	m, err := program.NewMechanism(ctx, mc)
	if err != nil {
		return nil, wrapAt(err, "sampler.program")
	}
	return m, nil
}

func hasMetric(c *Config, name string) bool {
	for _, m := range c.Audit.Metrics {
		if m == name {
			return true
		}
	}
	return false
}

// writeDataFiles writes D, D′, the test set and the canary for a program
// into a temporary directory (removed by Close) and returns the
// environment entries that name them.
func (p *Plan) writeDataFiles() ([]string, error) {
	if p.Pair.D == nil && p.canaries == nil {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "mcmcaudit-data-*")
	if err != nil {
		return nil, errAt("sampler.program", "cannot create a directory for the data files: %v", err)
	}
	p.tempDir = dir
	var env []string
	for _, f := range []struct {
		key, name string
		d         *dataset.Dataset
	}{{"MCMCAUDIT_D", "D.csv", p.Pair.D}, {"MCMCAUDIT_DPRIME", "DPRIME.csv", p.Pair.DPrime}, {"MCMCAUDIT_TEST", "TEST.csv", p.TestSet},
		{"MCMCAUDIT_CANARIES", "CANARIES.csv", canarySet(p.canaries)}} {
		if f.d == nil {
			continue
		}
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, datasetCSV(f.d), 0o644); err != nil {
			return nil, errAt("sampler.program", "cannot write %s: %v", path, err)
		}
		env = append(env, f.key+"="+path)
	}
	if p.Canary != nil {
		b, _ := json.Marshal(struct {
			Index int       `json:"index"`
			X0    []float64 `json:"x0"`
			Y0    int       `json:"y0"`
			XStar []float64 `json:"x_star"`
			YStar int       `json:"y_star"`
		}{p.Canary.Index, p.Canary.X0, p.Canary.Y0, p.Canary.XStar, p.Canary.YStar})
		env = append(env, "MCMCAUDIT_CANARY="+string(b))
	}
	return env, nil
}

// datasetCSV formats a dataset as the CSV loader reads it: a header row,
// then the features and the label of every record, exactly (shortest
// representation that parses back to the same float64).
// canarySet holds the canary records as a dataset (nil for none).
func canarySet(cs []dataset.Record) *dataset.Dataset {
	if cs == nil {
		return nil
	}
	return &dataset.Dataset{Name: "canaries", Records: cs}
}

func datasetCSV(d *dataset.Dataset) []byte {
	var b strings.Builder
	dim := 0
	if len(d.Records) > 0 {
		dim = len(d.Records[0].X)
	}
	for j := 1; j <= dim; j++ {
		fmt.Fprintf(&b, "x%d,", j)
	}
	b.WriteString("y\n")
	for _, r := range d.Records {
		for _, x := range r.X {
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(r.Y, 'g', -1, 64))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// Close stops a program sampler's processes and removes the data files
// written for it; other plans have nothing to close.
func (p *Plan) Close() error {
	var err error
	if c, ok := p.Mechanism.(io.Closer); ok {
		err = c.Close()
	}
	if p.tempDir != "" {
		os.RemoveAll(p.tempDir)
		p.tempDir = ""
	}
	return err
}
