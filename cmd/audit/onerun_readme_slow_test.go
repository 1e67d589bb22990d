//go:build slow

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's digits table, both designs side by side, is what the two
// shipped scenarios report: the multi-run region bound per epoch and the
// one-run bound with its counts.
func TestReadmeOneRunDigitsTable(t *testing.T) {
	dir := t.TempDir()
	multi, one := filepath.Join(dir, "multi.json"), filepath.Join(dir, "one.json")
	for _, c := range [][]string{{"../../testdata/digits-sgld.yaml", multi}, {"../../testdata/digits-sgld-canaries.yaml", one}} {
		if _, errs, code := runCLI(t, "run", c[0], "--quiet", "--no-checkpoint", "--json", c[1]); code != 0 {
			t.Fatalf("%s: exit %d %s", c[0], code, errs)
		}
	}
	var m struct {
		Report struct {
			Points []struct {
				Point  struct{ Label string } `json:"point"`
				Region struct {
					Epsilon float64 `json:"epsilon"`
				} `json:"region"`
			} `json:"points"`
		} `json:"report"`
	}
	var o oneRunReport
	for _, f := range []struct {
		path string
		v    any
	}{{multi, &m}, {one, &o}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, f.v); err != nil {
			t.Fatal(err)
		}
	}
	quoted := map[string][]string{}
	for _, row := range readmeTables(t, "| epoch | 1,000 runs") {
		for k := 0; k+3 <= len(row); k += 3 {
			quoted["epoch "+row[k]] = row[k+1 : k+3]
		}
	}
	if len(m.Report.Points) != 20 || len(o.Report.Points) != 20 || o.Report.Canaries == nil || len(quoted) != 20 {
		t.Fatalf("%d multi-run and %d one-run releases (canary design %+v), %d quoted", len(m.Report.Points), len(o.Report.Points), o.Report.Canaries, len(quoted))
	}
	for k, p := range m.Report.Points {
		q := o.Report.Points[k]
		c, _ := q.guesses(t)
		want := []string{fmt.Sprintf("%.3f", p.Region.Epsilon), fmt.Sprintf("%.3f (%d/%d)", q.Epsilon.Epsilon, c.Correct, c.Guesses)}
		if got := quoted[p.Point.Label]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: README quotes %q, the reports give %q", p.Point.Label, got, want)
		}
	}
}
