package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// An estimator beyond the region bound and GDP μ gets its own column in
// the table and the HTML page and its own group of columns in the CSV,
// holding its figure at each release point; the region and GDP columns
// are unchanged.
func TestExtraEstimatorColumns(t *testing.T) {
	r := fakeReport("extra", 2, false, 2, nil)
	for k := range r.Points {
		e := audit.PointEstimate{Estimator: "third"}
		e.Bound.Epsilon = 7.125 + float64(k) // marks the cells: no other holds these
		e.Bound.Estimator = "a third bound"
		e.Bound.Counts.FP, e.Bound.Counts.FN = 3+k, 4
		r.Points[k].Estimates = append(r.Points[k].Estimates, e)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"│ third", "7.125", "8.125", "third: a third bound on the evaluation runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	col := -1
	for i, h := range head {
		if h == "third_value" {
			col = i
		}
	}
	if col < 0 || head[col-3] != "third_attack" || head[col-2] != "third_fp" || rows[1][col] != "7.125" || rows[2][col] != "8.125" || rows[2][col-2] != "4" {
		t.Errorf("CSV columns %v, rows %v %v", head, rows[1], rows[2])
	}
	b.Reset()
	if err := WriteHTML(&b, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "third") || !strings.Contains(b.String(), "8.125") {
		t.Error("HTML lacks the third estimator's column")
	}
}
