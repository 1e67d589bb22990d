package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
)

// FeatureScaling names the per-feature transformation ReadCSV applies after
// parsing.
type FeatureScaling string

const (
	// ScaleNone keeps the values as read (also the meaning of "").
	ScaleNone FeatureScaling = "none"
	// ScaleDivide divides every feature by CSVOptions.Divisor (16 maps the
	// digits' pixel counts 0…16 onto [0, 1]).
	ScaleDivide FeatureScaling = "divide"
	// ScaleStandardize maps feature j to (x − m_j)/s_j with m_j the mean and
	// s_j the population standard deviation of column j over the file; a
	// constant column becomes 0.
	ScaleStandardize FeatureScaling = "standardize"
	// ScaleMinMax maps feature j affinely onto [0, 1] using its minimum and
	// maximum over the file; a constant column becomes 0.
	ScaleMinMax FeatureScaling = "minmax"
)

// DefaultMaxCSVRecords bounds the number of rows ReadCSV accepts when
// CSVOptions.MaxRecords is 0 (the audit engine's own limit on datasets).
const DefaultMaxCSVRecords = 1_000_000

// MaxCSVBytes bounds the (decompressed) size of a CSV input, so that a
// corrupt or hostile file cannot exhaust memory.
const MaxCSVBytes = 1 << 30

// CSVOptions says how ReadCSV turns rows of numbers into records.
type CSVOptions struct {
	// Name of the dataset in reports; ReadCSVFile defaults it to the
	// file's base name, ReadCSV to "csv".
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Header skips the first line (a header of any shape, e.g.
	// scikit-learn's "569,30,malignant,benign").
	Header bool `yaml:"header,omitempty" json:"header,omitempty"`
	// LabelColumn is the 1-based column holding the label; 0 means the
	// last column. Every other column is a feature, in file order.
	LabelColumn int `yaml:"label_column,omitempty" json:"label_column,omitempty"`
	// Classes is the number of classes K: every label must be an integer
	// in [0, K). 0 infers K as the largest label + 1 (labels must still be
	// non-negative integers, and K ≥ 2).
	Classes int `yaml:"classes,omitempty" json:"classes,omitempty"`
	// RealLabels accepts any finite label (regression data); Classes must
	// then be 0.
	RealLabels bool `yaml:"real_labels,omitempty" json:"real_labels,omitempty"`
	// Scale is the feature transformation ("" or none, divide,
	// standardize, minmax).
	Scale FeatureScaling `yaml:"scale,omitempty" json:"scale,omitempty"`
	// Divisor is the divisor of ScaleDivide (finite, > 0).
	Divisor float64 `yaml:"divisor,omitempty" json:"divisor,omitempty"`
	// MaxRecords bounds the number of rows; 0 means DefaultMaxCSVRecords.
	MaxRecords int `yaml:"max_records,omitempty" json:"max_records,omitempty"`
}

// DigitsOptions are the options for the bundled testdata/digits.csv.gz
// (testdata/DATA.md): no header, 64 pixel counts in 0…16 divided by 16 so
// that every feature lies in [0, 1], labels 0…9 in the last column.
func DigitsOptions() CSVOptions {
	return CSVOptions{Name: "digits", Classes: 10, Scale: ScaleDivide, Divisor: 16}
}

// BreastCancerOptions are the options for the bundled
// testdata/breast_cancer.csv: one header line, 30 real features
// standardised, labels 0 (malignant) and 1 (benign) in the last column.
func BreastCancerOptions() CSVOptions {
	return CSVOptions{Name: "breast_cancer", Header: true, Classes: 2, Scale: ScaleStandardize}
}

// check validates the options themselves.
func (o CSVOptions) check() error {
	if o.LabelColumn < 0 {
		return fmt.Errorf("label_column: must be ≥ 0 (0 = last column), got %d", o.LabelColumn)
	}
	if o.Classes < 0 || o.Classes == 1 {
		return fmt.Errorf("classes: must be 0 (infer) or ≥ 2, got %d", o.Classes)
	}
	if o.RealLabels && o.Classes != 0 {
		return fmt.Errorf("classes: must be 0 with real_labels, got %d", o.Classes)
	}
	if o.MaxRecords < 0 {
		return fmt.Errorf("max_records: must be ≥ 0 (0 = %d), got %d", DefaultMaxCSVRecords, o.MaxRecords)
	}
	switch o.Scale {
	case "", ScaleNone, ScaleStandardize, ScaleMinMax:
		if o.Divisor != 0 {
			return fmt.Errorf("divisor: only used with scale: divide, got %g with scale %q", o.Divisor, o.Scale)
		}
	case ScaleDivide:
		if !(o.Divisor > 0) || math.IsInf(o.Divisor, 0) {
			return fmt.Errorf("divisor: must be finite and > 0 with scale: divide, got %g", o.Divisor)
		}
	default:
		return fmt.Errorf("scale: must be one of none, divide, standardize, minmax, got %q", o.Scale)
	}
	return nil
}

// Limits on a CSV input beyond MaxCSVBytes, so that a hostile or corrupt
// file fails after little work and memory: a line (a row without its
// newline) is at most MaxCSVLineBytes long, a file holds at most
// MaxCSVValues feature values (rows × features, 160 MB as float64), and
// it has at most twice as many lines as it may have rows, plus
// csvSpareLines (blank lines are skipped but counted, so that a stream of
// newlines ends quickly too).
const (
	MaxCSVLineBytes = 4 << 20
	MaxCSVValues    = 20_000_000
	csvSpareLines   = 1024
)

// CSVLimits tighten what a CSV may hold, for a reader that knows what the
// data are for (ScanCSVFrom).
type CSVLimits struct {
	// Columns, when > 0, is the number of columns every row must have;
	// the first data row is checked against it before any other row is
	// read (a *CSVWidthError otherwise).
	Columns int
	// MaxValues bounds rows × features (0: MaxCSVValues; never above it).
	MaxValues int
}

// CSVWidthError reports a data row whose number of columns differs from
// the one required (CSVLimits.Columns).
type CSVWidthError struct {
	Name       string
	Line       int
	Want, Have int
}

func (e *CSVWidthError) Error() string {
	return fmt.Sprintf("%s: line %d: must have %d columns, got %d", e.Name, e.Line, e.Want, e.Have)
}

// CSVShape is what a pass over a CSV learns without keeping its values.
type CSVShape struct {
	// Rows is the number of data rows (the header excluded).
	Rows int
	// Columns is the number of columns of every row (the label included).
	Columns int
}

// csvRows walks the data rows of a CSV under the limits: the width of
// every row is that of the first (or lim.Columns), the number of rows is
// bounded by max_records and by the values limit. fn receives each data
// row, the reader (for field positions) and its 1-based line.
func csvRows(r io.Reader, opts CSVOptions, lim CSVLimits, fn func(row []string, cr *csv.Reader, line int) error) (CSVShape, error) {
	var shape CSVShape
	if err := opts.check(); err != nil {
		return shape, err
	}
	name := opts.Name
	if name == "" {
		name = "csv"
	}
	maxRec, maxVal := csvRowLimits(opts, lim)
	// Every row holds at least one feature, so rows ≤ maxVal too.
	maxLines := 2*int64(min(maxRec, maxVal)) + csvSpareLines
	cr := csv.NewReader(Bounded(r, TextLimits{Bytes: MaxCSVBytes, Line: MaxCSVLineBytes, Lines: maxLines,
		LineHint: " (MaxCSVLineBytes): not a CSV of numbers, or far too wide"}))
	cr.FieldsPerRecord = -1 // widths are checked here, with better messages
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	for first := true; ; first = false {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return shape, csvReadError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if first && opts.Header {
			continue
		}
		if shape.Columns == 0 {
			if err := checkFirstCSVRow(name, line, len(row), opts, lim); err != nil {
				return shape, err
			}
			shape.Columns = len(row)
		}
		if err := checkCSVRow(name, line, len(row), shape, maxRec, maxVal); err != nil {
			return shape, err
		}
		if fn != nil {
			if err := fn(row, cr, line); err != nil {
				return shape, err
			}
		}
		shape.Rows++
	}
	if shape.Rows == 0 {
		return shape, fmt.Errorf("%s: must have at least 1 record, got 0", name)
	}
	return shape, nil
}

// csvRowLimits returns the bounds csvRows holds a CSV to: at most maxRec
// data rows (max_records, DefaultMaxCSVRecords when unset) and at most
// maxVal feature values (lim.MaxValues, capped at MaxCSVValues).
func csvRowLimits(opts CSVOptions, lim CSVLimits) (maxRec, maxVal int) {
	maxRec = opts.MaxRecords
	if maxRec == 0 {
		maxRec = DefaultMaxCSVRecords
	}
	maxVal = lim.MaxValues
	if maxVal <= 0 || maxVal > MaxCSVValues {
		maxVal = MaxCSVValues
	}
	return maxRec, maxVal
}

// csvReadError turns an error of the CSV reader into one line naming the
// file: a crossed input limit, a parse error with its line, or any other
// read error (wrapped).
func csvReadError(name string, err error) error {
	var le *LimitError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %v", name, le)
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) && pe.Err != nil {
		return fmt.Errorf("%s: line %d: %v", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// checkFirstCSVRow checks the width of the first data row, which every
// later row must share: lim.Columns when set, at least 2 (features and a
// label), and wide enough for the label column.
func checkFirstCSVRow(name string, line, width int, opts CSVOptions, lim CSVLimits) error {
	if lim.Columns > 0 && width != lim.Columns {
		return &CSVWidthError{Name: name, Line: line, Want: lim.Columns, Have: width}
	}
	if width < 2 {
		return fmt.Errorf("%s: line %d: must have at least 2 columns (features and a label), got %d", name, line, width)
	}
	if opts.LabelColumn > width {
		return fmt.Errorf("label_column: must be in [1, %d] (the file has %d columns), got %d", width, width, opts.LabelColumn)
	}
	return nil
}

// checkCSVRow checks a data row of the given width against the rows before
// it (shape): the same width as the first, and room for one more row under
// maxRec rows and maxVal feature values.
func checkCSVRow(name string, line, width int, shape CSVShape, maxRec, maxVal int) error {
	if width != shape.Columns {
		return fmt.Errorf("%s: line %d: must have %d columns like the first row, got %d", name, line, shape.Columns, width)
	}
	if shape.Rows == maxRec {
		return fmt.Errorf("%s: line %d: more than max_records = %d rows", name, line, maxRec)
	}
	if int64(shape.Rows+1)*int64(shape.Columns-1) > int64(maxVal) {
		return fmt.Errorf("%s: line %d: more than %d feature values (rows × features, here %d features per row)", name, line, maxVal, shape.Columns-1)
	}
	return nil
}

// ReadCSV reads a dataset from comma-separated numbers, one record per line
// (empty lines are skipped): the label column (the last by default) goes to
// Record.Y and the other columns, in file order, to Record.X. Every row must
// have as many columns as the first, every value must parse as a finite
// number, and labels must be integers in [0, Classes) unless RealLabels is
// set. Errors name the 1-based line and column. Scaling (opts.Scale) is
// applied after the whole file is read. The input is bounded while it is
// read (MaxCSVBytes, MaxCSVLineBytes, max_records, MaxCSVValues): a
// larger one fails as soon as it crosses a limit.
func ReadCSV(r io.Reader, opts CSVOptions) (*Dataset, error) {
	name := opts.Name
	if name == "" {
		name = "csv"
	}
	d := &Dataset{Name: name}
	maxLabel := -1.0
	labelCol := -1
	_, err := csvRows(r, opts, CSVLimits{}, func(row []string, cr *csv.Reader, _ int) error {
		width := len(row)
		if labelCol < 0 {
			labelCol = width - 1
			if opts.LabelColumn != 0 {
				labelCol = opts.LabelColumn - 1
			}
		}
		rec := Record{X: make([]float64, 0, width-1)}
		for j, s := range row {
			line, _ := cr.FieldPos(j)
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: line %d, column %d: must be a finite number, got %s", name, line, j+1, clip.Quote(s))
			}
			if j != labelCol {
				rec.X = append(rec.X, v)
				continue
			}
			if !opts.RealLabels {
				if v != math.Trunc(v) || v < 0 {
					return fmt.Errorf("%s: line %d, column %d: label must be a class index (an integer ≥ 0), got %s", name, line, j+1, clip.Value(strings.TrimSpace(s)))
				}
				if opts.Classes > 0 && v >= float64(opts.Classes) {
					return fmt.Errorf("%s: line %d, column %d: label must be in [0, %d) (classes = %d), got %s", name, line, j+1, opts.Classes, opts.Classes, clip.Value(strings.TrimSpace(s)))
				}
				maxLabel = math.Max(maxLabel, v)
			}
			rec.Y = v
		}
		d.Records = append(d.Records, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !opts.RealLabels && opts.Classes == 0 && maxLabel < 1 {
		return nil, fmt.Errorf("%s: labels must span at least 2 classes when classes is inferred, got only label %g", name, maxLabel)
	}
	if err := scaleFeatures(d, opts); err != nil {
		return nil, err
	}
	return d, nil
}

// ScanCSVFrom streams a CSV as ReadCSVFrom reads it — gzip recognised by
// its magic bytes, the header skipped, the same byte, line and row limits —
// but keeps no value and parses no number: it returns the number of data
// rows and columns, in memory bounded by one line, and stops at the first
// row that breaks lim (a *CSVWidthError for the width). A reader that
// knows what the data are for calls it before ReadCSVFrom, so that a file
// of the wrong shape or size is refused after reading one row, or just
// past the limit, not after parsing it whole.
func ScanCSVFrom(r io.Reader, opts CSVOptions, lim CSVLimits) (CSVShape, error) {
	in, closeFn, err := decompressed(r, opts.Name)
	if err != nil {
		return CSVShape{}, err
	}
	defer closeFn()
	return csvRows(in, opts, lim, nil)
}

// ReadCSVFile is ReadCSVFrom on a file, named after the file's base name
// (without .csv and .gz) unless opts.Name is set. The file must be a
// regular file: a FIFO, a device or a directory is refused without
// blocking.
func ReadCSVFile(path string, opts CSVOptions) (*Dataset, error) {
	f, _, err := filekind.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opts.Name == "" {
		opts.Name = NameFromPath(path)
	}
	return ReadCSVFrom(f, opts)
}

// NameFromPath returns a dataset name for a file: its base name without
// .gz and .csv.
func NameFromPath(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".gz")
	return strings.TrimSuffix(base, ".csv")
}

// ReadCSVFrom is ReadCSV on a stream that may be gzip-compressed
// (recognised by its magic bytes, whatever the name), decompressed on the
// fly.
func ReadCSVFrom(r io.Reader, opts CSVOptions) (*Dataset, error) {
	in, closeFn, err := decompressed(r, opts.Name)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return ReadCSV(in, opts)
}

// decompressed returns r, decompressed on the fly when it starts with the
// gzip magic bytes (the decompressed stream is what the limits bound).
func decompressed(r io.Reader, name string) (io.Reader, func(), error) {
	in, closeFn, err := Decompressed(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return in, closeFn, nil
}

// Decompressed returns r, decompressed on the fly when it starts with the
// gzip magic bytes (whatever its name), and a function that releases the
// decompressor. Nothing bounds the decompressed stream: wrap it in
// Bounded.
func Decompressed(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	}
	return br, func() {}, nil
}

// TextLimits bound a text input as it is read (Bounded), after any
// decompression, so that neither a huge file nor a small gzip bomb can
// make a reader buffer more than one bounded line.
type TextLimits struct {
	// Bytes bounds the whole stream (> 0).
	Bytes int64
	// Line bounds a line without its newline, in bytes (> 0).
	Line int
	// Lines bounds the number of newlines (blank lines included); 0
	// means no bound.
	Lines int64
	// LineHint follows the line limit in its message, e.g. " (use .npy
	// for wider runs)".
	LineHint string
}

// LimitError is a TextLimits bound crossed while reading; its message
// names the line and the bound.
type LimitError struct{ Msg string }

// Error returns the message.
func (e *LimitError) Error() string { return e.Msg }

// Bounded returns a reader of r that fails with a *LimitError (rather
// than handing on more) once r has yielded more than lim.Bytes bytes, a
// line has grown beyond lim.Line bytes, or more than lim.Lines newlines
// have been read. It looks at every byte once, with bytes.IndexByte.
func Bounded(r io.Reader, lim TextLimits) io.Reader {
	g := &lineGuard{r: &limitedReader{r: r, left: lim.Bytes, max: lim.Bytes}, maxLine: lim.Line, linesLeft: lim.Lines, hint: lim.LineHint}
	if lim.Lines <= 0 {
		g.linesLeft = math.MaxInt64
	}
	return g
}

// limitedReader fails (rather than truncating silently) once more than
// max bytes have been read.
type limitedReader struct {
	r         io.Reader
	left, max int64
}

// Read implements io.Reader.
func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte beyond the limit tells a stream of exactly max bytes
		// from a longer one.
		var one [1]byte
		if n, err := io.ReadFull(l.r, one[:]); n == 0 {
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			return 0, err
		}
		return 0, &LimitError{fmt.Sprintf("input larger than %d bytes (decompressed)", l.max)}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// lineGuard fails (rather than letting a parser buffer it) once a row
// grows beyond maxLine bytes, or once more than linesLeft newlines have
// been read. A row ends at a newline outside double quotes, so that a
// quoted field spanning many short lines counts whole (every '"' toggles
// the state: an escaped "" toggles twice, and a bare quote is a CSV
// syntax error anyway).
type lineGuard struct {
	r         io.Reader
	maxLine   int
	hint      string
	cur       int   // bytes of the current row so far
	quoted    bool  // inside a quoted field
	line      int64 // newlines read so far (the current line is line+1)
	start     int64 // newlines read before the current row began
	linesLeft int64
	err       error
}

// Read implements io.Reader.
func (g *lineGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\n\"")
		if i < 0 {
			g.cur += len(b)
			break
		}
		g.cur += i
		if g.cur > g.maxLine {
			break
		}
		if b[i] == '"' {
			g.quoted = !g.quoted
			g.cur++
			b = b[i+1:]
			continue
		}
		g.line++
		if g.linesLeft--; g.linesLeft < 0 {
			g.err = &LimitError{fmt.Sprintf("more than %d lines (blank lines count: the file is far longer than its rows allow)", g.line-1)}
			return 0, g.err
		}
		if g.quoted {
			g.cur++
		} else {
			g.cur, g.start = 0, g.line
		}
		b = b[i+1:]
	}
	if g.cur > g.maxLine {
		what := ""
		if g.quoted {
			what = " (a quoted field spans lines)"
		}
		g.err = &LimitError{fmt.Sprintf("line %d: longer than %d bytes%s%s", g.start+1, g.maxLine, what, g.hint)}
		return 0, g.err
	}
	return n, err
}

// scaleFeatures applies opts.Scale in place and checks the result is
// finite (standardising values near ±MaxFloat64 could overflow).
func scaleFeatures(d *Dataset, opts CSVOptions) error {
	nf := len(d.Records[0].X)
	switch opts.Scale {
	case "", ScaleNone:
		return nil
	case ScaleDivide:
		for _, r := range d.Records {
			for j := range r.X {
				r.X[j] /= opts.Divisor
			}
		}
	case ScaleStandardize:
		// Two passes (mean, then the mean squared deviation) rather than
		// E[x²] − E[x]², which cancels catastrophically.
		n := float64(len(d.Records))
		for j := 0; j < nf; j++ {
			var m float64
			for _, r := range d.Records {
				m += r.X[j] / n
			}
			var v float64
			for _, r := range d.Records {
				e := r.X[j] - m
				v += e * e / n
			}
			s := math.Sqrt(v)
			for _, r := range d.Records {
				if s > 0 {
					r.X[j] = (r.X[j] - m) / s
				} else {
					r.X[j] = 0
				}
			}
		}
	case ScaleMinMax:
		for j := 0; j < nf; j++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, r := range d.Records {
				lo, hi = math.Min(lo, r.X[j]), math.Max(hi, r.X[j])
			}
			for _, r := range d.Records {
				if hi > lo {
					r.X[j] = (r.X[j] - lo) / (hi - lo)
				} else {
					r.X[j] = 0
				}
			}
		}
	}
	for i, r := range d.Records {
		for j, x := range r.X {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("scale: feature %d of record %d is not finite after %s scaling (values too large)", j+1, i, opts.Scale)
			}
		}
	}
	return nil
}

// ClassCounts returns the number of records of each class 0…k−1, and an
// error naming the first record whose label is not an integer in [0, k).
func ClassCounts(d *Dataset, k int) ([]int, error) {
	if k < 1 {
		return nil, fmt.Errorf("classes: must be ≥ 1, got %d", k)
	}
	counts := make([]int, k)
	for i, r := range d.Records {
		c, ok := ClassIndex(r.Y, k)
		if !ok {
			return nil, fmt.Errorf("dataset %q: record %d label must be a class index in [0, %d), got %g", d.Name, i, k, r.Y)
		}
		counts[c]++
	}
	return counts, nil
}

// InferClasses returns the number of classes of a dataset whose labels are
// class indices: the largest label + 1. Every label must be a non-negative
// integer, and there must be at least two classes.
func InferClasses(d *Dataset) (int, error) {
	k := 0
	for i, r := range d.Records {
		if !(r.Y >= 0 && r.Y < 1<<31) || r.Y != math.Trunc(r.Y) {
			return 0, fmt.Errorf("dataset %q: record %d label must be a class index (an integer ≥ 0), got %g", d.Name, i, r.Y)
		}
		k = max(k, int(r.Y)+1)
	}
	if k < 2 {
		return 0, fmt.Errorf("dataset %q: labels must span at least 2 classes, got %d", d.Name, k)
	}
	return k, nil
}

// ClassIndex converts a label to a class index, reporting whether it is an
// integer in [0, k).
func ClassIndex(y float64, k int) (int, bool) {
	if !(y >= 0 && y < float64(k)) || y != math.Trunc(y) {
		return 0, false
	}
	return int(y), true
}

// Split partitions d into a training and a test set, deterministically
// from seed: round(testFraction·n) records, chosen uniformly at random,
// form the test set. Both parts keep the records' original order and are
// deep copies. testFraction must be in (0, 1) and leave both parts
// non-empty.
func Split(d *Dataset, testFraction float64, seed uint64) (train, test *Dataset, err error) {
	n := d.Len()
	if !(testFraction > 0 && testFraction < 1) {
		return nil, nil, field.Errorf(field.At("testFraction", "test_fraction"), "must be in (0, 1), got %g", testFraction)
	}
	nt := int(math.Round(testFraction * float64(n)))
	if nt < 1 || nt > n-1 {
		return nil, nil, field.Errorf(field.At("testFraction", "test_fraction"), "%g of %d records leaves an empty part", testFraction, n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5b17))
	inTest := make([]bool, n)
	for _, i := range rng.Perm(n)[:nt] {
		inTest[i] = true
	}
	train, test = splitBy(d, inTest)
	return train, test, nil
}

// StratifiedSplit is Split class by class: of the n_c records of class c,
// round(testFraction·n_c) go to the test set, so both parts keep the class
// proportions (up to rounding). Labels must be class indices in [0, k).
func StratifiedSplit(d *Dataset, k int, testFraction float64, seed uint64) (train, test *Dataset, err error) {
	if !(testFraction > 0 && testFraction < 1) {
		return nil, nil, field.Errorf(field.At("testFraction", "test_fraction"), "must be in (0, 1), got %g", testFraction)
	}
	if _, err := ClassCounts(d, k); err != nil {
		return nil, nil, err
	}
	byClass := make([][]int, k)
	for i, r := range d.Records {
		c := int(r.Y)
		byClass[c] = append(byClass[c], i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x57a7))
	inTest := make([]bool, d.Len())
	nt := 0
	for _, idx := range byClass {
		m := int(math.Round(testFraction * float64(len(idx))))
		for _, p := range rng.Perm(len(idx))[:m] {
			inTest[idx[p]] = true
		}
		nt += m
	}
	if nt < 1 || nt > d.Len()-1 {
		return nil, nil, field.Errorf(field.At("testFraction", "test_fraction"), "%g of %d records leaves an empty part", testFraction, d.Len())
	}
	train, test = splitBy(d, inTest)
	return train, test, nil
}

func splitBy(d *Dataset, inTest []bool) (train, test *Dataset) {
	train = &Dataset{Name: d.Name + "/train"}
	test = &Dataset{Name: d.Name + "/test"}
	for i, r := range d.Records {
		c := Record{X: append([]float64(nil), r.X...), Y: r.Y}
		if inTest[i] {
			test.Records = append(test.Records, c)
		} else {
			train.Records = append(train.Records, c)
		}
	}
	return train, test
}
