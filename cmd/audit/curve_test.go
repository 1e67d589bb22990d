package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
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

// The acceptance command: η = 1/s² at the Fig. 1 caption's
// parameters with c = 2e7. The curve rises to a peak inside the epoch
// range and falls again; its values at epoch 48 are those of a NumPy
// evaluation summing all 17,864,389 orders directly (Chernoff
// 34.670584719241148, exact tail 37.732638533030091).
func TestCurveAcceptance(t *testing.T) {
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
		{with(), "--c or --c-max-private is required"},
		{with("--c", "1", "--c-max-private", "0.5"), "--c and --c-max-private are exclusive"},
		{with("--c", "1", "--eta", "1e-6", "--eta-scale", "1"), "--eta and --eta-scale are exclusive"},
		{with("--c", "1", "--eta", "1"), "--eta: must be in (0, 2/s)"},
		{with("--c", "1", "--eta-scale", "1e20"), "--eta-scale: η = 1e+20/s²"},
		{with("--c", "0"), `--c: invalid value "0": must be a number in (0, ∞)`},
		{with("--c", "1", "--epochs", "5:3"), "--epochs: must be FROM:TO"},
		{with("--c", "1", "--epochs", "7"), "--epochs: must be FROM:TO"},
		{with("--c", "1", "--epochs", "0:100000"), "at most 100000 epochs"},
		{with("--c", "1", "--delta", "1"), `--delta: invalid value "1": must be a number in (0, 1)`},
		{with("--c", "1", "--gamma1", "0.5"), `--gamma1: invalid value "0.5": must be a number in (0, 0.5)`},
		{with("--c", "1", "--xl", "2"), "--xl: must be in (0, x_h] = (0, 1.8], got 2"},
		{with("--c", "1", "--plot", filepath.Join(dir, "p.pdf")), "--plot: file name must end in .svg or .png"},
		{with("--c", "1", "--plot", "/no/such/dir/p.svg"), `--plot: directory "/no/such/dir" does not exist`},
		{with("--c", "1", "--json", "-", "--csv", "-"), "--json and --csv cannot both write to stdout"},
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

func TestCurveHelp(t *testing.T) {
	out, _, code := runCLI(t, "curve", "-h")
	for _, f := range []string{"--c-max-private", "--eta-scale", "--epochs", "--log-scale", "--gamma1", "--xl"} {
		if code != 0 || !strings.Contains(out, f) {
			t.Errorf("audit curve -h: exit %d, missing %s", code, f)
		}
	}
	out, _, _ = runCLI(t, "-h")
	if !strings.Contains(out, "curve") {
		t.Errorf("audit -h does not list curve")
	}
}
