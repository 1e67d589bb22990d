package samples

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// samplesTextLimits bound a CSV of samples once decompressed: the file
// limit on its bytes, maxSamplesLineBytes on a line, and twice the most
// runs an audit takes on its lines (blank lines are skipped but counted).
var samplesTextLimits = dataset.TextLimits{Bytes: maxSamplesFileBytes, Line: maxSamplesLineBytes, Lines: 2*audit.MaxTrials + 1024,
	LineHint: " (the limit on one run of a CSV file; save wider runs as .npy)"}

// readSamplesCSV reads rows of numbers, with an optional header row (any
// row with a non-numeric field) and an optional trial column. It reads
// twice: a first pass over r (which the caller hashes) counts the rows and
// checks the text and value limits without keeping anything, so that an
// input beyond them — a gzip bomb among them — is refused in bounded
// memory; a second pass over file, from its start, parses the numbers into
// one block of exactly the size the first counted.
func readSamplesCSV(ctx context.Context, r io.Reader, file io.ReadSeeker, out *File) error {
	rows, width, err := scanSamplesCSV(r, out, nil)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil { // the rest of the file (a gzip trailer), for its hash
		return err
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out.Header, out.Trial = nil, nil
	flat := make([]float64, 0, rows*width)
	n, _, err := scanSamplesCSV(bufio.NewReaderSize(ctxReader{ctx, file}, 64<<10), out, &flat)
	if err == nil && n != rows {
		err = fmt.Errorf("the file changed while it was read (%d rows, then %d)", rows, n)
	}
	return err
}

// scanSamplesCSV walks a CSV of samples (gzip recognised by its magic
// bytes) under the limits and returns its number of runs and values per
// run. With flat nil it parses only the header; otherwise it parses every
// value, appends the runs to *flat (whose capacity must hold them) and
// sets out.rows to its slices.
func scanSamplesCSV(r io.Reader, out *File, flat *[]float64) (rows, width int, err error) {
	in, closeFn, err := dataset.Decompressed(r)
	if err != nil {
		return 0, 0, err
	}
	defer closeFn()
	cr := csv.NewReader(dataset.Bounded(in, samplesTextLimits))
	cr.ReuseRecord = true
	trialCol := -1
	total := 0
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var le *dataset.LimitError
			if errors.As(err, &le) {
				return 0, 0, le
			}
			return 0, 0, err
		}
		if line == 1 && !numeric(rec) {
			if strings.HasPrefix(strings.TrimSpace(rec[0]), "#") && strings.Contains(rec[0], "stan_version") || IsStanHeader(rec) {
				return 0, 0, errStanFile
			}
			trialCol = out.readHeader(rec)
			continue
		}
		w := len(rec)
		if trialCol >= 0 {
			w--
		}
		if err := out.checkRun(line, w, rows, width); err != nil {
			return 0, 0, err
		}
		if total += w; total > maxSamplesValues {
			return 0, 0, fmt.Errorf("line %d: more than %d values", line, int64(maxSamplesValues))
		}
		width = w
		rows++
		if flat == nil {
			continue
		}
		if err := out.appendRun(line, rec, trialCol, w, flat); err != nil {
			return 0, 0, err
		}
	}
	return rows, width, nil
}

// readHeader takes the column names of a header line, leaving out the
// "trial" column, whose index it returns (−1 without one).
func (out *File) readHeader(rec []string) (trialCol int) {
	trialCol = -1
	for j, name := range rec {
		if strings.TrimSpace(name) == "trial" {
			trialCol = j
			continue
		}
		out.Header = append(out.Header, strings.TrimSpace(name))
	}
	return trialCol
}

// checkRun checks the w values of the run on a line against the runs
// before it (rows of width values) and the header.
func (out *File) checkRun(line, w, rows, width int) error {
	if rows > 0 && w != width {
		return fmt.Errorf("line %d: %d values, the first run has %d", line, w, width)
	}
	if out.Header != nil && w != len(out.Header) {
		return fmt.Errorf("line %d: %d values for %d named columns", line, w, len(out.Header))
	}
	if rows == audit.MaxTrials {
		return fmt.Errorf("line %d: more than %d runs", line, audit.MaxTrials)
	}
	return nil
}

// appendRun parses the run of a line: its w values go to *flat (whose
// capacity must hold them) and out.rows, its trial column to out.trial.
func (out *File) appendRun(line int, rec []string, trialCol, w int, flat *[]float64) error {
	start := len(*flat)
	if start+w > cap(*flat) {
		return fmt.Errorf("line %d: the file changed while it was read (more runs than at first)", line)
	}
	for j, field := range rec {
		v, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("line %d, column %d: must be a finite number, got %s", line, j+1, clip.Quote(field))
		}
		if j == trialCol {
			if v != math.Trunc(v) || v < 0 || v > math.MaxInt32 {
				return fmt.Errorf("line %d, column %d: the trial must be an integer ≥ 0, got %s", line, j+1, clip.Quote(field))
			}
			out.Trial = append(out.Trial, int(v))
			continue
		}
		*flat = append(*flat, v)
	}
	out.Rows = append(out.Rows, (*flat)[start:start+w:start+w])
	return nil
}

// numeric reports whether every field parses as a number.
func numeric(rec []string) bool {
	for _, f := range rec {
		if _, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err != nil {
			return false
		}
	}
	return true
}
