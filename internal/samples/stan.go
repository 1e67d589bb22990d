package samples

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Limits on a directory of CmdStan chains, besides those of one file
// (maxSamplesFileBytes once decompressed, maxSamplesLineBytes a line):
// the chain files of one directory, and the bytes of all the chain files
// of both directories as they lie on disk.
const (
	maxStanChains     = 1 << 20
	maxStanTotalBytes = 64 << 30
)

// stanTextLimits bound one chain file once decompressed. Its lines are
// not kept (only the chosen draws are), so only its bytes bound them.
var stanTextLimits = dataset.TextLimits{Bytes: maxSamplesFileBytes, Line: maxSamplesLineBytes,
	LineHint: " (the limit on one line of a CmdStan file)"}

// StanSpec says which values of CmdStan chain files form a run's
// releases: one release point per chosen draw, its vector the chosen
// columns.
type StanSpec struct {
	// Draws are draw indices: k ≥ 1 the k-th draw after warmup, −k the
	// k-th from the last. Empty means {−1}, the last draw.
	Draws []int
	// Params names the parameters whose columns form the release vector,
	// in this order, each with its columns in the file's order (theta
	// takes theta.1, theta.2, …; CmdStan writes name.i.j column-major).
	// Empty means every column but lp__ and the sampler's (names ending
	// in "__"), in the file's order.
	Params []string
	// SamplerColumns keeps lp__ and the sampler's columns when Params is
	// empty.
	SamplerColumns bool
}

// StanLayout is what was read from the chain files: the draws that are
// the release points (1-based, after warmup, increasing), the number of
// draws of every chain, and the columns of the release vector.
type StanLayout struct {
	Draws   []int    `json:"draws"`
	Of      int      `json:"draws_per_chain"`
	Columns []string `json:"columns"`
}

// Chain is one CmdStan chain file of a directory: one run.
type Chain struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ParseDraws parses --draws: comma-separated draw indices, k ≥ 1 the k-th
// draw, −k the k-th from the last.
func ParseDraws(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k == 0 || k > math.MaxInt32 || k < -math.MaxInt32 {
			return nil, cli.Usagef("--draws: must be comma-separated draw indices (1 the first draw after warmup, -1 the last), none 0, got %s", clip.Quote(s))
		}
		out = append(out, k)
	}
	return out, nil
}

// IsStanHeader reports whether CSV column names are CmdStan's: lp__ or a
// sampler column (a name ending in "__").
func IsStanHeader(names []string) bool {
	for _, n := range names {
		if strings.HasSuffix(strings.TrimSpace(n), "__") {
			return true
		}
	}
	return false
}

// errStanFile refuses a CmdStan file given as a file of independent runs.
var errStanFile = errors.New("CmdStan output: its rows are the draws of ONE chain, not independent runs; give two directories instead, " +
	"one CmdStan CSV file per chain (each chain one run, seeded on its own): audit analyze DIR_D DIR_DPRIME")

// stanReader reads the chains of two directories under a spec; the first
// chain read sets the header, the selection and the number of draws that
// every other chain must have.
type stanReader struct {
	ctx    context.Context
	spec   StanSpec
	first  string // the first chain's path
	header []string
	sel    []int // indices of the chosen columns
	draws  int   // draws per chain
	tail   int   // draws kept from the end: max |k| over k < 0
	total  int64 // bytes on disk read so far
	layout *StanLayout
}

// ReadStanDirs reads the CmdStan chains of two directories, the runs on
// D and on D′: every file named *.csv or *.csv.gz (not hidden), in name
// order, is one chain and gives one run, the spec's draws and columns.
// A side's File has the directory as its Path, one row per chain, its
// Chains, and as SHA256 the hash of its chains' "SHA256  NAME" lines.
func ReadStanDirs(ctx context.Context, dirs [2]string, spec StanSpec) ([2]*File, *StanLayout, error) {
	if len(spec.Draws) == 0 {
		spec.Draws = []int{-1}
	}
	seen := map[string]bool{}
	for _, p := range spec.Params {
		if p == "" || seen[p] {
			return [2]*File{}, nil, cli.Usagef("--param: names must be non-empty and given once, got %s", clip.Quote(strings.Join(spec.Params, ",")))
		}
		seen[p] = true
	}
	r := &stanReader{ctx: ctx, spec: spec}
	for _, k := range spec.Draws {
		r.tail = max(r.tail, -k)
	}
	var files [2]*File
	for i, dir := range dirs {
		f, err := r.readDir(dir)
		if err != nil {
			if ctx.Err() != nil {
				return files, nil, cli.InterruptedError{Msg: "interrupted while loading the samples; nothing was written"}
			}
			var ue cli.UsageError
			if errors.As(err, &ue) {
				return files, nil, err
			}
			return files, nil, cli.UsageError{Msg: err.Error()}
		}
		files[i] = f
	}
	return files, r.layout, nil
}

// chainFiles lists the chain files of dir, in name order.
func chainFiles(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", dir, err)
	}
	defer d.Close()
	var names []string
	for {
		ents, err := d.ReadDir(1024)
		for _, e := range ents {
			n := e.Name()
			low := strings.ToLower(n)
			if !strings.HasPrefix(n, ".") && (strings.HasSuffix(low, ".csv") || strings.HasSuffix(low, ".csv.gz")) {
				names = append(names, n)
			}
		}
		if len(names) > maxStanChains {
			return nil, fmt.Errorf("%s: more than %d chain files (*.csv, *.csv.gz)", dir, maxStanChains)
		}
		if err == io.EOF || (err == nil && len(ents) == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", dir, err)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no CmdStan chain file in the directory (*.csv or *.csv.gz, one per chain)", dir)
	}
	sort.Strings(names)
	return names, nil
}

// readDir reads the chains of one directory.
func (r *stanReader) readDir(dir string) (*File, error) {
	names, err := chainFiles(dir)
	if err != nil {
		return nil, err
	}
	out := &File{Path: dir}
	manifest := sha256.New()
	var flat []float64
	for _, n := range names {
		path := filepath.Join(dir, n)
		row, sum, err := r.readChain(path)
		if err != nil {
			if r.ctx.Err() != nil {
				return nil, r.ctx.Err()
			}
			return nil, err
		}
		if int64(len(flat))+int64(len(row)) > maxSamplesValues {
			return nil, fmt.Errorf("%s: more than %d values in the chosen draws of the directory's chains", path, int64(maxSamplesValues))
		}
		flat = append(flat, row...)
		out.Chains = append(out.Chains, Chain{Path: path, SHA256: sum})
		fmt.Fprintf(manifest, "%s  %s\n", sum, n)
	}
	w := len(flat) / len(names)
	for i := range names {
		out.Rows = append(out.Rows, flat[i*w:(i+1)*w:(i+1)*w])
	}
	out.SHA256 = hex.EncodeToString(manifest.Sum(nil))
	return out, nil
}

// chainState is what one chain keeps while it is read: its draws so far,
// the chosen columns of the draws chosen from the start, and a ring of
// the last r.tail draws.
type chainState struct {
	header []string
	draws  int
	picked map[int][]float64
	ring   [][]float64
}

// readChain reads one chain file and returns its run (the chosen columns
// of the chosen draws, draw after draw) and its SHA-256; its errors name
// the file.
func (r *stanReader) readChain(path string) ([]float64, string, error) {
	f, size, err := filekind.OpenRegular(path) // its errors name the file
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	row, sum, err := r.readOpen(f, size, path)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", path, err)
	}
	return row, sum, nil
}

// readOpen reads the chain file f of size bytes.
func (r *stanReader) readOpen(f io.Reader, size int64, path string) ([]float64, string, error) {
	if size > maxSamplesFileBytes {
		return nil, "", fmt.Errorf("%d bytes, more than the limit of %d", size, int64(maxSamplesFileBytes))
	}
	if r.total += size; r.total > maxStanTotalBytes {
		return nil, "", fmt.Errorf("the chain files hold more than %d bytes in all", int64(maxStanTotalBytes))
	}
	h := sha256.New()
	tee := io.TeeReader(ctxReader{r.ctx, f}, h)
	in, closeFn, err := dataset.Decompressed(tee)
	if err != nil {
		return nil, "", err
	}
	defer closeFn()
	st, err := r.scan(in)
	if err != nil {
		return nil, "", err
	}
	if _, err := io.Copy(io.Discard, tee); err != nil { // the rest (a gzip trailer), for the hash
		return nil, "", err
	}
	row, err := r.finish(path, st)
	return row, hex.EncodeToString(h.Sum(nil)), err
}

// scan reads the lines of a chain, decompressed, under stanTextLimits.
func (r *stanReader) scan(in io.Reader) (*chainState, error) {
	br := bufio.NewReaderSize(dataset.Bounded(in, stanTextLimits), 64<<10)
	st := &chainState{picked: map[int][]float64{}}
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			var le *dataset.LimitError
			if errors.As(err, &le) {
				return nil, le
			}
			return nil, err
		}
		if lerr := r.line(st, line, strings.TrimRight(text, "\r\n")); lerr != nil {
			return nil, lerr
		}
		if err == io.EOF {
			return st, nil
		}
	}
}

// line takes one line of a chain file: a comment, the header, or a draw.
// A comment "# Adaptation terminated" after draws (save_warmup) says that
// those were warmup draws: they are dropped.
func (r *stanReader) line(st *chainState, line int, text string) error {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return nil
	case strings.HasPrefix(t, "#"):
		if st.draws > 0 && strings.Contains(t, "Adaptation terminated") {
			st.draws, st.picked = 0, map[int][]float64{}
		}
		return nil
	case st.header == nil:
		return r.takeHeader(st, line, strings.Split(text, ","))
	}
	fields := strings.Split(text, ",")
	if len(fields) != len(st.header) {
		return fmt.Errorf("line %d: %d fields for %d columns", line, len(fields), len(st.header))
	}
	st.draws++
	if st.draws > math.MaxInt32 {
		return fmt.Errorf("line %d: more than %d draws", line, math.MaxInt32)
	}
	var dst []float64
	for _, k := range r.spec.Draws {
		if k == st.draws {
			dst = make([]float64, len(r.sel))
			st.picked[k] = dst
			break
		}
	}
	if r.tail > 0 {
		i := (st.draws - 1) % r.tail
		if i == len(st.ring) { // the ring grows with the draws, up to r.tail
			st.ring = append(st.ring, make([]float64, len(r.sel)))
		}
		slot := st.ring[i]
		if err := r.parse(slot, fields, line); err != nil {
			return err
		}
		if dst != nil {
			copy(dst, slot)
		}
		return nil
	}
	if dst != nil {
		return r.parse(dst, fields, line)
	}
	return nil
}

// parse reads the chosen columns of a draw into dst.
func (r *stanReader) parse(dst []float64, fields []string, line int) error {
	for i, j := range r.sel {
		v, err := strconv.ParseFloat(strings.TrimSpace(fields[j]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("line %d, column %s: must be a finite number, got %s", line, clip.Quote(r.header[j]), clip.Quote(fields[j]))
		}
		dst[i] = v
	}
	return nil
}

// takeHeader checks a chain's header: the first chain's sets the columns
// (and the selection), every other chain's must be the same.
func (r *stanReader) takeHeader(st *chainState, line int, names []string) error {
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	if _, err := strconv.ParseFloat(names[0], 64); err == nil {
		return fmt.Errorf("line %d: a draw before the header (the first line that is not a # comment must name the columns)", line)
	}
	st.header = names
	if r.header == nil {
		return r.choose(names)
	}
	if len(names) != len(r.header) {
		return fmt.Errorf("line %d: %d columns, %s has %d (every chain needs the same columns)", line, len(names), r.first, len(r.header))
	}
	for i, n := range names {
		if n != r.header[i] {
			return fmt.Errorf("line %d: column %d is %s, in %s %s (every chain needs the same columns)", line, i+1, clip.Quote(n), r.first, clip.Quote(r.header[i]))
		}
	}
	return nil
}

// paramName is the parameter a CmdStan column belongs to: its name up to
// the first index ("theta" of theta.1, "a" of a.2.3).
func paramName(col string) string {
	if i := strings.IndexAny(col, ".:"); i > 0 {
		return col[:i]
	}
	return col
}

// choose sets the header and the chosen columns from the first chain.
func (r *stanReader) choose(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			return fmt.Errorf("column name %s is empty or given twice", clip.Quote(n))
		}
		seen[n] = true
	}
	r.header = names
	if len(r.spec.Params) == 0 {
		for j, n := range names {
			if r.spec.SamplerColumns || !strings.HasSuffix(n, "__") {
				r.sel = append(r.sel, j)
			}
		}
		if len(r.sel) == 0 {
			return errors.New("no parameter column, only lp__ and the sampler's (--stan-columns keeps them)")
		}
		return nil
	}
	for _, p := range r.spec.Params {
		n := len(r.sel)
		for j, c := range names {
			if c == p || paramName(c) == p {
				r.sel = append(r.sel, j)
			}
		}
		if len(r.sel) == n {
			return fmt.Errorf("--param: no column of %s (the parameters here: %s)", clip.Quote(p), clip.Quote(strings.Join(paramNames(names), ",")))
		}
	}
	return nil
}

// paramNames lists the parameters of the columns, once each, in order.
func paramNames(cols []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cols {
		if p := paramName(c); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// finish checks a chain once read and returns its run. The first chain
// resolves the draws (and the layout); every other must have as many.
func (r *stanReader) finish(path string, st *chainState) ([]float64, error) {
	if st.header == nil {
		return nil, errors.New("no header line (a CmdStan CSV file names its columns after its # comments)")
	}
	if st.draws == 0 {
		return nil, errors.New("no draws")
	}
	if r.layout == nil {
		r.first, r.draws = path, st.draws
		if err := r.resolve(); err != nil {
			return nil, err
		}
	} else if st.draws != r.draws {
		return nil, fmt.Errorf("%d draws, %s has %d (every chain needs the same number of draws)", st.draws, r.first, r.draws)
	}
	row := make([]float64, 0, len(r.layout.Draws)*len(r.sel))
	for _, d := range r.layout.Draws {
		if v, ok := st.picked[d]; ok {
			row = append(row, v...)
		} else {
			row = append(row, st.ring[(d-1)%r.tail]...)
		}
	}
	return row, nil
}

// resolve turns the spec's draws into draw numbers of the first chain,
// increasing, and sets the layout.
func (r *stanReader) resolve() error {
	l := &StanLayout{Of: r.draws}
	from := map[int]int{}
	for _, k := range r.spec.Draws {
		d := k
		if k < 0 {
			d = r.draws + 1 + k
		}
		if d < 1 || d > r.draws {
			return fmt.Errorf("%d draws after warmup, too few for --draws %d", r.draws, k)
		}
		if k0, ok := from[d]; ok {
			return fmt.Errorf("--draws: %d and %d are the same draw (of %d)", k0, k, r.draws)
		}
		from[d] = k
		l.Draws = append(l.Draws, d)
	}
	sort.Ints(l.Draws)
	for _, j := range r.sel {
		l.Columns = append(l.Columns, r.header[j])
	}
	r.layout = l
	return nil
}

// BuildStan lays out the chains of two directories (ReadStanDirs) as
// samples: one run per chain, one release point "draw N" per chosen draw.
func BuildStan(files [2]*File, l *StanLayout) (*audit.Samples, error) {
	a, b := files[0], files[1]
	labels := make([]string, len(l.Draws))
	for i, d := range l.Draws {
		labels[i] = fmt.Sprintf("draw %d", d)
	}
	s := &audit.Samples{Name: fmt.Sprintf("CmdStan chains (%d on D from %s, %d on D′ from %s)", len(a.Rows), a.Path, len(b.Rows), b.Path), Dim: len(l.Columns)}
	s.Points, _ = mechanisms.PointsFromLabels(labels, l.Draws)
	s.Rows = append(append(s.Rows, a.Rows...), b.Rows...)
	for i := range s.Rows {
		s.Sides = append(s.Sides, dataset.Side(min(1, i/len(a.Rows))))
	}
	return s, checkSamples(s)
}

// Note describes the layout for the report.
func (l *StanLayout) Note() string {
	cols := l.Columns
	more := ""
	if len(cols) > 8 {
		cols, more = cols[:8], fmt.Sprintf(", … (%d columns)", len(l.Columns))
	}
	ds := make([]string, len(l.Draws))
	for i, d := range l.Draws {
		ds[i] = strconv.Itoa(d)
	}
	return fmt.Sprintf("Each chain (one CmdStan file) is one run: its releases are its draws %s of %d after warmup, each the vector of the columns %s%s.",
		strings.Join(ds, ", "), l.Of, strings.Join(cols, ", "), more)
}
