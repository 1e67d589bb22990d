package samples

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Limits on precomputed samples: the bytes of a file (and of a .csv.gz
// once decompressed), the values of a file, and the bytes of one run (a
// line) of a CSV file.
const (
	maxSamplesFileBytes = 4 << 30
	maxSamplesValues    = 1 << 31
	maxSamplesLineBytes = 16 << 20
)

// File is one file of precomputed runs.
type File struct {
	Path   string
	SHA256 string
	Header []string // column names (CSV with a header), or nil
	Shape3 []int    // (runs, points, dim) of a 3-D .npy, or nil
	Trial  []int    // the trial column, or nil
	Rows   [][]float64
	// Chains are the CmdStan chain files of a directory (ReadStanDirs),
	// one per row; nil for a file of runs.
	Chains []Chain
}

// samplesDoc is the JSON written by "audit analyze --json".
type Doc struct {
	Versions audit.Versions `json:"versions"`
	Samples  struct {
		Files  []FileInfo `json:"files"`
		Order  string     `json:"order"`
		Points []string   `json:"points"`
		Dim    int        `json:"dim"`
		// Stan is the layout of CmdStan chains (two directories), or nil.
		Stan *StanLayout `json:"stan,omitempty"`
	} `json:"samples"`
	Scenario *scenario.Config `json:"scenario,omitempty"`
	Report   *audit.Report    `json:"report"`
}

// FileInfo identifies one file of an analysis in its JSON document.
type FileInfo struct {
	Side   string `json:"side"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Runs   int    `json:"runs"`
	// Chains are a directory's CmdStan chain files, one per run.
	Chains []Chain `json:"chains,omitempty"`
}

// samplesPosterior is the law the samples' utility figures compare them
// with: the exact posterior of the --scenario's model on its data, where
// it has one (scenario.SamplesPosterior); nil without --scenario.
func posterior(cfg *scenario.Config, dim int) (*audit.Posterior, error) {
	if cfg == nil {
		return nil, nil
	}
	post, err := scenario.SamplesPosterior(cfg, dim)
	if err != nil {
		return nil, cli.Usagef("--scenario: %v", err)
	}
	return post, nil
}

// ReadFiles reads the runs on D and on D′ from the files at paths.
func ReadFiles(ctx context.Context, paths [2]string) ([2]*File, error) {
	var files [2]*File
	for i := range files {
		var err error
		if files[i], err = ReadFile(ctx, paths[i]); err != nil {
			if ctx.Err() != nil {
				return files, cli.InterruptedError{Msg: "interrupted while loading the samples; nothing was written"}
			}
			return files, cli.UsageError{Msg: err.Error()}
		}
	}
	return files, nil
}

// buildSamples checks that both files have the same layout, resolves the
// release points and orders the runs by their trial column when there is
// one (then order describes it; otherwise it is empty).
func Build(files [2]*File, points string) (*audit.Samples, string, error) {
	a, b := files[0], files[1]
	if len(a.Rows) == 0 || len(b.Rows) == 0 {
		return nil, "", cli.Usagef("both files need at least one run (have %d and %d)", len(a.Rows), len(b.Rows))
	}
	if len(a.Rows[0]) != len(b.Rows[0]) {
		return nil, "", cli.Usagef("%s has %d values per run, %s has %d", a.Path, len(a.Rows[0]), b.Path, len(b.Rows[0]))
	}
	if strings.Join(a.Header, ",") != strings.Join(b.Header, ",") {
		return nil, "", cli.Usagef("%s and %s have different column names", a.Path, b.Path)
	}
	if (a.Trial == nil) != (b.Trial == nil) {
		return nil, "", cli.Usagef("a trial column must be in both files or in neither")
	}
	width := len(a.Rows[0])
	labels, dim, err := releaseLayout(points, a.Header, a.Shape3, width)
	if err != nil {
		return nil, "", err
	}
	s := &audit.Samples{Name: fmt.Sprintf("precomputed samples (%d runs on D from %s, %d on D′ from %s)", len(a.Rows), a.Path, len(b.Rows), b.Path), Dim: dim}
	var known bool
	s.Points, known = mechanisms.PointsFromLabels(labels, nil)
	s.IterationsUnknown = !known
	n := len(a.Rows) + len(b.Rows)
	if a.Trial == nil {
		s.Rows = append(append(s.Rows, a.Rows...), b.Rows...)
		for i := range s.Rows {
			s.Sides = append(s.Sides, dataset.Side(min(1, i/len(a.Rows))))
		}
		return s, "", checkSamples(s)
	}
	s.Rows, s.Sides = make([][]float64, n), make([]dataset.Side, n)
	for side, fl := range files {
		for i, tr := range fl.Trial {
			if tr < 0 || tr >= n {
				return nil, "", cli.Usagef("%s: trial %d is outside [0, %d) (the two files hold %d runs)", fl.Path, tr, n, n)
			}
			if s.Rows[tr] != nil {
				return nil, "", cli.Usagef("%s: trial %d appears twice", fl.Path, tr)
			}
			s.Rows[tr], s.Sides[tr] = fl.Rows[i], dataset.Side(side)
		}
	}
	return s, "rows ordered by their trial column, so the split is the one of the run that produced them", checkSamples(s)
}

func checkSamples(s *audit.Samples) error {
	if err := s.Check(); err != nil {
		return cli.UsageError{Msg: err.Error()}
	}
	return nil
}

// permuteSamples puts the runs in an order drawn from seed.
func permuteSamples(s *audit.Samples, seed uint64) {
	perm := rand.New(rand.NewPCG(seed, 0x6d63_6d63_6175_6469)).Perm(len(s.Rows))
	rows, sides := make([][]float64, len(perm)), make([]dataset.Side, len(perm))
	for i, j := range perm {
		rows[i], sides[i] = s.Rows[j], s.Sides[j]
	}
	s.Rows, s.Sides = rows, sides
}

// releaseLayout resolves the release labels and their dimension.
func releaseLayout(points string, header []string, shape3 []int, width int) ([]string, int, error) {
	var labels []string
	switch {
	case points != "":
		if k, err := strconv.Atoi(points); err == nil {
			if k < 1 || k > width || width%k != 0 {
				return nil, 0, cli.Usagef("--points: %d release points must divide the %d values per run", k, width)
			}
			for i := 1; i <= k; i++ {
				labels = append(labels, fmt.Sprintf("release %d", i))
			}
		} else {
			seen := map[string]bool{}
			for i, l := range strings.Split(points, ",") {
				l = strings.TrimSpace(l)
				if l == "" {
					return nil, 0, cli.Usagef("--points: label %d is empty (give a count, or comma-separated non-empty labels)", i+1)
				}
				if seen[l] {
					return nil, 0, cli.Usagef("--points: label %s appears twice (every release needs its own label)", clip.Quote(l))
				}
				seen[l] = true
				labels = append(labels, l)
			}
			if width%len(labels) != 0 {
				return nil, 0, cli.Usagef("--points: %d labels do not divide the %d values per run", len(labels), width)
			}
		}
	case header != nil:
		dim := 0
		for i := 0; i < len(header); {
			label := columnLabel(header[i])
			j := i
			for j < len(header) && columnLabel(header[j]) == label {
				j++
			}
			if dim == 0 {
				dim = j - i
			} else if j-i != dim {
				return nil, 0, cli.Usagef("column %s: release %s has %d columns, the first release %d (every release needs the same dimension)", clip.Quote(header[i]), clip.Quote(label), j-i, dim)
			}
			labels = append(labels, label)
			i = j
		}
	case shape3 != nil:
		for i := 1; i <= shape3[1]; i++ {
			labels = append(labels, fmt.Sprintf("release %d", i))
		}
	default:
		labels = []string{"release"}
	}
	return labels, width / len(labels), nil
}

// columnLabel is a column name without its coordinate suffix "[j]".
func columnLabel(name string) string {
	if i := strings.LastIndex(name, "["); i > 0 && strings.HasSuffix(name, "]") {
		if _, err := strconv.Atoi(name[i+1 : len(name)-1]); err == nil {
			return strings.TrimSpace(name[:i])
		}
	}
	return strings.TrimSpace(name)
}

// ReadFile reads a .npy, .csv or .csv.gz file of runs; ctx
// interrupts it.
func ReadFile(ctx context.Context, path string) (*File, error) {
	// Opened without blocking: a FIFO is refused, not waited on.
	f, size, err := filekind.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > maxSamplesFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d", path, size, int64(maxSamplesFileBytes))
	}
	h := sha256.New()
	r := bufio.NewReaderSize(io.TeeReader(ctxReader{ctx, f}, h), 64<<10)
	out := &File{Path: path}
	if strings.HasSuffix(strings.ToLower(path), ".npy") {
		err = readNPY(ctx, r, size, out)
	} else {
		err = readSamplesCSV(ctx, r, f, out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	out.SHA256 = hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// ctxReader fails with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
