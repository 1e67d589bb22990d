package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// oneRunPoint is what the README quotes of a one-run report's release:
// its one-run ε bound and f-DP μ bound (each with the guesses behind it),
// its ceiling and its test accuracy.
type oneRunPoint struct {
	Point        struct{ Label string } `json:"point"`
	Epsilon      stats.Estimate         `json:"one_run"`
	FDP          stats.Estimate         `json:"one_run_fdp"`
	TestAccuracy *float64               `json:"test_accuracy"`
	Ceiling      stats.Estimate         `json:"ceiling"`
}

// guesses returns the guesses behind the point's one-run ε bound and its
// f-DP bound; a bound without them fails the test.
func (p oneRunPoint) guesses(t *testing.T) (eps, fdp stats.OneRunCounts) {
	t.Helper()
	if p.Epsilon.Guesses == nil || p.FDP.Guesses == nil {
		t.Fatalf("%s: a bound without its guesses: one_run %+v, one_run_fdp %+v", p.Point.Label, p.Epsilon, p.FDP)
	}
	return *p.Epsilon.Guesses, *p.FDP.Guesses
}

// oneRunReport is what these tests read of a canary design's report.
type oneRunReport struct {
	Report struct {
		Canaries *struct {
			Canaries int `json:"canaries"`
			Included int `json:"included"`
		} `json:"canaries"`
		Adjacency string        `json:"adjacency"`
		Points    []oneRunPoint `json:"points"`
	} `json:"report"`
}

// readmeTables returns the rows of the markdown tables in the README's
// "Auditing from one run" section whose header starts with head; a row is
// split into its cells.
func readmeTables(t *testing.T, head string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, line := range strings.Split(docSection(t, "README.md", "## Auditing from one run"), "\n") {
		switch {
		case strings.HasPrefix(line, head):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "| "), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			rows = append(rows, cells)
		default:
			in = false
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no table headed %q in the README's one-run section", head)
	}
	return rows
}

// The README's MNIST/LeNet5 table is the stored report of that run
// (examples/mnist/lenet5-report.json, written by `audit run lenet5.yaml
// --json`; the reduced run of the same program and pipeline is
// TestMNISTExampleCI), and every bound in that report is what its counts
// give, recomputed here with package stats.
func TestReadmeOneRunMNISTTable(t *testing.T) {
	b, err := os.ReadFile("../../examples/mnist/lenet5-report.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc oneRunReport
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	pts := doc.Report.Points
	if doc.Report.Canaries == nil || doc.Report.Canaries.Canaries != 1000 || len(pts) != 10 {
		t.Fatalf("stored report: canary design %+v, %d releases", doc.Report.Canaries, len(pts))
	}
	// Per epoch: the raw score's v/r, ε_lb, μ_lb and accuracy, then the
	// calibrated score's v/r and ε_lb (lenet5-calibrated-report.json).
	quoted, calibrated := map[string][]string{}, map[string][]string{}
	for _, row := range readmeTables(t, "| epoch | v/r |") {
		for k := 0; k+7 <= len(row); k += 7 {
			quoted["epoch "+row[k]] = row[k+1 : k+5]
			calibrated["epoch "+row[k]] = row[k+5 : k+7]
		}
	}
	checkCalibratedMNIST(t, calibrated)
	for _, p := range pts {
		c, fc := p.guesses(t)
		eps, err := stats.OneRunEpsilon(c, p.Epsilon.Delta, p.Epsilon.Confidence)
		if err != nil {
			t.Fatal(err)
		}
		fdp, err := stats.OneRunFDP(c, p.FDP.Delta, p.FDP.Confidence)
		if err != nil {
			t.Fatal(err)
		}
		if eps.Epsilon != p.Epsilon.Epsilon || fdp.Mu != p.FDP.Mu || fc != c {
			t.Errorf("%s: stored ε_lb %v, μ_lb %v; from the counts %+v: %v, %v", p.Point.Label, p.Epsilon.Epsilon, p.FDP.Mu, c, eps.Epsilon, fdp.Mu)
		}
		mu := "0"
		if p.FDP.Mu > 0 {
			mu = fmt.Sprintf("%.3f", p.FDP.Mu)
		}
		want := []string{fmt.Sprintf("%d/%d", c.Correct, c.Guesses), fmt.Sprintf("%.3f", p.Epsilon.Epsilon), mu, fmt.Sprintf("%.4f", *p.TestAccuracy)}
		if got := quoted[p.Point.Label]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: README quotes %q, the report gives %q", p.Point.Label, got, want)
		}
	}
}

// checkCalibratedMNIST checks the README's calibrated columns against the
// stored report of lenet5_calibrated.yaml (the same run's scores minus a
// reference run's, averaged over the epochs), and that report's bounds
// against their counts.
func checkCalibratedMNIST(t *testing.T, quoted map[string][]string) {
	t.Helper()
	b, err := os.ReadFile("../../examples/mnist/lenet5-calibrated-report.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Report struct {
			Canaries *struct {
				Score      string `json:"score"`
				References int    `json:"references"`
			} `json:"canaries"`
			Points []oneRunPoint `json:"points"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Report.Canaries
	if c == nil || c.Score != "calibrated" || c.References != 1 || len(doc.Report.Points) != 10 || len(quoted) != 10 {
		t.Fatalf("calibrated report: canary design %+v, %d releases, %d quoted", c, len(doc.Report.Points), len(quoted))
	}
	for _, p := range doc.Report.Points {
		g, _ := p.guesses(t)
		eps, err := stats.OneRunEpsilon(g, p.Epsilon.Delta, p.Epsilon.Confidence)
		if err != nil {
			t.Fatal(err)
		}
		if eps.Epsilon != p.Epsilon.Epsilon {
			t.Errorf("%s: stored calibrated ε_lb %v, from the counts %+v: %v", p.Point.Label, p.Epsilon.Epsilon, g, eps.Epsilon)
		}
		want := []string{fmt.Sprintf("%d/%d", g.Correct, g.Guesses), fmt.Sprintf("%.3f", p.Epsilon.Epsilon)}
		if got := quoted[p.Point.Label]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: README quotes the calibrated score as %q, the report gives %q", p.Point.Label, got, want)
		}
	}
}
