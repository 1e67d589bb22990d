package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

type curveJSON struct {
	Params struct {
		N        int     `json:"n"`
		C        float64 `json:"c"`
		Eta      float64 `json:"eta"`
		EtaScale float64 `json:"eta_scale"`
		S        float64 `json:"s"`
		Delta    float64 `json:"delta"`
		XL       float64 `json:"xl"`
	} `json:"params"`
	Posterior struct {
		Applies bool    `json:"applies"`
		Epsilon float64 `json:"epsilon"`
		Reason  string  `json:"reason"`
	} `json:"posterior"`
	Rows []struct {
		Epoch        int     `json:"epoch"`
		EpsChernoff  float64 `json:"eps_chernoff"`
		EpsTail      float64 `json:"eps_tail"`
		EpsThreshold float64 `json:"eps_threshold"`
		EpsProfile   float64 `json:"eps_profile"`
		Err          struct {
			Profile float64 `json:"profile"`
		} `json:"err"`
		ProfileExact bool `json:"profile_exact"`
	} `json:"rows"`
}

func curveRun(t *testing.T, args ...string) curveJSON {
	t.Helper()
	out, errs, code := runCLI(t, append([]string{"curve"}, append(args, "--json", "-")...)...)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var r curveJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	return r
}

// The earlier Fig. 1 recipe: η = 1/s² at the Fig. 1 caption's
// parameters with c = 2e7. The curve rises to a peak inside the epoch
// range and falls again; its values at epoch 48 are those of a NumPy
// evaluation summing all 17,864,389 orders directly (Chernoff
// 34.670584719241148, exact tail 37.732638533030091).
func TestCurveAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	out, errs, code := runCLI(t, "curve", "--c", "2e7", "--eta-scale", "1")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	golden(t, "curve-fig1.stdout", out)

	r := curveRun(t, "--c", "2e7", "--eta-scale", "1")
	if len(r.Rows) != 70 || r.Rows[0].Epoch != 1 || r.Rows[69].Epoch != 70 {
		t.Fatalf("rows: %d, first epoch %d", len(r.Rows), r.Rows[0].Epoch)
	}
	if s := r.Params.S; math.Abs(r.Params.Eta*s*s-1) > 1e-12 {
		t.Errorf("η·s² = %g, want 1", r.Params.Eta*s*s)
	}
	peak := 0
	for i, row := range r.Rows {
		if row.EpsChernoff > r.Rows[peak].EpsChernoff {
			peak = i
		}
		if !(row.EpsChernoff <= row.EpsTail && row.EpsTail <= row.EpsThreshold && row.EpsThreshold <= row.EpsProfile) {
			t.Errorf("epoch %d: curves out of order: %+v", row.Epoch, row)
		}
	}
	first, top, last := r.Rows[0].EpsChernoff, r.Rows[peak].EpsChernoff, r.Rows[69].EpsChernoff
	if !(peak > 5 && peak < 64 && top > 30 && first < top/10 && last < top/10) {
		t.Errorf("no interior peak: first %g, peak %g at epoch %d, last %g", first, top, r.Rows[peak].Epoch, last)
	}
	row48 := r.Rows[47]
	if math.Abs(row48.EpsChernoff-34.670584719241148) > 1e-10 || math.Abs(row48.EpsTail-37.732638533030091) > 1e-10 {
		t.Errorf("epoch 48: Chernoff %.15g, tail %.15g", row48.EpsChernoff, row48.EpsTail)
	}
	if !r.Posterior.Applies || !(r.Posterior.Epsilon > 0 && r.Posterior.Epsilon < 0.5) {
		t.Errorf("posterior = %+v", r.Posterior)
	}
}

// --c-max-private picks the library's largest private c, and the posterior
// ε reported with it is the requested one.
func TestCurveCMaxPrivate(t *testing.T) {
	r := curveRun(t, "--c-max-private", "0.5", "--epochs", "24:26")
	dom := closedform.LinRegDomain{N: 17864389, Alpha: 2, Beta: 1, Gamma1: 0.1, XH: 1.8, XL: 0.9}
	want, err := dom.MaxPrivateC(0.5, 1e-3, closedform.A1Conservative)
	if err != nil {
		t.Fatal(err)
	}
	if r.Params.C != want || math.Abs(r.Posterior.Epsilon-0.5) > 1e-12 {
		t.Errorf("c = %.17g (want %.17g), posterior ε = %.17g", r.Params.C, want, r.Posterior.Epsilon)
	}
	if len(r.Rows) != 3 || !(r.Rows[1].EpsChernoff > 1e4) {
		t.Errorf("rows %+v", r.Rows)
	}
	printed := curveRun(t, "--c-max-private", "0.5", "--epochs", "1:1", "--lemma-a1", "printed")
	if !(printed.Params.C > r.Params.C) {
		t.Errorf("printed reading c = %g not above conservative %g", printed.Params.C, r.Params.C)
	}
}

// A smaller configuration where the posterior is (1, 0.001)-DP and SGLD
// in the interim region is far from it; epoch 0 is the prior draw and every
// bound is 0 there.
func TestCurveSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	args := []string{"curve", "--n", "20000", "--c-max-private", "1", "--epochs", "0:30"}
	out, errs, code := runCLI(t, args...)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	golden(t, "curve-small.stdout", out)
	r := curveRun(t, args[1:]...)
	if r.Rows[0].Epoch != 0 || r.Rows[0].EpsProfile != 0 {
		t.Errorf("epoch 0 row: %+v", r.Rows[0])
	}
	if !r.Posterior.Applies || math.Abs(r.Posterior.Epsilon-1) > 1e-12 {
		t.Errorf("posterior: %+v", r.Posterior)
	}
	best := 0.0
	for _, row := range r.Rows {
		best = math.Max(best, row.EpsProfile)
	}
	if !(best > 10) {
		t.Errorf("largest ε_profile %g, want > 10", best)
	}
	tiny := curveRun(t, "--n", "30", "--c", "3", "--epochs", "1:2")
	if tiny.Posterior.Applies || !strings.Contains(tiny.Posterior.Reason, "n >") {
		t.Errorf("n = 30 posterior: %+v", tiny.Posterior)
	}
}

func TestCurveFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "c.csv")
	jsonPath := filepath.Join(dir, "c.json")
	svgPath := filepath.Join(dir, "c.svg")
	pngPath := filepath.Join(dir, "c.png")
	out, errs, code := runCLI(t, "curve", "--n", "5000", "--c", "3e5", "--epochs", "1:20",
		"--csv", csvPath, "--json", jsonPath, "--plot", svgPath)
	if code != 0 || errs != "" || !strings.Contains(out, "ε_profile") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 21 || recs[0][0] != "epoch" || recs[0][4] != "eps_profile" || recs[20][0] != "20" {
		t.Errorf("CSV: %v records, err %v, header %v", len(recs), err, recs[0])
	}
	b, _ := os.ReadFile(jsonPath)
	var r curveJSON
	if err := json.Unmarshal(b, &r); err != nil || len(r.Rows) != 20 || r.Params.N != 5000 {
		t.Errorf("JSON file: %v, %d rows", err, len(r.Rows))
	}
	if svg, _ := os.ReadFile(svgPath); !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("not an SVG file: %.60q", svg)
	}
	_, _, code = runCLI(t, "curve", "--n", "5000", "--c", "3e5", "--epochs", "1:20", "--plot", pngPath, "--log-scale")
	if png, _ := os.ReadFile(pngPath); code != 0 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("exit %d; not a PNG file: %.8q", code, png)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("files left in %s: %v", dir, entries)
	}
}

// Bad input: one line on stderr naming the flag and its range, exit 2,
// nothing on stdout, no file written.
func TestCurveBadInput(t *testing.T) {
	dir := t.TempDir()
	plotPath := filepath.Join(dir, "p.svg")
	base := []string{"curve", "--n", "1000"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	cases := []struct {
		args []string
		want string
	}{
		{with(), "--c, --c-max-private or --solve-c is required"},
		{with("--c", "1", "--c-max-private", "0.5"), "--c, --c-max-private and --solve-c are exclusive"},
		{with("--c", "1", "--solve-c", "--eps-target", "3", "--at-epoch", "2"), "--c, --c-max-private and --solve-c are exclusive"},
		{with("--c", "1", "--eta", "1e-6", "--eta-scale", "1"), "--eta, --eta-scale and --solve-eta are exclusive"},
		{with("--c", "1", "--eta", "1e-6", "--solve-eta", "--eps-target", "3", "--at-epoch", "2"), "--eta, --eta-scale and --solve-eta are exclusive"},
		{with("--solve-c", "--at-epoch", "5"), "--eps-target is required with --solve-c or --solve-eta"},
		{with("--solve-c", "--eps-target", "5"), "--at-epoch is required with --solve-c or --solve-eta"},
		{with("--solve-eta", "--c-max-private", "1", "--eps-target", "5", "--at-epoch", "3"), "--solve-eta needs --c"},
		{with("--c", "1", "--eps-target", "5"), "--eps-target: not used without --solve-c or --solve-eta"},
		{with("--solve-c", "--eps-target", "5", "--at-epoch", "0"), `--at-epoch: invalid value "0": must be an integer in [1,`},
		{with("--solve-c", "--eps-target", "5", "--at-epoch", "3", "--quantity", "exact"), "--quantity: must be chernoff, tail, threshold or profile"},
		// n = 5: the variances alone give ε_profile ≈ 0.55 as c → 0.
		{[]string{"curve", "--n", "5", "--eta", "0.05", "--solve-c", "--eps-target", "1e-6", "--at-epoch", "3", "--quantity", "profile"},
			"--solve-c: target not reachable: profile at epoch 3 is already"},
		{with("--c", "1", "--solve-eta", "--eps-target", "1e6", "--at-epoch", "3"), "--solve-eta: target not reachable: the largest chernoff at epoch 3"},
		{with("--c", "1", "--gamma2", "1.2"), "--gamma2: not used without --construct or --n-min"},
		{[]string{"curve", "--construct", "--eps-target", "38"}, "--eps-posterior is required with --construct"},
		{[]string{"curve", "--construct", "--eps-posterior", "0.5", "--eps-target", "38", "--n", "5"}, "--n: not used with --construct"},
		{[]string{"curve", "--construct", "--eps-posterior", "0.5", "--eps-target", "38", "--gamma2", "1.05"}, "--gamma2: must be in (1 + γ1, 1.5) = (1.1, 1.5), got 1.05"},
		{[]string{"curve", "--construct", "--eps-posterior", "0.5", "--eps-target", "38", "--xh", "1"}, "--xh: the domain of eq. 5 needs x_h²β > 3"},
		{[]string{"curve", "--construct", "--eps-posterior", "0.5", "--eps-target", "38", "--gamma2", "1.11", "--plot", plotPath},
			"--plot: no curves, since no instance of the construction can be built: n_p ≈ 9.105e+25 exceeds 2^53"},
		{[]string{"curve", "--construct", "--n-min", "--eps-posterior", "0.5"}, "--construct and --n-min are exclusive"},
		{[]string{"curve", "--n-min", "--eps-posterior", "0.5", "--plot", plotPath}, "--plot: not used with --n-min"},
		{[]string{"curve", "--n-min", "--eps-posterior", "0.5", "--rho2", "0.2"}, "--rho2: must be in (0, γ1) = (0, 0.1)"},
		{[]string{"curve", "--n-min", "--eps-posterior", "0.5", "--rho3", "1.2"}, "--rho3: must be in (1, ρ1) = (1, 1.01)"},
		{[]string{"curve", "--n-min", "--eps-posterior", "0.5", "--beta", "0.5"}, "--beta: must be ≥ 3/x_h²"},
		{[]string{"curve", "--n-min"}, "--eps-posterior is required with --n-min"},
		{with("--c", "1", "--epochs", "1:10:0"), "--epochs: must be FROM:TO or FROM:TO:STEP"},
		{with("--c", "1", "--eta", "1"), "--eta: must be in (0, 2/s)"},
		{with("--c", "1", "--eta-scale", "1e20"), "--eta-scale: η = 1e+20/s²"},
		{with("--c", "0"), `--c: invalid value "0": must be a number in (0, ∞)`},
		{with("--c", "1", "--epochs", "5:3"), "--epochs: must be FROM:TO"},
		{with("--c", "1", "--epochs", "7"), "--epochs: must be FROM:TO"},
		// Bounded up front: 1:100000 would take minutes.
		{with("--c", "1", "--epochs", "1:100000"), "--epochs: at most 2000 epochs per run (each costs a few ms), got 100000 in \"1:100000\"; use FROM:TO:STEP, e.g. 1:100000:51"},
		{with("--c", "1", "--delta", "1"), `--delta: invalid value "1": must be a number in (0, 1)`},
		{with("--c", "1", "--gamma1", "0.5"), `--gamma1: invalid value "0.5": must be a number in (0, 0.5)`},
		{with("--c", "1", "--xl", "2"), "--xl: must be in (0, x_h] = (0, 1.8], got 2"},
		{with("--c", "1", "--plot", filepath.Join(dir, "p.pdf")), "--plot: file name must end in .svg or .png"},
		{with("--c", "1", "--plot", "/no/such/dir/p.svg"), `--plot: directory "/no/such/dir" does not exist`},
		{with("--c", "1", "--json", "-", "--csv", "-"), "only one of --json, --csv, --html can write to stdout (-), got --json and --csv"},
		{with("--c", "1", "--json", "-", "--html", "-"), "only one of --json, --csv, --html can write to stdout (-), got --json and --html"},
		{with("--c", "1", "--lemma-a1", "loose"), "--lemma-a1: must be conservative or printed"},
		{with("--c-max-private", "0.5"), "--c-max-private: no c > 0 makes one posterior draw"},
		{[]string{"curve", "--n", "0", "--c", "1"}, `--n: invalid value "0": must be an integer in [1,`},
		{[]string{"curve", "--n", "30", "--c", "1", "--epochs", "0:0", "--plot", plotPath, "--log-scale"}, "--plot: nothing to draw"},
		{with("--c", "1", "extra"), `unexpected argument "extra"`},
		{with("--c", "1e150", "--epochs", "1:2"), "--c: too large for float64"},
		{with("--c", "1e200", "--epochs", "1:2"), "--c: too large for float64"},
	}
	for _, c := range cases {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, errs)
		}
		if out != "" {
			t.Errorf("%v: wrote to stdout: %.80q", c.args, out)
		}
		if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: stderr = %q, want one line containing %q", c.args, errs, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written on error: %v", entries)
	}
}

// -h: the synopsis names every mode and output flag, every flag is listed
// under a group with its allowed range, and no default is printed that
// the flag does not have.
func TestCurveHelp(t *testing.T) {
	out, _, code := runCLI(t, "curve", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	synopsis := out[:strings.Index(out, "\n\n")]
	for _, f := range []string{"--c C", "--c-max-private", "--solve-c", "--eta-scale", "--solve-eta", "--construct", "--n-min", "--max-work",
		"--epochs", "--json", "--csv", "--plot", "--log-scale", "--html"} {
		if !strings.Contains(synopsis, f) {
			t.Errorf("synopsis lacks %s:\n%s", f, synopsis)
		}
	}
	if strings.Contains(out, "NaN") || strings.Contains(out, "(default false)") {
		t.Errorf("help shows a NaN or boolean default:\n%s", out)
	}
	wantDefault := map[string]string{"n": "17864389", "alpha": "2", "beta": "1", "xh": "1.8", "gamma1": "0.1", "delta": "0.001",
		"eta-scale": "2", "epochs": "1:70", "quantity": "chernoff", "lemma-a1": "conservative", "rho1": "1.01", "rho2": "0.05",
		"rho3": "1.005", "runs": "1000", "seed": "1",
		// Defaults computed from other flags are described in the text.
		"xl": "x_h/2", "m-breve": "n_1^ρ3", "gamma2": "the γ2 minimising n_p"}
	seen := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, "  --") {
			continue
		}
		name := strings.TrimPrefix(f[0], "--")
		seen++
		def, hasDef := wantDefault[name]
		gotDef := strings.Contains(line, "(default ")
		if hasDef != gotDef || hasDef && !strings.Contains(line, "(default "+def+")") {
			t.Errorf("--%s: default shown wrongly: %q", name, line)
		}
		isText := map[string]bool{"lemma-a1": true, "quantity": true, "epochs": true, "json": true, "csv": true, "plot": true, "html": true,
			"solve-c": true, "solve-eta": true, "construct": true, "n-min": true, "log-scale": true}
		if !isText[name] && !strings.Contains(line, " in ") {
			t.Errorf("--%s: no range: %q", name, line)
		}
	}
	if seen != 34 {
		t.Errorf("%d flags listed, want 34", seen)
	}
	out, _, _ = runCLI(t, "-h")
	if !strings.Contains(out, "curve") {
		t.Errorf("audit -h does not list curve")
	}
}

// solveJSON is the part of --json that --solve-c and --solve-eta add.
type solveJSON struct {
	Params struct {
		C        float64 `json:"c"`
		Eta      float64 `json:"eta"`
		EtaScale float64 `json:"eta_scale"`
		S        float64 `json:"s"`
	} `json:"params"`
	Solve struct {
		Unknown   string  `json:"unknown"`
		Quantity  string  `json:"quantity"`
		Value     float64 `json:"value"`
		Epsilon   float64 `json:"epsilon"`
		Unique    bool    `json:"unique"`
		Crossings []struct {
			Scale  float64 `json:"eta_scale"`
			Rising bool    `json:"rising"`
		} `json:"crossings"`
		PeakEps float64 `json:"peak_epsilon"`
	} `json:"solve"`
	Rows []struct {
		Epoch       int     `json:"epoch"`
		EpsChernoff float64 `json:"eps_chernoff"`
		EpsTail     float64 `json:"eps_tail"`
	} `json:"rows"`
}

func solveRun(t *testing.T, args ...string) solveJSON {
	t.Helper()
	out, errs, code := runCLI(t, append([]string{"curve"}, append(args, "--json", "-")...)...)
	if code != 0 || errs != "" {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
	}
	var r solveJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// --solve-c at Fig. 1's parameters with η = 1/s²: the c at which epoch 48
// is not (38, 0.001)-DP by the paper's own quantity. Reference c values
// from the independent mpmath/NumPy evaluation described in
// docs/derivations/interim-region.md ("Solving for c"): 20920252.44623471
// (chernoff), 20074437.745707087 (tail).
func TestCurveSolveC(t *testing.T) {
	for _, ref := range []struct {
		q string
		c float64
	}{{"chernoff", 20920252.44623471}, {"tail", 20074437.745707087}} {
		r := solveRun(t, "--solve-c", "--eps-target", "38", "--at-epoch", "48", "--eta-scale", "1", "--quantity", ref.q, "--epochs", "46:50")
		if math.Abs(r.Params.C-ref.c) > 1e-12*ref.c || r.Solve.Value != r.Params.C || r.Solve.Unknown != "c" || !r.Solve.Unique {
			t.Errorf("%s: c = %.17g (reference %.17g), solve %+v", ref.q, r.Params.C, ref.c, r.Solve)
		}
		row := r.Rows[2]
		got := row.EpsChernoff
		if ref.q == "tail" {
			got = row.EpsTail
		}
		if row.Epoch != 48 || math.Abs(got-38) > 1e-9 || math.Abs(r.Solve.Epsilon-38) > 1e-9 {
			t.Errorf("%s: epoch %d value %.15g", ref.q, row.Epoch, got)
		}
	}
}

// --solve-eta with c = 2.1e7 at epoch 48: crossings at k = η·s² =
// 0.9906698634682091 (rising) and 1.0681278979567463 (falling), from the
// same independent evaluation; the smallest is used. With c = 2e7 the
// target is out of reach.
func TestCurveSolveEta(t *testing.T) {
	r := solveRun(t, "--c", "2.1e7", "--solve-eta", "--eps-target", "38", "--at-epoch", "48", "--epochs", "48:48")
	if len(r.Solve.Crossings) != 2 || math.Abs(r.Solve.Crossings[0].Scale-0.9906698634682091) > 1e-9 ||
		math.Abs(r.Solve.Crossings[1].Scale-1.0681278979567463) > 1e-9 || !r.Solve.Crossings[0].Rising {
		t.Errorf("crossings %+v", r.Solve.Crossings)
	}
	if s := r.Params.S; math.Abs(r.Params.Eta*s*s-0.9906698634682091) > 1e-9 || r.Params.EtaScale != r.Solve.Crossings[0].Scale {
		t.Errorf("η·s² = %.15g, eta_scale %.15g", r.Params.Eta*s*s, r.Params.EtaScale)
	}
	if math.Abs(r.Rows[0].EpsChernoff-38) > 1e-9 || !(r.Solve.PeakEps > 38) {
		t.Errorf("epoch 48: %g, peak %g", r.Rows[0].EpsChernoff, r.Solve.PeakEps)
	}
	_, errs, code := runCLI(t, "curve", "--c", "2e7", "--solve-eta", "--eps-target", "38", "--at-epoch", "48")
	if code != exitUsage || !strings.Contains(errs, "--solve-eta: target not reachable: the largest chernoff at epoch 48 over η ∈ (0, 2/s) is 35.") {
		t.Errorf("c = 2e7: exit %d, %q", code, errs)
	}
}

type constructJSON struct {
	Params struct {
		N   int     `json:"n"`
		C   float64 `json:"c"`
		Eta float64 `json:"eta"`
		S   float64 `json:"s"`
	} `json:"params"`
	Construction struct {
		Gamma2       float64  `json:"gamma2"`
		Gamma2Chosen bool     `json:"gamma2_chosen"`
		NP           float64  `json:"n_p"`
		CP           float64  `json:"c_p"`
		Log10NP      float64  `json:"log10_n_p"`
		Limits       []string `json:"limits"`
		Readings     []string `json:"readings"`
		Check        *struct {
			PosteriorEpsilon float64 `json:"posterior_epsilon"`
			PosteriorHolds   bool    `json:"posterior_holds"`
			Epoch            int     `json:"epoch"`
			LemmaA9          float64 `json:"lemma_a9"`
			EpsChernoff      float64 `json:"eps_chernoff"`
			EpsProfile       float64 `json:"eps_profile"`
			ProofHolds       bool    `json:"proof_holds"`
			ClaimHolds       bool    `json:"claim_holds"`
		} `json:"check"`
	} `json:"construction"`
	Rows []struct {
		Epoch       int     `json:"epoch"`
		EpsChernoff float64 `json:"eps_chernoff"`
	} `json:"rows"`
}

// --construct for ε = 0.5, ε′ = 38, δ = 0.001, γ1 = 0.1 at Fig. 1's α, β,
// x_h. With γ2 = 1.2, n_p = 189494078034468 is the mpmath value of App.
// A-A's formulas (closedform's TestTheoremIV1Bounds); the instance passes
// both checks, and its rows at Lemma A.9's epoch repeat the check's
// ε_chernoff. Without γ2 the minimising one is used. γ2 = 1.11 cannot be
// instantiated, which is reported with exit 0 and no rows.
func TestCurveConstruct(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	run := func(args ...string) constructJSON {
		out, errs, code := runCLI(t, append([]string{"curve", "--construct", "--eps-posterior", "0.5", "--eps-target", "38", "--json", "-"}, args...)...)
		if code != 0 || errs != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
		var r constructJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run("--gamma2", "1.2")
	c := r.Construction
	if c.NP != 189494078034468 || r.Params.N != 189494078034468 || r.Params.C != c.CP || c.Gamma2Chosen || len(c.Readings) != 4 {
		t.Errorf("n_p = %.17g, params n = %d, c = %g vs c_p %g", c.NP, r.Params.N, r.Params.C, c.CP)
	}
	if s := r.Params.S; math.Abs(r.Params.Eta*s*s-2) > 1e-12 {
		t.Errorf("η·s² = %g, want 2", r.Params.Eta*s*s)
	}
	k := c.Check
	if k == nil || !k.PosteriorHolds || !(k.PosteriorEpsilon <= 0.5) || !k.ProofHolds || !k.ClaimHolds ||
		!(k.LemmaA9 >= 38) || !(k.EpsChernoff >= k.LemmaA9) || !(k.EpsProfile >= k.EpsChernoff) {
		t.Fatalf("check %+v", k)
	}
	if len(r.Rows) != 2*k.Epoch || r.Rows[k.Epoch-1].Epoch != k.Epoch || r.Rows[k.Epoch-1].EpsChernoff != k.EpsChernoff {
		t.Errorf("%d rows; row at epoch %d: %+v, check ε_chernoff %g", len(r.Rows), k.Epoch, r.Rows[k.Epoch-1], k.EpsChernoff)
	}
	auto := run("--epochs", "1:2")
	if !auto.Construction.Gamma2Chosen || !(auto.Construction.NP < c.NP) || auto.Construction.Check == nil || !auto.Construction.Check.ClaimHolds {
		t.Errorf("chosen γ2: %+v", auto.Construction)
	}
	out, errs, code := runCLI(t, "curve", "--construct", "--eps-posterior", "0.5", "--eps-target", "38", "--gamma2", "1.11")
	if code != 0 || errs != "" || !strings.Contains(out, "NO INSTANCE can be built") ||
		!strings.Contains(out, "n_p ≈ 9.105e+25 exceeds 2^53 ≈ 9.007e15") || !strings.Contains(out, "the γ2 minimising n_p is 1.26315") {
		t.Errorf("γ2 = 1.11: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	none := run("--gamma2", "1.11")
	if none.Construction.Check != nil || len(none.Construction.Limits) != 1 || none.Rows != nil || math.Abs(none.Construction.Log10NP-25.959) > 1e-3 {
		t.Errorf("γ2 = 1.11 JSON: %+v", none.Construction)
	}
}

type nminJSON struct {
	NMin struct {
		Value float64 `json:"value"`
	} `json:"n_min"`
	Datasets []struct {
		Name        string `json:"name"`
		Line14      int    `json:"null_line14"`
		Line23Empty int    `json:"null_line23_w_empty"`
		Line23      int    `json:"null_line23"`
		EmptyW25    int    `json:"null_line25_w_empty"`
		Released    int    `json:"released"`
	} `json:"datasets"`
}

// --n-min: eq. 33 as the library computes it (checked against mpmath in
// closedform), and Algorithm 1 run on eq. 9's D3 and D4. In a
// configuration where n_min ≈ 1.8e6 ≪ n_1 = 1e7 and line 17's noise is far
// inside line 19's width, almost every run releases; the runs are
// reproducible from the seed.
func TestCurveNMin(t *testing.T) {
	args := []string{"curve", "--n-min", "--eps-posterior", "2", "--delta", "0.01", "--gamma1", "0.25", "--rho2", "0.2", "--n", "10000000", "--json", "-"}
	out, errs, code := runCLI(t, args...)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var r nminJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	a := closedform.ProposeTestSample{Epsilon: 2, Delta: 0.01, XL: 0.9, XH: 1.8, Alpha: 2, Beta: 1, Rho1: 1.01, Rho2: 0.2, Gamma1: 0.25, N1: 1e7}
	want, err := a.NMin(math.Pow(1e7, 1.005))
	if err != nil || r.NMin.Value != want.Value {
		t.Errorf("n_min = %g, library %g (%v)", r.NMin.Value, want.Value, err)
	}
	if len(r.Datasets) != 2 || r.Datasets[0].Name != "D3" || r.Datasets[1].Name != "D4" {
		t.Fatalf("datasets %+v", r.Datasets)
	}
	for _, d := range r.Datasets {
		if d.Line14+d.Line23Empty+d.Line23+d.EmptyW25+d.Released != 1000 || d.Released < 950 {
			t.Errorf("%s: %+v", d.Name, d)
		}
	}
	again, _, _ := runCLI(t, args...)
	if again != out {
		t.Error("same seed, different output")
	}
	// The defaults (γ1 = 0.1): eq. 33 and the runs are printed; the slope
	// noise of line 17 then usually misses the data (W empty).
	out, errs, code = runCLI(t, "curve", "--n-min", "--eps-posterior", "0.5", "--runs", "200")
	if code != 0 || errs != "" || !strings.Contains(out, "n_min = ") || !strings.Contains(out, "null: line 23, W empty") {
		t.Errorf("defaults: exit %d, stderr %q\n%s", code, errs, out)
	}
}

// --epochs with a STEP, and the HTML report's table with ε_posterior.
func TestCurveStepAndHTML(t *testing.T) {
	r := curveRun(t, "--n", "5000", "--c", "3e5", "--epochs", "0:100:25")
	var got []int
	for _, row := range r.Rows {
		got = append(got, row.Epoch)
	}
	if fmt.Sprint(got) != "[0 25 50 75 100]" {
		t.Errorf("epochs %v", got)
	}
	out, errs, code := runCLI(t, "curve", "--n", "5000", "--c", "3e5", "--epochs", "1:5", "--html", "-")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, %q", code, errs)
	}
	if !strings.Contains(out, "<th>ε_posterior</th>") || strings.Count(out, fmt.Sprintf("<td>%s</td>", stats.FormatFloat(r.Posterior.Epsilon))) < 5 {
		t.Errorf("HTML table lacks ε_posterior (%s)", stats.FormatFloat(r.Posterior.Epsilon))
	}
}

// readmeCurveChecks are the commands of the "audit curve" section of
// docs/reference.md
// (the args as written there, then any extra flags the test adds to keep
// it short) and the outputs it quotes from each.
var readmeCurveChecks = []struct {
	args, extra []string
	quotes      []string
}{
	{strings.Fields("--solve-c --eps-target 38 --at-epoch 48 --eta-scale 1 --plot docs/fig1-solved.svg"), nil, []string{
		"solved: c = 20920252.45 makes ε_chernoff at epoch 48 equal 38", "38.0000", "41.1059", "65.0254",
		"ε_profile = 65.5994 at epoch 50", "(0.0659, 0.001)-DP"}},
	{strings.Fields("--c 2e7 --eta-scale 1"), nil, []string{"34.6706"}},
	{strings.Fields("--c-max-private 0.5 --eta-scale 1"), strings.Fields("--epochs 48:48"), []string{"c = 3.77118e+08", "12573.4094"}},
	{strings.Fields("--c 2.1e7 --solve-eta --eps-target 38 --at-epoch 48"), strings.Fields("--epochs 48:48"), []string{
		"k = 0.99066986 (rising), k = 1.0681279 (falling)"}},
	{strings.Fields("--construct --eps-posterior 0.5 --eps-target 38"), strings.Fields("--epochs 42:42"), []string{
		"γ2 = 1.26315", "n_p = 71000300815", "ε = 0.24902 ≤ 0.5", "exact ε_chernoff 1.88329e+07"}},
	{strings.Fields("--construct --eps-posterior 0.5 --eps-target 38 --gamma2 1.2"), strings.Fields("--epochs 55:55"), []string{
		"n_p = 189494078034468"}},
	{strings.Fields("--construct --eps-posterior 0.5 --eps-target 38 --gamma2 1.11"), nil, []string{
		"n_p ≈ 9.105e+25 exceeds 2^53 ≈ 9.007e15"}},
	{strings.Fields("--n-min --eps-posterior 2 --delta 0.01 --gamma1 0.25 --rho2 0.2 --n 10000000"), nil, []string{
		"n_min = 1.8243e+06", "│ D3      │ 0             │ 6                      │ 0             │ 0                      │ 994"}},
	{strings.Fields("--n-min --eps-posterior 1 --gamma1 0.49 --rho1 1.25 --rho2 0.45 --rho3 1.15 --beta 3 --xh 1 --alpha 1 --n 10000000000000"),
		strings.Fields("--runs 10"), []string{"n_min = 9.74467e+174"}},
}

// Every number the "audit curve" section of docs/reference.md quotes (in backticks) is
// printed by the command it names, and every "go run ./cmd/audit curve"
// command there is one of the commands checked.
func TestReadmeCurveSection(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	sec := docSection(t, "docs/reference.md", "### `audit curve`")
	known := map[string]bool{}
	for _, c := range readmeCurveChecks {
		known[strings.Join(c.args, " ")] = true
	}
	re := regexp.MustCompile("go run \\./cmd/audit curve ([^`\n]*)")
	found := 0
	for _, m := range re.FindAllStringSubmatch(sec, -1) {
		found++
		if !known[strings.TrimSpace(m[1])] {
			t.Errorf("README command not checked: curve %s", m[1])
		}
	}
	if found < 4 {
		t.Errorf("only %d commands found in the section", found)
	}
	dir := t.TempDir()
	for _, c := range readmeCurveChecks {
		args := append([]string{"curve"}, c.args...)
		for k, a := range args {
			if a == "--plot" {
				args[k+1] = filepath.Join(dir, filepath.Base(args[k+1]))
			}
		}
		// The prose mentions some commands without their extra flags; the
		// quoted values do not depend on them.
		out, errs, code := runCLI(t, append(args, c.extra...)...)
		if code != 0 || errs != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
			continue
		}
		for _, q := range c.quotes {
			if !strings.Contains(sec, "`"+q) {
				t.Errorf("README does not quote %q", q)
			}
			if !strings.Contains(out, q) {
				t.Errorf("%v does not print %q", args, q)
			}
		}
	}
}
