package dataset

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	digitsPath = "../../testdata/digits.csv.gz"
	cancerPath = "../../testdata/breast_cancer.csv"
)

// The checksums of testdata/DATA.md, and the counts it states, re-derived.
// Reference counts: a separate reader (Python's csv and gzip modules) over
// the same files; the digits' class counts also match the UCI page's
// counts for its test set.
func TestBundledDataChecksums(t *testing.T) {
	for path, want := range map[string]string{
		digitsPath: "46abec6b12486ad9e51943373abcf22bbea1b5a51a1619b361570d8893f1464a",
		cancerPath: "fed3eb72d0575ef6192293f5093c6e801b1476b577d0386bf4455504522172ed",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: SHA-256 %s, DATA.md says %s", path, got, want)
		}
	}
}

func TestReadDigits(t *testing.T) {
	d, err := ReadCSVFile(digitsPath, DigitsOptions())
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 1797 || d.Name != "digits" {
		t.Fatalf("%s: %d records", d.Name, d.Len())
	}
	if err := d.Validate(64); err != nil {
		t.Fatal(err)
	}
	counts, err := ClassCounts(d, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{178, 182, 177, 183, 181, 182, 181, 179, 174, 180}
	for k := range want {
		if counts[k] != want[k] {
			t.Fatalf("class counts %v, want %v", counts, want)
		}
	}
	if k, err := InferClasses(d); k != 10 || err != nil {
		t.Errorf("InferClasses = %d, %v", k, err)
	}
	var sum float64
	for _, r := range d.Records {
		for _, x := range r.X {
			if x < 0 || x > 1 {
				t.Fatalf("feature %g outside [0, 1]", x)
			}
			sum += x
		}
	}
	// Reference: numpy, (pixels/16).sum() = 35107.375 (exact in binary).
	if sum != 35107.375 {
		t.Errorf("sum of features %.17g, want 35107.375", sum)
	}
	// The last row of the file, divided by 16, label 8.
	last := []float64{0, 0, 10, 14, 8, 1, 0, 0, 0, 2, 16, 14, 6, 1, 0, 0, 0, 0, 15, 15, 8, 15, 0, 0, 0, 0, 5, 16, 16, 10, 0, 0, 0, 0, 12, 15, 15, 12, 0, 0, 0, 4, 16, 6, 4, 16, 6, 0, 0, 8, 16, 10, 8, 16, 8, 0, 0, 1, 8, 12, 14, 12, 1, 0}
	r := d.Records[1796]
	for j, v := range last {
		if r.X[j] != v/16 {
			t.Fatalf("last record feature %d = %g, want %g", j, r.X[j], v/16)
		}
	}
	if r.Y != 8 {
		t.Errorf("last label %g, want 8", r.Y)
	}
}

func TestReadBreastCancer(t *testing.T) {
	d, err := ReadCSVFile(cancerPath, BreastCancerOptions())
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 569 || len(d.Records[0].X) != 30 {
		t.Fatalf("%d records of %d features", d.Len(), len(d.Records[0].X))
	}
	counts, err := ClassCounts(d, 2)
	if err != nil || counts[0] != 212 || counts[1] != 357 {
		t.Fatalf("class counts %v, %v; want [212 357]", counts, err)
	}
	// Reference: numpy, (X − X.mean(0))/X.std(0) (population standard
	// deviation, as ScaleStandardize documents).
	for _, c := range []struct {
		i, j int
		want float64
	}{{0, 0, 1.0970639814699807}, {568, 29, -0.7512066928221901}, {100, 3, -0.2053132184831146}} {
		if got := d.Records[c.i].X[c.j]; math.Abs(got-c.want) > 1e-13 {
			t.Errorf("standardized x[%d][%d] = %.17g, want %.17g", c.i, c.j, got, c.want)
		}
	}
	// Every column has mean 0 and variance 1 afterwards.
	for j := 0; j < 30; j++ {
		var m, v float64
		for _, r := range d.Records {
			m += r.X[j]
		}
		m /= 569
		for _, r := range d.Records {
			v += (r.X[j] - m) * (r.X[j] - m)
		}
		v /= 569
		if math.Abs(m) > 1e-13 || math.Abs(v-1) > 1e-12 {
			t.Errorf("column %d: mean %g, variance %.15g", j, m, v)
		}
	}
}

func TestReadCSVOptions(t *testing.T) {
	in := "a,b,c\n1, 2, 0\n\n3,4,1\n5,6,2\n"
	d, err := ReadCSV(strings.NewReader(in), CSVOptions{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 3 || d.Records[2].Y != 2 || d.Records[0].X[1] != 2 || d.Name != "csv" {
		t.Errorf("records %+v", d.Records)
	}
	// Label in the first column; min–max scaling.
	d, err = ReadCSV(strings.NewReader("1,2,0\n0,4,1\n1,6,2\n"), CSVOptions{LabelColumn: 1, Scale: ScaleMinMax, Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantX := [][]float64{{0, 0}, {0.5, 0.5}, {1, 1}}
	wantY := []float64{1, 0, 1}
	for i, r := range d.Records {
		if r.Y != wantY[i] || r.X[0] != wantX[i][0] || r.X[1] != wantX[i][1] {
			t.Errorf("record %d = %+v, want x %v y %g", i, r, wantX[i], wantY[i])
		}
	}
	// Real labels; a constant column standardises to 0.
	d, err = ReadCSV(strings.NewReader("7,1,0.25\n7,3,-1.5\n"), CSVOptions{RealLabels: true, Scale: ScaleStandardize})
	if err != nil {
		t.Fatal(err)
	}
	if d.Records[1].Y != -1.5 || d.Records[0].X[0] != 0 || d.Records[0].X[1] != -1 || d.Records[1].X[1] != 1 {
		t.Errorf("records %+v", d.Records)
	}
	// Gzip detected by content, not by name.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("1,2,1\n3,4,0\n"))
	zw.Close()
	path := filepath.Join(t.TempDir(), "plain-name.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = ReadCSVFile(path, CSVOptions{})
	if err != nil || d.Len() != 2 || d.Name != "plain-name" || d.Records[1].X[1] != 4 {
		t.Errorf("gzip by content: %v, %+v", err, d)
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		opts CSVOptions
		want string
	}{
		{"1,2,0\n1,2\n", CSVOptions{}, "csv: line 2: must have 3 columns like the first row, got 2"},
		{"1,2,0\n1,x,1\n", CSVOptions{}, `csv: line 2, column 2: must be a finite number, got "x"`},
		{"1,NaN,0\n", CSVOptions{}, `csv: line 1, column 2: must be a finite number, got "NaN"`},
		{"1,2,0\n1,-Inf,1\n", CSVOptions{}, `csv: line 2, column 2: must be a finite number, got "-Inf"`},
		{"1,1e400,0\n", CSVOptions{}, `csv: line 1, column 2: must be a finite number, got "1e400"`},
		{"1,2,0\n1,2,1.5\n", CSVOptions{}, "csv: line 2, column 3: label must be a class index (an integer ≥ 0), got 1.5"},
		{"1,2,-1\n", CSVOptions{}, "csv: line 1, column 3: label must be a class index (an integer ≥ 0), got -1"},
		{"1,2,0\n1,2,10\n", CSVOptions{Classes: 10}, "csv: line 2, column 3: label must be in [0, 10) (classes = 10), got 10"},
		{"1,2,0\n1,2,0\n", CSVOptions{}, "csv: labels must span at least 2 classes when classes is inferred, got only label 0"},
		{"1,2,0\n", CSVOptions{LabelColumn: 4}, "label_column: must be in [1, 3] (the file has 3 columns), got 4"},
		{"1,2,0\n", CSVOptions{LabelColumn: -1}, "label_column: must be ≥ 0 (0 = last column), got -1"},
		{"h\n", CSVOptions{Header: true}, "csv: must have at least 1 record, got 0"},
		{"", CSVOptions{}, "csv: must have at least 1 record, got 0"},
		{"1\n", CSVOptions{}, "csv: line 1: must have at least 2 columns (features and a label), got 1"},
		{"1,0\n", CSVOptions{Classes: 1}, "classes: must be 0 (infer) or ≥ 2, got 1"},
		{"1,0\n", CSVOptions{Classes: 3, RealLabels: true}, "classes: must be 0 with real_labels, got 3"},
		{"1,0\n", CSVOptions{Scale: ScaleDivide}, "divisor: must be finite and > 0 with scale: divide, got 0"},
		{"1,0\n", CSVOptions{Scale: ScaleNone, Divisor: 2}, `divisor: only used with scale: divide, got 2 with scale "none"`},
		{"1,0\n", CSVOptions{Scale: "log"}, `scale: must be one of none, divide, standardize, minmax, got "log"`},
		{"1,0\n2,1\n3,0\n", CSVOptions{MaxRecords: 2}, "csv: line 3: more than max_records = 2 rows"},
		{"1,\"2\n", CSVOptions{}, `csv: line 1: extraneous or missing " in quoted-field`},
		{"1e308,0\n-1e308,1\n", CSVOptions{Scale: ScaleMinMax}, "scale: feature 1 of record 0 is not finite after minmax scaling (values too large)"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in), c.opts)
		if err == nil || err.Error() != c.want {
			t.Errorf("ReadCSV(%q, %+v):\n  error %v\n  want  %s", c.in, c.opts, err, c.want)
		}
	}
	if _, err := ReadCSVFile(filepath.Join(t.TempDir(), "missing.csv"), CSVOptions{}); err == nil {
		t.Error("a missing file must be an error")
	}
	// A truncated gzip stream is an error, not a short dataset.
	b, err := os.ReadFile(digitsPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.csv.gz")
	os.WriteFile(path, b[:len(b)/2], 0o644)
	if _, err := ReadCSVFile(path, DigitsOptions()); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("truncated gzip: %v", err)
	}
	// The byte limit fails loudly instead of truncating.
	lr := &limitedReader{r: strings.NewReader("0123456789"), left: 4}
	if n, err := lr.Read(make([]byte, 10)); n != 4 || err != nil {
		t.Errorf("first read %d, %v", n, err)
	}
	if _, err := lr.Read(make([]byte, 10)); err == nil {
		t.Error("reading past the limit must fail")
	}
}

func TestSplit(t *testing.T) {
	d, err := ReadCSVFile(digitsPath, DigitsOptions())
	if err != nil {
		t.Fatal(err)
	}
	tr, te, err := Split(d, 0.2, 42)
	if err != nil {
		t.Fatal(err)
	}
	if te.Len() != 359 || tr.Len() != 1438 {
		t.Errorf("sizes %d/%d, want 1438/359 (round(0.2·1797) = 359)", tr.Len(), te.Len())
	}
	checkPartition(t, d, tr, te)
	tr2, te2, _ := Split(d, 0.2, 42)
	if !sameRecords(tr, tr2) || !sameRecords(te, te2) {
		t.Error("the same seed must give the same split")
	}
	tr3, _, _ := Split(d, 0.2, 43)
	if sameRecords(tr, tr3) {
		t.Error("another seed gave the same split")
	}

	str, ste, err := StratifiedSplit(d, 10, 0.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, d, str, ste)
	all, _ := ClassCounts(d, 10)
	tc, _ := ClassCounts(ste, 10)
	for k := range all {
		if want := int(math.Round(0.2 * float64(all[k]))); tc[k] != want {
			t.Errorf("class %d: %d test records, want round(0.2·%d) = %d", k, tc[k], all[k], want)
		}
	}
	for _, f := range []float64{0, 1, math.NaN(), 1e-9} {
		if _, _, err := Split(d, f, 1); err == nil {
			t.Errorf("test_fraction %g must be rejected", f)
		}
	}
	if _, _, err := StratifiedSplit(d, 5, 0.2, 1); err == nil {
		t.Error("labels ≥ k must be rejected")
	}
}

// checkPartition asserts that a and b together hold exactly the records of
// d (as a multiset), that each keeps d's order (is a subsequence of it),
// and that neither shares storage with d.
func checkPartition(t *testing.T, d, a, b *Dataset) {
	t.Helper()
	if a.Len()+b.Len() != d.Len() {
		t.Fatalf("%d + %d records, want %d", a.Len(), b.Len(), d.Len())
	}
	count := map[string]int{}
	for _, r := range d.Records {
		count[fmt.Sprint(r)]++
	}
	for _, p := range []*Dataset{a, b} {
		i := 0
		for _, r := range d.Records {
			if i < p.Len() && sameRecord(r, p.Records[i]) {
				i++
			}
		}
		if i != p.Len() {
			t.Fatalf("%s does not keep the dataset's order", p.Name)
		}
		for _, r := range p.Records {
			count[fmt.Sprint(r)]--
		}
	}
	for k, c := range count {
		if c != 0 {
			t.Fatalf("record %s appears %d more times in the dataset than in the parts", k, c)
		}
	}
	for i := range d.Records {
		for _, p := range []*Dataset{a, b} {
			for _, r := range p.Records {
				if &r.X[0] == &d.Records[i].X[0] {
					t.Fatal("the split shares storage with the dataset")
				}
			}
		}
		if i > 20 {
			break
		}
	}
}

func sameRecord(a, b Record) bool {
	if a.Y != b.Y || len(a.X) != len(b.X) {
		return false
	}
	for k := range a.X {
		if a.X[k] != b.X[k] {
			return false
		}
	}
	return true
}

func sameRecords(a, b *Dataset) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Records {
		if !sameRecord(a.Records[i], b.Records[i]) {
			return false
		}
	}
	return true
}

// BenchmarkReadDigits: parse and scale the bundled gzip CSV.
func BenchmarkReadDigits(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := ReadCSVFile(digitsPath, DigitsOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
