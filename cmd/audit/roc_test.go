package main

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rocReport runs a scenario with --json, --plot (SVG) and --html and
// returns the outputs and the descriptive figures at the release the
// headline rests on.
type rocReport struct {
	plot, page  string
	label       string
	auroc       float64
	tpr1, tpr01 float64
}

func runROCReport(t *testing.T, scenario string) rocReport {
	t.Helper()
	dir := t.TempDir()
	js, svg, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg"), filepath.Join(dir, "r.html")
	if _, errs, code := runCLI(t, "run", scenario, "--quiet", "--no-checkpoint", "--json", js, "--plot", svg, "--html", page); code != exitOK && code != exitViolation {
		t.Fatalf("%s: exit %d %s", scenario, code, errs)
	}
	var doc struct {
		Report struct {
			Headline int `json:"headline"`
			Points   []struct {
				Point struct {
					Label string `json:"label"`
				} `json:"point"`
				Descriptive struct {
					AUROC   float64 `json:"auroc"`
					TPRAt1  float64 `json:"tpr_at_fpr_1pct"`
					TPRAt01 float64 `json:"tpr_at_fpr_0.1pct"`
				} `json:"descriptive"`
			} `json:"points"`
		} `json:"report"`
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	h := doc.Report.Headline
	if h < 0 || h >= len(doc.Report.Points) {
		t.Fatalf("%s: headline %d", scenario, h)
	}
	p := doc.Report.Points[h]
	plot, _ := os.ReadFile(svg)
	html, _ := os.ReadFile(page)
	return rocReport{plot: string(plot), page: string(html), label: p.Point.Label,
		auroc: p.Descriptive.AUROC, tpr1: p.Descriptive.TPRAt1, tpr01: p.Descriptive.TPRAt01}
}

// svgRuns returns the text runs of an SVG written by the report package
// (each a group whose aria-label holds its text).
func svgRuns(svg string) []string {
	var all []string
	for _, m := range regexp.MustCompile(`<g class="text" aria-label="([^"]*)"`).FindAllStringSubmatch(svg, -1) {
		all = append(all, html.UnescapeString(m[1]))
	}
	return all
}

// svgText joins the text runs of an SVG, with spaces normalized.
func svgText(svg string) string {
	return strings.Join(strings.Fields(strings.Join(svgRuns(svg), " ")), " ")
}

// The --plot picture and the HTML page carry the ROC curve of the
// headline's attack at the headline's release, in either design (runs:
// sgld-interim, its evaluation runs; canaries: sgld-canaries, its
// canaries): log-log axes, labelled descriptive with no guarantee, the
// AUROC and the TPR at FPR 1% and 0.1% quoted with the numbers of the
// JSON's descriptive figures; the HTML has it in a section of its own
// whose SVG names the same numbers.
func TestROCCurveInPlotAndHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("two audits of a second each: skipped by -short")
	}
	for _, c := range []struct{ scenario, what string }{
		{"../../testdata/sgld-interim.yaml", "ROC of the threshold attack"},
		{"../../testdata/sgld-canaries.yaml", "ROC of the canary score ranking"},
	} {
		r := runROCReport(t, c.scenario)
		wants := []string{
			c.what + " at " + r.label + " — descriptive, no guarantee",
			"false-positive rate (log)", "true-positive rate (log)",
			fmt.Sprintf("AUROC %.4f", r.auroc), "descriptive — no guarantee, no confidence",
			fmt.Sprintf("TPR at FPR 1%% = %.4f", r.tpr1), fmt.Sprintf("TPR at FPR 0.1%% = %.4f", r.tpr01),
			"chance: TPR = FPR",
		}
		plot := svgText(r.plot)
		for _, want := range wants {
			if !strings.Contains(plot, want) {
				t.Errorf("%s: the --plot picture lacks %q:\n%s", c.scenario, want, plot)
			}
		}
		// The ε plot comes first, the ROC curve below it.
		if i, j := strings.Index(plot, "ε lower bound per release"), strings.Index(plot, c.what); i < 0 || j < i {
			t.Errorf("%s: the ROC curve is not below the ε plot", c.scenario)
		}
		sec := regexp.MustCompile(`(?s)<h2>ROC curve of the ε_lb attack — descriptive, no guarantee</h2>(.*?)</section>`).FindStringSubmatch(r.page)
		if sec == nil {
			t.Fatalf("%s: the HTML page has no ROC section", c.scenario)
		}
		if !strings.Contains(sec[1], `<div class="plot" id="roc"><svg`) {
			t.Errorf("%s: the ROC section has no inline SVG", c.scenario)
		}
		roc := svgText(sec[1])
		for _, want := range wants {
			if !strings.Contains(roc, want) {
				t.Errorf("%s: the HTML's ROC curve lacks %q:\n%s", c.scenario, want, roc)
			}
		}
		// The page's ε plot is the ε plot alone: one ROC curve in the page.
		if n := strings.Count(r.page, "false-positive rate (log)"); n != 1 {
			t.Errorf("%s: the ROC curve is drawn %d times in the page", c.scenario, n)
		}
	}
}
