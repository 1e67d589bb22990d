package main

import (
	"encoding/json"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// utilityScenario is ULA on the two-dimensional Gauss model, released at
// iterations 25 and 50, as the built-in sampler or as the program
// testdata/programs/ula_gauss.py (the same chain in NumPy).
func utilityScenario(sampler string) string {
	return `name: utility
seed: 5
model:
  gauss: {prior_sd: 10, cov: [1, 0, 0, 1]}
data:
  synthetic_gauss: {n: 50, theta_star: [0.5, -0.5], seed: 11}
neighbour: {adjacency: replace-one, index: 0, record: {x: [6, 6], y: 0}}
sampler:
` + sampler + `
init: {theta: [0, 0]}
release: {mode: snapshots, at: [25, 50]}
audit:
  trials: 2000
  split: {train: 0.5, eval: 0.5}
  features: [theta]
  attacks: [threshold]
  delta: 1.0e-5
  confidence: 0.95
`
}

// utilityPoint is what the test reads of a report's point.
type utilityPoint = struct {
	Point   mechanisms.ReleasePoint `json:"point"`
	Utility *audit.Utility          `json:"utility"`
}

// runUtility runs a scenario (with extra flags) and returns its report's
// points.
func runUtility(t *testing.T, dir, name, yml string, flags ...string) []utilityPoint {
	t.Helper()
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".json")
	if _, errs, code := runCLI(t, append([]string{"run", path, "--quiet", "--no-checkpoint", "--json", out}, flags...)...); code != 0 {
		t.Fatalf("%s: exit %d %s", name, code, errs)
	}
	return readUtility(t, out)
}

// readUtility reads the points of a report written with --json.
func readUtility(t *testing.T, out string) []utilityPoint {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Report struct {
			Points []utilityPoint `json:"points"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Report.Points
}

// A program sampler on a Gaussian model gets the utility rows a built-in
// sampler gets: per release, the iterations since the previous one (25,
// from the program's "iteration K" labels or its handshake's iterations;
// unknown, not 1, with bare labels), the distance to the exact posterior
// on D and on D′ over the same coordinates and draws, and the "barely
// moves" verdict. The figures of the same chain agree within sampling
// error: per coordinate, the mean error (in posterior SDs) has standard
// error sd_ratio/√n_side and the SD ratio about sd_ratio/√(2n_side), so
// the two runs' difference has standard errors √2 and 1 times
// sd_ratio/√n_side; they may differ by 5 of those (n_side ≈ 1000: every
// run on that side). audit analyze on the built-in run's releases, with
// the scenario, gives the same rows and figures.
func TestProgramUtilityMatchesBuiltin(t *testing.T) {
	testutil.Slow(t) // several PyTorch or NumPy processes: tens of seconds of CPU
	requirePython(t)
	dir := t.TempDir()
	script, err := filepath.Abs("testdata/programs/ula_gauss.py")
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, "rel")
	builtin := runUtility(t, dir, "builtin", utilityScenario("  ula: {gamma: 0.01, iterations: 50}"), "--save-releases", prefix)
	// audit analyze on the same releases, with the scenario: the same rows,
	// the same figures (the same runs, split by their trial column).
	an := filepath.Join(dir, "analyze.json")
	if _, errs, code := runCLI(t, "analyze", prefix+"-D.csv", prefix+"-DPRIME.csv", "--scenario", filepath.Join(dir, "builtin.yaml"), "--json", an); code != 0 {
		t.Fatalf("analyze: exit %d %s", code, errs)
	}
	for k, a := range readUtility(t, an) {
		// Samples carry no sampler counters: the rest is the run's.
		au, bu := a.Utility, builtin[k].Utility
		if au == nil || au.Iterations != bu.Iterations || au.BarelyMoves != bu.BarelyMoves || !reflect.DeepEqual(au.Posterior, bu.Posterior) {
			t.Errorf("analyze, release %d: utility %+v, the run's %+v", k, a.Utility, builtin[k].Utility)
		}
	}
	prog := func(mode string) string {
		return `  program:
    command: [/usr/bin/python3, ` + script + `, "0.01", "50", "25,50", ` + mode + `]
    timeout: 60s`
	}
	for _, mode := range []string{"labels", "handshake", "none"} {
		p := runUtility(t, dir, "program-"+mode, utilityScenario(prog(mode)))
		if len(p) != 2 || len(builtin) != 2 {
			t.Fatalf("%s: %d and %d points", mode, len(p), len(builtin))
		}
		for k := range p {
			bu, pu := builtin[k].Utility, p[k].Utility
			if bu == nil || pu == nil {
				t.Fatalf("%s, release %d: utility %v / %v", mode, k, bu, pu)
			}
			wantIters := 25
			if mode == "none" {
				wantIters = 0 // unknown
			}
			if bu.Iterations != 25 || pu.Iterations != wantIters {
				t.Errorf("%s, release %d: iterations since previous %d (built-in %d), want %d", mode, k, pu.Iterations, bu.Iterations, wantIters)
			}
			if pu.BarelyMoves != bu.BarelyMoves || len(pu.Posterior) != 2 || len(bu.Posterior) != 2 {
				t.Fatalf("%s, release %d: barely moves %v/%v, %d/%d posterior rows", mode, k, pu.BarelyMoves, bu.BarelyMoves, len(pu.Posterior), len(bu.Posterior))
			}
			for s := range pu.Posterior {
				pf, bf := pu.Posterior[s], bu.Posterior[s]
				if pf.Side != bf.Side || pf.Draws != bf.Draws || len(pf.Coords) != 2 || len(bf.Coords) != 2 {
					t.Errorf("%s, release %d: rows %+v vs %+v", mode, k, pf, bf)
					continue
				}
				n := float64(pf.Draws)
				for j := range pf.Coords {
					se := bf.SDRatio[j] / math.Sqrt(n)
					if d := math.Abs(pf.MeanError[j] - bf.MeanError[j]); d > 5*math.Sqrt2*se {
						t.Errorf("%s, release %d, %s, coord %d: mean error %.4f vs built-in %.4f (SE %.3g)", mode, k, pf.Side, j, pf.MeanError[j], bf.MeanError[j], se)
					}
					if d := math.Abs(pf.SDRatio[j] - bf.SDRatio[j]); d > 5*se {
						t.Errorf("%s, release %d, %s, coord %d: SD ratio %.4f vs built-in %.4f", mode, k, pf.Side, j, pf.SDRatio[j], bf.SDRatio[j])
					}
				}
			}
		}
		if mode == "labels" {
			for k, pt := range p {
				if want := (mechanisms.ReleasePoint{Iteration: 25 * (k + 1), Label: builtin[k].Point.Label}); pt.Point != want {
					t.Errorf("release %d: %+v, want %+v", k, pt.Point, want)
				}
			}
		}
	}
}
