package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The one-run scenarios of testdata/tight (gradient canaries in the canary
// design), run whole (10⁴ canaries cost well under a second each): exit 0,
// the theorem's add/remove bound of one canary tested, and the tightness
// the issue asks of them. The full-batch floors (0.45 of ε, 0.65 of μ)
// held on 57 of 61 seeds (100–160; means 0.54 and 0.73), the Poisson one
// (0.3) on every one of seeds 1–8 (least 0.38): these files' seeds meet
// them, and a change that weakens the statistic or the accountant would
// not. DP-HMC's and DP-penalty's floors are ε_lb > 0 with the tightness
// shown.
func TestOneRunTightScenarios(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file           string
		epsRatio, muRa float64
		readmeRow      string // the README's row of the tight-audit table
	}{
		{"dp-sgld-full-onerun", 0.45, 0.65, "| DP-SGLD, full batch |"},
		{"dp-sgld-poisson-onerun", 0.3, 0, "| DP-SGLD, Poisson (digits constants) |"},
		{"dp-hmc-onerun", 1e-9, 1e-9, "| DP-HMC |"},
		{"dp-penalty-onerun", 1e-9, 1e-9, "| DP-penalty |"},
	} {
		t.Run(c.file, func(t *testing.T) {
			out, errs, code := runCLI(t, "run", filepath.Join("..", "..", "testdata", "tight", c.file+".yaml"),
				"--json", "-", "--quiet", "--no-checkpoint")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var doc struct {
				Report struct {
					Verdict  string `json:"verdict"`
					Canaries struct {
						Kind     string `json:"kind"`
						Canaries int    `json:"canaries"`
					} `json:"canaries"`
					Epsilon struct {
						Epsilon float64 `json:"epsilon"`
					} `json:"epsilon"`
					Tightness *struct {
						Epsilon      float64  `json:"epsilon"`
						EpsilonClaim string   `json:"epsilon_claim"`
						Mu           *float64 `json:"mu"`
					} `json:"tightness"`
				} `json:"report"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			r := doc.Report
			if r.Canaries.Kind != "gradient" || r.Canaries.Canaries != 10000 {
				t.Errorf("canaries %+v, want 10000 of kind gradient", r.Canaries)
			}
			if r.Verdict != "not refuted" {
				t.Errorf("verdict %q, want not refuted", r.Verdict)
			}
			tt := r.Tightness
			if tt == nil {
				t.Fatalf("no tightness (ε_lb %g): the theorem's bound of one canary is missing", r.Epsilon.Epsilon)
			}
			t.Logf("ε_lb %.4f, ε_lb/ε_ub %.4f (%s), μ_lb/μ %v", r.Epsilon.Epsilon, tt.Epsilon, tt.EpsilonClaim, tt.Mu)
			if tt.Epsilon < c.epsRatio {
				t.Errorf("ε_lb/ε_ub = %.4f, want ≥ %g", tt.Epsilon, c.epsRatio)
			}
			if c.muRa > 0 && (tt.Mu == nil || *tt.Mu < c.muRa) {
				t.Errorf("μ_lb/μ = %v, want ≥ %g", tt.Mu, c.muRa)
			}
			// The README's one-run cell states these ratios.
			cell := fmt.Sprintf("| %.2f |", tt.Epsilon)
			if tt.Mu != nil {
				cell = fmt.Sprintf("| %.2f, %.2f |", tt.Epsilon, *tt.Mu)
			}
			row := ""
			for _, l := range strings.Split(string(readme), "\n") {
				if strings.HasPrefix(l, c.readmeRow) {
					row = l
				}
			}
			if !strings.Contains(row, cell) {
				t.Errorf("README's row %q lacks the one-run cell %q", row, cell)
			}
		})
	}
}

// audit bounds on a one-run gradient-canary scenario lists the add/remove
// bounds of one canary, among them the exact 0.75-GDP composition
// (ε = 3.1468 at δ = 1e-5, the closed form of the μ-GDP profile), and says
// what the datasets are.
func TestOneRunBounds(t *testing.T) {
	out, errs, code := runCLI(t, "bounds", filepath.Join("..", "..", "testdata", "tight", "dp-sgld-full-onerun.yaml"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"inert (10 records), to which the canary design adds its canaries", "add/remove (one canary, n", "3.1468", "Gaussian mechanism"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit bounds lacks %q:\n%s", want, out)
		}
	}
}
