package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canaryUtilityOutputs runs testdata/utility/dp-hmc-canaries-stuck.yaml
// (with extra flags) and returns its text, JSON report, CSV rows and HTML.
func canaryUtilityOutputs(t *testing.T, tag string, flags ...string) (text string, rep canaryUtilityReport, rows []map[string]string, html string) {
	t.Helper()
	dir := t.TempDir()
	j, c, h := filepath.Join(dir, tag+".json"), filepath.Join(dir, tag+".csv"), filepath.Join(dir, tag+".html")
	args := append([]string{"run", "../../testdata/utility/dp-hmc-canaries-stuck.yaml", "--quiet", "--no-checkpoint", "--json", j, "--csv", c, "--html", h}, flags...)
	out, errs, code := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("%s: exit %d %s", tag, code, errs)
	}
	var doc struct {
		Report canaryUtilityReport `json:"report"`
	}
	b, err := os.ReadFile(j)
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("%s: JSON %v", tag, err)
	}
	f, err := os.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: CSV %v, %d records", tag, err, len(recs))
	}
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, name := range recs[0] {
			row[name] = r[i]
		}
		rows = append(rows, row)
	}
	hb, err := os.ReadFile(h)
	if err != nil {
		t.Fatal(err)
	}
	return out, doc.Report, rows, string(hb)
}

// canaryUtilityReport is what the test reads of the JSON report.
type canaryUtilityReport struct {
	Warnings []string `json:"warnings"`
	Canaries *struct {
		Runs int `json:"runs"`
	} `json:"canaries"`
	Points []struct {
		Utility *struct {
			Proposals           int      `json:"proposals"`
			Accepted            int      `json:"accepted"`
			AcceptanceRate      *float64 `json:"acceptance_rate"`
			ProposalsSinceStart int      `json:"proposals_since_start"`
			BarelyMoves         bool     `json:"barely_moves"`
		} `json:"utility"`
	} `json:"points"`
}

// A DP-HMC chain that rejects every proposal, audited in the canary
// design, gets the utility rows and the "barely moves" warnings in the
// text, the JSON, the CSV and the HTML, as the multi-run design does; its
// twin with the step of testdata/dp-hmc-gauss.yaml moves (released at
// every iteration, where single intervals accept none of their one
// proposal) and gets no warning.
func TestCanaryDesignBarelyMoves(t *testing.T) {
	text, rep, rows, html := canaryUtilityOutputs(t, "stuck")
	if rep.Canaries == nil || len(rep.Points) != 5 || len(rows) != 5 {
		t.Fatalf("stuck: not a canary report of 5 releases: %+v, %d CSV rows", rep, len(rows))
	}
	for k, p := range rep.Points {
		u := p.Utility
		if u == nil || u.Proposals != 4 || u.Accepted != 0 || u.AcceptanceRate == nil || !u.BarelyMoves || u.ProposalsSinceStart != 4*(k+1) {
			t.Errorf("stuck, release %d: utility %+v", k, u)
		}
		if rows[k]["barely_moves"] != "true" || rows[k]["acceptance_rate"] != "0" || rows[k]["iterations_since_previous"] != "4" {
			t.Errorf("stuck, CSV row %d: %v", k, rows[k])
		}
	}
	if len(rep.Warnings) != 2 || !strings.Contains(rep.Warnings[1], "the chain barely moves at 5 of 5 releases") {
		t.Errorf("stuck: warnings %q", rep.Warnings)
	}
	for _, want := range []string{"WARNING: the release the headline rests on barely moves", "WARNING: the chain barely moves at 5 of 5 releases",
		"0 of 4 proposals accepted before it", "Utility per release (counts of the design's one run)", "acceptance rate 0 at every release"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) { // lines are wrapped
			t.Errorf("stuck: the text lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(html, `<p class="warning">Warning: the chain barely moves`) || !strings.Contains(html, "<td>BARELY</td>") {
		t.Error("stuck: the HTML lacks the warning or the utility rows")
	}

	text, rep, rows, html = canaryUtilityOutputs(t, "moving", "--set", "sampler.dp_hmc.step=0.03", "--set", "release.every=1")
	none := 0
	for k, p := range rep.Points {
		u := p.Utility
		if u == nil || u.Proposals != 1 || u.BarelyMoves || rows[k]["barely_moves"] != "false" {
			t.Errorf("moving, release %d: utility %+v, CSV %v", k, u, rows[k])
			continue
		}
		if u.Accepted == 0 {
			none++
		}
	}
	// Intervals that accepted nothing, which the rule on the interval
	// alone would flag.
	if none == 0 || len(rep.Warnings) != 0 || strings.Contains(text, "WARNING") || strings.Contains(html, `class="warning"`) || strings.Contains(html, "<td>BARELY</td>") {
		t.Errorf("moving: %d intervals without acceptance, warnings %q", none, rep.Warnings)
	}
	if !strings.Contains(text, "acceptance since start") {
		t.Errorf("moving: the text lacks the acceptance since the start:\n%s", text)
	}
}
