package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
)

// endless repeats a pattern forever (after an optional prefix) and counts
// the bytes handed out, so that a test can assert how far a reader got.
type endless struct {
	prefix  []byte
	pattern []byte
	pos     int
	n       int64
}

func (e *endless) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		if len(e.prefix) > 0 {
			c := copy(p[k:], e.prefix)
			e.prefix = e.prefix[c:]
			k += c
			continue
		}
		c := copy(p[k:], e.pattern[e.pos:])
		e.pos = (e.pos + c) % len(e.pattern)
		k += c
	}
	e.n += int64(k)
	return k, nil
}

// heapGrowth runs f and returns the bytes it allocated in total.
func heapGrowth(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Every limit fails as soon as it is crossed, on an input that never ends:
// the bytes read stay within the limit plus the readers' buffers (64 KiB
// of bufio and csv buffering is allowed for), and the allocations within a
// few times the one line the parser may hold.
func TestCSVLimitsStopEndlessInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	const slack = 1 << 16
	row := func(width int) string { return strings.Repeat("0,", width-1) + "1\n" }
	cases := []struct {
		name     string
		in       *endless
		scan     bool
		lim      CSVLimits
		want     string
		maxBytes int64
		maxAlloc uint64
	}{
		{"a line without newline", &endless{pattern: []byte("1234567890")}, false, CSVLimits{},
			"csv: line 1: longer than 4194304 bytes", MaxCSVLineBytes + slack, 8 * MaxCSVLineBytes},
		{"a long line after good rows", &endless{prefix: []byte("1,0\n2,1\n"), pattern: []byte("7")}, false, CSVLimits{},
			"csv: line 3: longer than 4194304 bytes", MaxCSVLineBytes + slack, 8 * MaxCSVLineBytes},
		// 2·10⁶ rows may come with as many blank lines, plus 1024 spare.
		{"blank lines", &endless{pattern: []byte("\n")}, false, CSVLimits{},
			"more than 2001024 lines", 2001025 + slack, 1 << 22},
		// 100 features per row: the 200,001st row crosses 2·10⁷ values.
		// The scan keeps nothing, but the parser allocates each row's
		// strings (at once garbage): 40 MB read, at most 32 MiB allocated.
		{"rows beyond the values limit", &endless{pattern: []byte(row(101))}, true, CSVLimits{},
			"csv: line 200001: more than 20000000 feature values", 200001*int64(len(row(101))) + slack, 1 << 25},
		{"the first row wider than required", &endless{prefix: []byte(row(100000)), pattern: []byte(row(65))}, true, CSVLimits{Columns: 65},
			"csv: line 1: must have 65 columns, got 100000", int64(len(row(100000))) + slack, 1 << 25},
		{"a tighter values limit", &endless{pattern: []byte(row(3))}, true, CSVLimits{MaxValues: 1000},
			"csv: line 501: more than 1000 feature values", 501*int64(len(row(3))) + slack, 1 << 22},
	}
	for _, c := range cases {
		var err error
		// max_records at its default (10⁶) for the blank lines, out of
		// the way for the values limit.
		opts := CSVOptions{RealLabels: true, MaxRecords: math.MaxInt}
		if c.in.pattern[0] == '\n' {
			opts.MaxRecords = 0
		}
		alloc := heapGrowth(func() {
			if c.scan {
				_, err = ScanCSVFrom(c.in, opts, c.lim)
			} else {
				_, err = ReadCSV(c.in, opts)
			}
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if c.in.n > c.maxBytes {
			t.Errorf("%s: read %d bytes before failing, want ≤ %d", c.name, c.in.n, c.maxBytes)
		}
		if alloc > c.maxAlloc {
			t.Errorf("%s: allocated %d bytes, want ≤ %d", c.name, alloc, c.maxAlloc)
		}
		t.Logf("%s: failed after %d bytes read, %.1f MB allocated", c.name, c.in.n, float64(alloc)/1e6)
	}
	var we *CSVWidthError
	_, err := ScanCSVFrom(strings.NewReader("1,2,3\n"), CSVOptions{}, CSVLimits{Columns: 2})
	if !errors.As(err, &we) || we.Line != 1 || we.Want != 2 || we.Have != 3 {
		t.Errorf("width error %#v", err)
	}
}

// bomb returns a gzip stream of members, each the compression of size
// copies of b: a few kilobytes that expand to count·size bytes.
func bomb(t *testing.T, b byte, size, count int) []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte{b}, size))
	zw.Close()
	return bytes.Repeat(member.Bytes(), count)
}

// Gzip bombs (multi-member streams expanding 1000-fold) stop at the first
// limit they cross, never decompressed whole: 4 GiB of zeros at the line
// limit, 4 GiB of newlines at the line count.
func TestCSVGzipBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	for _, c := range []struct {
		b    byte
		want string
	}{{'0', "longer than 4194304 bytes"}, {'\n', "more than 2001024 lines"}} {
		z := bomb(t, c.b, 1<<20, 4096)
		cr := &countingReader{r: bytes.NewReader(z)}
		var err error
		alloc := heapGrowth(func() { _, err = ReadCSVFrom(cr, CSVOptions{}) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("bomb of %q: %v", c.b, err)
		}
		// The bomb's members each expand to 1 MiB from len(z)/4096 bytes.
		expanded := float64(cr.n) / float64(len(z)) * 4096 * (1 << 20)
		if expanded > 8<<20 {
			t.Errorf("bomb of %q: about %.0f bytes decompressed before failing", c.b, expanded)
		}
		if alloc > 64<<20 {
			t.Errorf("bomb of %q: allocated %d bytes", c.b, alloc)
		}
		t.Logf("bomb of %q (%d bytes, 4 GiB expanded): failed after ≈ %.1f MB decompressed, %.1f MB allocated", c.b, len(z), expanded/1e6, float64(alloc)/1e6)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// FuzzReadCSV feeds arbitrary bytes and options to the CSV reader: it
// never panics; what it accepts is a rectangular, finite dataset that
// respects the options; and the streaming scan agrees with it — the same
// rows and columns when the reader accepts, an error whenever the scan
// refuses (the reader is the stricter of the two).
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"1,2,0\n3,4,1\n", "h\n1,0\n", "1,2\n\n3,4\n", "\"1\",2\n", "1,\"2\n", "1e308,0\n-1e308,1\n"} {
		f.Add([]byte(s), false, uint8(0), uint8(0))
	}
	f.Add([]byte("a,b,c\n1,2,3\n4,5,6\n"), true, uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, header bool, labelCol, scale uint8) {
		scales := []FeatureScaling{ScaleNone, ScaleStandardize, ScaleMinMax, ScaleDivide}
		opts := CSVOptions{Header: header, LabelColumn: int(labelCol % 8), Scale: scales[scale%4], MaxRecords: 1000}
		if opts.Scale == ScaleDivide {
			opts.Divisor = 16
		}
		d, err := ReadCSVFrom(bytes.NewReader(in), opts)
		shape, serr := ScanCSVFrom(bytes.NewReader(in), opts, CSVLimits{})
		if err != nil {
			return
		}
		if serr != nil {
			t.Fatalf("the reader accepted what the scan refused: %v", serr)
		}
		if len(d.Records) == 0 || len(d.Records) != shape.Rows {
			t.Fatalf("%d records, the scan counted %d rows", len(d.Records), shape.Rows)
		}
		w := len(d.Records[0].X)
		if w != shape.Columns-1 {
			t.Fatalf("%d features, the scan counted %d columns", w, shape.Columns)
		}
		maxLabel := 0.0
		for i, r := range d.Records {
			if len(r.X) != w {
				t.Fatalf("record %d has %d features, record 0 %d", i, len(r.X), w)
			}
			if err := d.Validate(w); err != nil {
				t.Fatal(err)
			}
			if r.Y < 0 || r.Y != math.Trunc(r.Y) {
				t.Fatalf("record %d: label %g is not a class index", i, r.Y)
			}
			maxLabel = math.Max(maxLabel, r.Y)
			if opts.Scale == ScaleMinMax {
				for _, x := range r.X {
					if x < 0 || x > 1 {
						t.Fatalf("minmax feature %g outside [0, 1]", x)
					}
				}
			}
		}
		if maxLabel < 1 {
			t.Fatalf("inferred classes accepted with labels up to %g", maxLabel)
		}
	})
}

// A field quoted across many short lines counts as one row for the line
// limit (it was buffered whole: a 50 MB field, then echoed in the error),
// and a long field under the limit is echoed cut to a few dozen bytes:
// either way the error is one short line and little is allocated.
func TestCSVLongFields(t *testing.T) {
	chunk := strings.Repeat("x", 79) + "\n"
	quoted := "1,0\n2,\"" + strings.Repeat(chunk, 50_000_000/len(chunk)) + "\"\n"
	long := "1,0\n2," + strings.Repeat("7x", 1<<20) + "\n" // 2 MiB, not a number
	for _, c := range []struct {
		name, in, want string
		maxAlloc       uint64
	}{
		{"a 50 MB quoted field", quoted, "csv: line 2: longer than 4194304 bytes (a quoted field spans lines)", 8 * MaxCSVLineBytes},
		{"a 2 MiB field", long, `csv: line 2, column 2: must be a finite number, got "7x7x`, 16 * MaxCSVLineBytes},
	} {
		var err error
		alloc := heapGrowth(func() { _, err = ReadCSV(strings.NewReader(c.in), CSVOptions{}) })
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Fatalf("%s: error %.300v, want %q", c.name, err, c.want)
		}
		if len(err.Error()) > 300 {
			t.Errorf("%s: a %d-byte error", c.name, len(err.Error()))
		}
		if alloc > c.maxAlloc {
			t.Errorf("%s: allocated %d bytes", c.name, alloc)
		}
		t.Logf("%s: %q, %.1f MB allocated", c.name, err, float64(alloc)/1e6)
	}
	// Escaped quotes inside a quoted field keep the row open, and a
	// newline after the closing quote ends it.
	d, err := ReadCSV(strings.NewReader("\"1\"\"\",0\n"), CSVOptions{})
	if err == nil || !strings.Contains(err.Error(), `got "1\""`) {
		t.Errorf("escaped quote: %v %v", d, err)
	}
	in := "\"1\",0\n" + strings.Repeat("1,0\n", 10)
	if _, err := ScanCSVFrom(Bounded(strings.NewReader(in), TextLimits{Bytes: 1 << 20, Line: 6}), CSVOptions{RealLabels: true}, CSVLimits{}); err != nil {
		t.Errorf("rows of ≤ 6 bytes after a quoted field: %v", err)
	}
}

// Bounded fails past each of its limits and not at them: a stream of
// exactly Bytes bytes reads whole, one more byte is an error naming the
// limit; likewise Lines newlines and a line of Line bytes.
func TestBounded(t *testing.T) {
	read := func(in string, lim TextLimits) error {
		_, err := io.ReadAll(Bounded(strings.NewReader(in), lim))
		return err
	}
	for _, c := range []struct {
		in   string
		lim  TextLimits
		want string
	}{
		{strings.Repeat("1\n", 50), TextLimits{Bytes: 100, Line: 10}, ""},
		{strings.Repeat("1\n", 50) + "1", TextLimits{Bytes: 100, Line: 10}, "input larger than 100 bytes (decompressed)"},
		{strings.Repeat("1\n", 50), TextLimits{Bytes: 1000, Line: 10, Lines: 50}, ""},
		{strings.Repeat("1\n", 51), TextLimits{Bytes: 1000, Line: 10, Lines: 50}, "more than 50 lines"},
		{"1\n" + strings.Repeat("2", 10) + "\n", TextLimits{Bytes: 1000, Line: 10}, ""},
		{"1\n" + strings.Repeat("2", 11) + "\n", TextLimits{Bytes: 1000, Line: 10, LineHint: " (hint)"}, "line 2: longer than 10 bytes (hint)"},
	} {
		err := read(c.in, c.lim)
		var le *LimitError
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &le) || !strings.HasPrefix(le.Error(), c.want)) {
			t.Errorf("%d bytes under %+v: error %v, want %q", len(c.in), c.lim, err, c.want)
		}
	}
}
