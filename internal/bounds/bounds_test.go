package bounds

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
)

// ChecksText says why a theorem does not apply, or lists its assumptions
// with their numbers, or nothing when it checked none.
func TestChecksText(t *testing.T) {
	cases := []struct {
		r    Row
		want string
	}{
		{Row{Applies: false, Reason: "the step is too large"}, "Does not apply: the step is too large"},
		{Row{Applies: true, Checks: []closedform.Check{{Name: "L-smooth", Detail: "L = 2"}, {Name: "bounded", Detail: "B = 1"}}},
			"Assumptions: L-smooth (L = 2); bounded (B = 1)"},
		{Row{Applies: true}, ""},
	}
	for _, c := range cases {
		if got := ChecksText(c.r); got != c.want {
			t.Errorf("ChecksText(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}

// On the built-in scenario, the table names every theorem Rows evaluates
// and the lower bound, and the JSON holds the same rows.
func TestWriteTableAndJSON(t *testing.T) {
	cfg, err := scenario.DefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := scenario.BuildWith(cfg, scenario.BuildOptions{Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	pts := plan.Points()
	iters := pts[len(pts)-1].Iteration
	rows, err := Rows(plan, iters, 1e-5)
	if err != nil || len(rows) == 0 {
		t.Fatalf("Rows: %d rows, %v", len(rows), err)
	}
	var table bytes.Buffer
	if err := Write(&cli.Env{Stdout: &table, Stderr: io.Discard}, cfg, plan, 0, 1e-5, ""); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !strings.Contains(strings.Join(strings.Fields(table.String()), " "), strings.Fields(r.Source)[0]) {
			t.Errorf("the table does not name %q", r.Source)
		}
	}
	if !strings.Contains(table.String(), "lower bound ") {
		t.Errorf("no lower bound line:\n%s", table.String())
	}
	var js bytes.Buffer
	if err := Write(&cli.Env{Stdout: &js, Stderr: io.Discard}, cfg, plan, 0, 1e-5, "-"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Guarantees  []Row           `json:"guarantees"`
		LowerBounds []LowerBoundRow `json:"lower_bounds"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("the JSON (with no table before it) does not decode: %v\n%s", err, js.String())
	}
	if len(doc.Guarantees) != len(rows) || len(doc.LowerBounds) != 1 {
		t.Fatalf("JSON: %d guarantees and %d lower bounds, want %d and 1", len(doc.Guarantees), len(doc.LowerBounds), len(rows))
	}
	for i, g := range doc.Guarantees {
		if g.Source != rows[i].Source || g.Applies != rows[i].Applies || (g.Epsilon == nil) != (rows[i].Epsilon == nil) {
			t.Errorf("guarantee %d: JSON %+v, Rows %+v", i, g, rows[i])
		}
		if g.Iterations != iters {
			t.Errorf("guarantee %d at %d iterations, want the last release point's %d", i, g.Iterations, iters)
		}
	}
}

// A replace-one full-batch DP-SGLD lists its own replace-one rows
// unmarked, then the add/remove rows marked as such, each below its
// replace-one twin; the table shows the variant.
func TestRowsOtherAdjacency(t *testing.T) {
	cfg, err := scenario.LoadConfig("../../testdata/dp-sgld-correct.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := scenario.BuildWith(cfg, scenario.BuildOptions{Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	rows, err := Rows(plan, 4, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	own, other := map[string]float64{}, map[string]float64{}
	for _, r := range rows {
		if r.Epsilon == nil {
			continue
		}
		key := strings.Fields(r.Source)[0]
		if strings.HasPrefix(r.Variant, "add/remove") {
			other[key] = float64(*r.Epsilon)
		} else {
			own[key] = float64(*r.Epsilon)
		}
	}
	for _, k := range []string{"Gaussian", "Poisson"} {
		if !(other[k] > 0) {
			t.Errorf("no add/remove row %q: %v", k, other)
		}
	}
	for _, k := range []string{"Gaussian"} {
		if !(other[k] < own[k]) {
			t.Errorf("%s: add/remove ε %g, replace-one ε %g", k, other[k], own[k])
		}
	}
	var table bytes.Buffer
	if err := Write(&cli.Env{Stdout: &table, Stderr: io.Discard}, cfg, plan, 0, 1e-5, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "add/remove (n public)") {
		t.Errorf("the table does not mark the add/remove rows:\n%s", table.String())
	}
}
