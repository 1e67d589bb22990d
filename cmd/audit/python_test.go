package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/stats"

	"github.com/mcmcaudit/mcmcaudit/internal/samples"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// requirePython skips unless Debian's python3 with NumPy is installed (and
// fails instead when MCMCAUDIT_REQUIRE_PYTHON=1, as in CI).
func requirePython(t *testing.T, modules ...string) {
	t.Helper()
	script := "import " + strings.Join(append([]string{"numpy"}, modules...), ", ")
	if err := exec.Command("/usr/bin/python3", "-c", script).Run(); err != nil {
		if os.Getenv("MCMCAUDIT_REQUIRE_PYTHON") == "1" {
			t.Fatalf("/usr/bin/python3 with %s is required: %v", script, err)
		}
		t.Skipf("no /usr/bin/python3 with %s: %v", script, err)
	}
}

// auditDoc is the part of a run's JSON these tests read.
type auditDoc struct {
	Report struct {
		Points []struct {
			Region  stats.Estimate `json:"region"`
			GDP     stats.Estimate `json:"gdp"`
			Attacks []struct {
				Rule    attacks.Rule `json:"rule"`
				GDPRule attacks.Rule `json:"gdp_rule"`
			} `json:"attacks"`
			Best    int `json:"best"`
			BestGDP int `json:"best_gdp"`
		} `json:"points"`
		TrainRuns int    `json:"train_runs"`
		Verdict   string `json:"verdict"`
	} `json:"report"`
}

func readDoc(t *testing.T, path string) auditDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d auditDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// within reports whether count k of n lies in the two-sided 99.9%
// Clopper–Pearson interval of the rate observed as k0 of n0.
func within(t *testing.T, k, n, k0, n0 int) bool {
	ref, err := stats.ClopperPearson(k0, n0, 0.999)
	if err != nil {
		t.Fatal(err)
	}
	// The count's own 99.9% interval must meet the reference interval.
	got, _ := stats.ClopperPearson(k, n, 0.999)
	return got.Lo <= ref.Hi && ref.Lo <= got.Hi
}

// The NumPy Gaussian mechanism of examples/python (μ = 1, 20,000 trials,
// δ = 1e-5) audits like the built-in gaussian_query at the same trial count:
// the built-in run's own region and GDP rules, applied to the program's
// evaluation runs, give error counts within Clopper–Pearson error of the
// built-in's (99.9% two-sided intervals meet), hence ε_lb and μ_lb within
// that error; neither exceeds the truth (ε(1e-5) = 4.3772, μ = 1). With
// μ = 0 the program's audit reports ε_lb = 0.
func TestNumPyGaussianMatchesBuiltin(t *testing.T) {
	testutil.Slow(t)
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	requirePython(t)
	dir := t.TempDir()
	builtin, prog := filepath.Join(dir, "builtin.json"), filepath.Join(dir, "program.json")
	if _, errs, code := runCLI(t, "run", "../../testdata/gaussian-mechanism.yaml", "--trials", "20000", "--quiet", "--json", builtin); code != 0 {
		t.Fatalf("built-in: exit %d %s", code, errs)
	}
	prefix := filepath.Join(dir, "rel")
	if _, errs, code := runCLI(t, "run", "../../examples/python/gaussian.yaml", "--trials", "20000", "--quiet", "--json", prog, "--save-releases", prefix); code != 0 {
		t.Fatalf("program: exit %d %s", code, errs)
	}
	b, p := readDoc(t, builtin), readDoc(t, prog)
	bp, pp := b.Report.Points[0], p.Report.Points[0]
	t.Logf("built-in: ε_lb %.4f (%d/%d, %d/%d), μ_lb %.4f; program: ε_lb %.4f (%d/%d, %d/%d), μ_lb %.4f",
		bp.Region.Epsilon, bp.Region.Counts.FP, bp.Region.Counts.Negatives, bp.Region.Counts.FN, bp.Region.Counts.Positives, bp.GDP.Mu,
		pp.Region.Epsilon, pp.Region.Counts.FP, pp.Region.Counts.Negatives, pp.Region.Counts.FN, pp.Region.Counts.Positives, pp.GDP.Mu)
	for _, e := range []stats.Estimate{bp.Region, pp.Region} {
		if e.Epsilon > 4.3772 {
			t.Errorf("ε_lb %.4f above the truth 4.3772", e.Epsilon)
		}
	}
	if bp.GDP.Mu > 1 || pp.GDP.Mu > 1 {
		t.Errorf("μ_lb above the truth 1: built-in %.4f, program %.4f", bp.GDP.Mu, pp.GDP.Mu)
	}
	// The program's evaluation runs, scored by the built-in's rules.
	var scores [2][]float64 // by side
	for side, suffix := range []string{"-D.csv", "-DPRIME.csv"} {
		f, err := samples.ReadFile(context.Background(), prefix+suffix)
		if err != nil {
			t.Fatal(err)
		}
		for i, tr := range f.Trial {
			if tr >= p.Report.TrainRuns {
				scores[side] = append(scores[side], f.Rows[i][0])
			}
		}
	}
	for _, rc := range []struct {
		name string
		rule attacks.Rule
		ref  stats.Counts
		gdp  bool
	}{{"region", bp.Attacks[bp.Best].Rule, bp.Region.Counts, false}, {"GDP", bp.Attacks[bp.BestGDP].GDPRule, bp.GDP.Counts, true}} {
		var c stats.Counts
		for side, s := range scores {
			labels := make([]bool, len(s))
			for i := range labels {
				labels[i] = side == 1
			}
			sc := attacks.Count(rc.rule, s, labels)
			c.FP, c.Negatives, c.FN, c.Positives = c.FP+sc.FP, c.Negatives+sc.Negatives, c.FN+sc.FN, c.Positives+sc.Positives
		}
		if !within(t, c.FP, c.Negatives, rc.ref.FP, rc.ref.Negatives) || !within(t, c.FN, c.Positives, rc.ref.FN, rc.ref.Positives) {
			t.Errorf("%s rule %+v: program counts FP %d/%d, FN %d/%d; built-in FP %d/%d, FN %d/%d: beyond Clopper-Pearson error",
				rc.name, rc.rule, c.FP, c.Negatives, c.FN, c.Positives, rc.ref.FP, rc.ref.Negatives, rc.ref.FN, rc.ref.Positives)
		}
		var got, ref float64
		if rc.gdp {
			g, _ := stats.GDPBound(c, 1e-5, 0.95)
			got, ref = g.Mu, bp.GDP.Mu
		} else {
			g, _ := stats.RegionBound(c, 1e-5, 0.95)
			got, ref = g.Epsilon, bp.Region.Epsilon
		}
		t.Logf("%s rule on the program's runs: %.4f (built-in %.4f)", rc.name, got, ref)
	}

	// μ = 0: the same law on both sides.
	yml, _ := os.ReadFile("../../examples/python/gaussian.yaml")
	abs, _ := filepath.Abs("../../examples/python")
	zero := strings.Replace(string(yml), `--mu, "1"]`, `--mu, "0"]`+"\n    dir: "+abs, 1)
	zero = strings.Replace(zero, "claim: {gdp: 1}", "", 1)
	zpath := filepath.Join(dir, "zero.yaml")
	os.WriteFile(zpath, []byte(zero), 0o644)
	zjson := filepath.Join(dir, "zero.json")
	if _, errs, code := runCLI(t, "run", zpath, "--trials", "20000", "--quiet", "--json", zjson); code != 0 {
		t.Fatalf("μ = 0: exit %d %s", code, errs)
	}
	if z := readDoc(t, zjson).Report.Points[0]; z.Region.Epsilon != 0 {
		t.Errorf("μ = 0: ε_lb = %g, want 0", z.Region.Epsilon)
	}
}
