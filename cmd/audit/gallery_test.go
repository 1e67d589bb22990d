package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// galleryCommand is one command of the README or docs/, with the numbers
// quoted for it.
type galleryCommand struct {
	args []string
	exit int
	slow bool
	// checks are the quoted numbers: (quantity, quoted cell) pairs.
	checks [][2]string
}

// galleryCommands extracts the "go run ./cmd/audit …" commands of the
// README and of every page of docs/ (docFiles), in code blocks and in
// tables; the commands of the reference's "audit curve" section are left
// to TestReadmeCurveSection, which runs them with the numbers it quotes. A
// command whose line says VIOLATION or "exits 1" must exit 1, and one
// marked "# slow" runs only with -tags slow. A table headed "| quantity |
// value |" quotes numbers of the command above it on the same page; a row
// of the sampler table (command in its second column) quotes the headline
// ε_lb, the upper bound at δ and the verdict in its next three columns.
func galleryCommands(t *testing.T) []galleryCommand {
	t.Helper()
	re := regexp.MustCompile("go run \\./cmd/audit ([^`#|\n]*)")
	var out []galleryCommand
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		first := len(out)
		inNumbers := false
		for _, line := range strings.Split(string(b), "\n") {
			cells := tableCells(line)
			switch {
			case len(cells) == 2 && cells[0] == "quantity":
				inNumbers = true
				continue
			case inNumbers && len(cells) == 2 && !strings.HasPrefix(cells[0], "---"):
				if len(out) == first {
					t.Fatalf("%s: numbers table before any command: %q", file, line)
				}
				out[len(out)-1].checks = append(out[len(out)-1].checks, [2]string{cells[0], cells[1]})
				continue
			case len(cells) != 2:
				inNumbers = false
			}
			m := re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			c := galleryCommand{args: strings.Fields(m[1])}
			if c.args[0] == "curve" && curveChecked(c.args[1:]) {
				continue
			}
			if strings.Contains(line, "VIOLATION") || strings.Contains(line, "exits 1") {
				c.exit = exitViolation
			}
			c.slow = strings.Contains(line, "# slow")
			if len(cells) == 5 {
				c.checks = append(c.checks, [2]string{"ε_lb", cells[2]}, [2]string{"upper bound", cells[3]}, [2]string{"verdict", cells[4]})
			}
			out = append(out, c)
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d gallery commands found", len(out))
	}
	return out
}

// curveChecked reports whether args (after "curve") are one of the
// commands TestReadmeCurveSection runs and checks.
func curveChecked(args []string) bool {
	for _, c := range readmeCurveChecks {
		if strings.Join(c.args, " ") == strings.Join(args, " ") {
			return true
		}
	}
	return false
}

// tableCells splits a Markdown table row into trimmed cells (nil for any
// other line).
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	var cells []string
	for _, c := range strings.Split(line[1:len(line)-1], "|") {
		cells = append(cells, strings.TrimSpace(c))
	}
	return cells
}

// runGallery runs the gallery's commands from the repository root, with
// every output file redirected to a temporary directory, and checks the
// exit code and every number the documents quote.
func runGallery(t *testing.T, slow bool) {
	cmds := galleryCommands(t)
	out := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir("../.."); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	ran, checked := 0, 0
	for n, c := range cmds {
		if c.slow != slow {
			continue
		}
		if strings.Contains(strings.Join(c.args, " "), "examples/pytorch/") && !havePython(t, "torch") {
			t.Logf("%v: skipped, no /usr/bin/python3 with torch", c.args)
			continue
		}
		args := append([]string(nil), c.args...)
		for k := 1; k < len(args); k++ {
			switch args[k-1] {
			case "--plot", "--json", "--csv", "--html":
				args[k] = filepath.Join(out, filepath.Base(args[k]))
			}
		}
		doc := filepath.Join(out, fmt.Sprintf("gallery-%d.json", n))
		if args[0] == "run" {
			args = append(args, "--quiet", "--json", doc)
		}
		_, errs, code := runCLI(t, args...)
		if code != c.exit {
			t.Errorf("%v: exit %d, the documents promise %d (stderr %q)", c.args, code, c.exit, errs)
		}
		ran++
		if len(c.checks) == 0 {
			continue
		}
		if args[0] != "run" {
			t.Fatalf("%v: numbers are checked for 'audit run' commands only", c.args)
		}
		rep := readReport(t, doc)
		for _, ck := range c.checks {
			if err := checkQuoted(rep, ck[0], ck[1]); err != nil {
				t.Errorf("documents, %v: %s: %v", c.args, ck[0], err)
			}
			checked++
		}
	}
	t.Logf("ran %d gallery commands, checked %d quoted numbers", ran, checked)
}

func TestGalleryCommands(t *testing.T) {
	testutil.Slow(t)
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	runGallery(t, false)
}

// galleryReport is the part of a report the quoted numbers come from.
type galleryReport struct {
	Verdict    string   `json:"verdict"`
	Violations []string `json:"violations"`
	Headline   int      `json:"headline"`
	Epsilon    struct {
		Epsilon float64 `json:"epsilon"`
	} `json:"epsilon"`
	Points []struct {
		Point struct {
			Label string `json:"label"`
		} `json:"point"`
		Region struct {
			Epsilon float64 `json:"epsilon"`
		} `json:"region"`
		GDP struct {
			Mu float64 `json:"mu"`
		} `json:"gdp"`
		Exact        *float64 `json:"exact_epsilon"`
		TestAccuracy *float64 `json:"test_accuracy"`
		Claims       []struct {
			Covered        bool    `json:"covered"`
			EpsilonAtDelta float64 `json:"epsilon_at_delta"`
		} `json:"claims"`
	} `json:"points"`
}

func readReport(t *testing.T, path string) galleryReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Report galleryReport `json:"report"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Report
}

var quotedNumber = regexp.MustCompile(`-?[0-9][0-9,]*(\.[0-9]+)?`)

// checkQuoted compares a quoted cell with the report. Quantities: "ε_lb"
// (the headline), "ε_lb at L", "μ_lb at L", "exact ε at L", "test
// accuracy at L", "upper bound" (the headline release's first claim that
// speaks about it; the last release's when every release is tested; "—"
// when no claim speaks about any release), "upper bound at L", "largest
// ε_lb" (quoted "x (L)"), "headline release", "verdict" and "refuted pair"
// (quoted "(ε, δ)", which the report's first violation must name). A
// number agrees when the report's value rounds to it at the number of
// decimals quoted.
func checkQuoted(r galleryReport, quantity, cell string) error {
	point := func(label string) (int, error) {
		for k, p := range r.Points {
			if p.Point.Label == label {
				return k, nil
			}
		}
		return 0, fmt.Errorf("no release point %q", label)
	}
	claim := func(k int) (float64, error) {
		for _, c := range r.Points[k].Claims {
			if c.Covered {
				return c.EpsilonAtDelta, nil
			}
		}
		return 0, fmt.Errorf("no claim speaks about %s", r.Points[k].Point.Label)
	}
	quantity = strings.ReplaceAll(quantity, "`", "")
	name, label, _ := strings.Cut(quantity, " at ")
	switch {
	case quantity == "verdict":
		if !strings.Contains(cell, r.Verdict) {
			return fmt.Errorf("quoted %q, the report says %q", cell, r.Verdict)
		}
		return nil
	case quantity == "refuted pair":
		if len(r.Violations) == 0 {
			return fmt.Errorf("quoted %q, the report refutes nothing", cell)
		}
		if !strings.Contains(r.Violations[0], "(ε, δ) = "+strings.Trim(cell, "`")+" refuted") {
			return fmt.Errorf("quoted %q, the report says %q", cell, r.Violations[0])
		}
		return nil
	case quantity == "headline release":
		if r.Headline < 0 {
			return fmt.Errorf("the report rests on every release (Bonferroni), not one")
		}
		if got := r.Points[r.Headline].Point.Label; !strings.Contains(cell, got) {
			return fmt.Errorf("quoted %q, the report's headline is at %q", cell, got)
		}
		return nil
	case quantity == "largest ε_lb":
		best := 0
		for k, p := range r.Points {
			if p.Region.Epsilon > r.Points[best].Region.Epsilon {
				best = k
			}
		}
		if !strings.Contains(cell, "("+r.Points[best].Point.Label+")") {
			return fmt.Errorf("quoted %q, the largest is at %q", cell, r.Points[best].Point.Label)
		}
		return agrees(cell, r.Points[best].Region.Epsilon)
	case quantity == "ε_lb":
		return agrees(cell, r.Epsilon.Epsilon)
	case quantity == "upper bound" && cell == "—":
		for k, p := range r.Points {
			if _, err := claim(k); err == nil {
				return fmt.Errorf("quoted no upper bound, the report has one at %s", p.Point.Label)
			}
		}
		return nil
	case quantity == "upper bound":
		h := r.Headline
		if h < 0 { // every release tested (Bonferroni): the last one's
			h = len(r.Points) - 1
		}
		v, err := claim(h)
		if err != nil {
			return err
		}
		return agrees(cell, v)
	}
	k, err := point(label)
	if err != nil {
		return err
	}
	p := r.Points[k]
	switch name {
	case "ε_lb":
		return agrees(cell, p.Region.Epsilon)
	case "μ_lb":
		return agrees(cell, p.GDP.Mu)
	case "exact ε":
		if p.Exact == nil {
			return fmt.Errorf("no exact ε in the report")
		}
		return agrees(cell, *p.Exact)
	case "test accuracy":
		if p.TestAccuracy == nil {
			return fmt.Errorf("no test accuracy in the report")
		}
		return agrees(cell, *p.TestAccuracy)
	case "upper bound":
		v, err := claim(k)
		if err != nil {
			return err
		}
		return agrees(cell, v)
	}
	return fmt.Errorf("unknown quantity %q", quantity)
}

// agrees reports whether v rounds to the first number of cell.
func agrees(cell string, v float64) error {
	s := quotedNumber.FindString(cell)
	if s == "" {
		return fmt.Errorf("no number in %q", cell)
	}
	q, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		return err
	}
	decimals := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		decimals = len(s) - i - 1
	}
	if q == 0 && decimals == 0 && v != 0 {
		return fmt.Errorf("quoted 0, the report says %g", v)
	}
	scale := math.Pow(10, float64(decimals))
	if math.Round(v*scale) != math.Round(q*scale) {
		return fmt.Errorf("quoted %s, the report says %.*f", s, decimals+2, v)
	}
	return nil
}
