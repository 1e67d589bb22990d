package program

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// debianPython is the interpreter with NumPy (and PyTorch) the examples are
// checked with; a python3 earlier on PATH may lack them.
const debianPython = "/usr/bin/python3"

// needPython skips the test unless debianPython imports the modules; with
// MCMCAUDIT_REQUIRE_PYTHON=1 (as in CI) it fails instead.
func needPython(t *testing.T, modules ...string) {
	t.Helper()
	code := "pass"
	if len(modules) > 0 {
		code = "import " + strings.Join(modules, ", ")
	}
	out, err := exec.Command(debianPython, "-c", code).CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s cannot import %v: %v %s", debianPython, modules, err, strings.TrimSpace(string(out)))
	if os.Getenv("MCMCAUDIT_REQUIRE_PYTHON") == "1" {
		t.Fatal(msg + " (MCMCAUDIT_REQUIRE_PYTHON=1)")
	}
	t.Skip(msg)
}

// examplePath is a file of examples/ from this package's directory.
func examplePath(t *testing.T, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"..", "..", "examples"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeCSV writes records (features, then the label last) the way the
// tool hands datasets to programs: a header x1,…,xd,y, then one record per
// line, numbers in their shortest round-trip form.
func writeCSV(t *testing.T, path string, rows [][]float64, header bool) {
	t.Helper()
	var b strings.Builder
	if header {
		for j := 0; j < len(rows[0])-1; j++ {
			fmt.Fprintf(&b, "x%d,", j+1)
		}
		b.WriteString("y\n")
	}
	for _, r := range rows {
		for j, v := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// splitmix64 spreads trial indices into seeds (Steele, Lea & Flood 2014).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// runMany serves requests from MaxProcs goroutines and returns the results
// in request order.
func runMany(t *testing.T, pl *Pool, reqs []Request, workers int) []Result {
	t.Helper()
	out := make([]Result, len(reqs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := w; i < len(reqs); i += workers {
				res, err := pl.Run(context.Background(), reqs[i])
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				out[i] = res
			}
		})
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
	return out
}

// meanVar returns the sample mean and the unbiased sample variance.
func meanVar(xs []float64) (m, v float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, v / float64(len(xs)-1)
}

// checkNormalMoments compares the sample mean and variance of n draws
// with those of N(mean, sd²). For normal data the sample mean has standard
// error sd/√n and the unbiased sample variance sd²·√(2/(n−1)); each is
// allowed 4.5 standard errors (a two-sided false alarm of 7·10⁻⁶ per check
// for a correct sampler; the seeds are fixed, so the outcome is
// reproducible). See docs/derivations/program-examples.md.
func checkNormalMoments(t *testing.T, what string, xs []float64, mean, sd float64) {
	t.Helper()
	n := float64(len(xs))
	m, v := meanVar(xs)
	tolM := 4.5 * sd / math.Sqrt(n)
	tolV := 4.5 * sd * sd * math.Sqrt(2/(n-1))
	t.Logf("%s: mean %.4f (want %.4f ± %.4f), variance %.4f (want %.4f ± %.4f), n = %d", what, m, mean, tolM, v, sd*sd, tolV, len(xs))
	if math.Abs(m-mean) > tolM {
		t.Errorf("%s: mean %.5f, want %.5f ± %.5f", what, m, mean, tolM)
	}
	if math.Abs(v-sd*sd) > tolV {
		t.Errorf("%s: variance %.5f, want %.5f ± %.5f", what, v, sd*sd, tolV)
	}
}

func TestPythonHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	needPython(t)
	dir := t.TempDir()
	// D with the tool's header row; D' without one (the reader must
	// accept both). Sums: 0.1 + 0.2 + 0.7 and 0.1 + 0.2 + 0.3 in Python's
	// left-to-right float addition, compared bitwise below.
	d := [][]float64{{0.1, 5, 0}, {0.2, 6, 1}, {0.7, 7, 1}}
	dp := [][]float64{{0.1, 5, 0}, {0.2, 6, 1}, {0.3, 8, 2}}
	writeCSV(t, filepath.Join(dir, "d.csv"), d, true)
	writeCSV(t, filepath.Join(dir, "dp.csv"), dp, false)
	var stderr lockedBuffer
	c := Config{
		Command: []string{debianPython, "helper_check.py"},
		Dir:     "testdata",
		Env: []string{"MCMCAUDIT_D=" + filepath.Join(dir, "d.csv"), "MCMCAUDIT_DPRIME=" + filepath.Join(dir, "dp.csv"),
			"PYTHONUNBUFFERED=", "PYTHONDONTWRITEBYTECODE=1"},
		Timeout:  20 * time.Second,
		MaxProcs: 1,
		Stderr:   &stderr,
	}
	pl, hs, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, pl)
	if !hs.Equal(Handshake{Dim: 2, Releases: []string{"only"}}) {
		t.Fatalf("handshake %v", hs)
	}
	n0 := startedCount()
	sum := func(rows [][]float64) float64 {
		s := 0.0
		for _, r := range rows {
			s += r[0]
		}
		return s
	}
	for _, tc := range []struct {
		side  string
		seed  uint64
		rows  [][]float64
		label float64
	}{{SideD, 1<<64 - 1, d, 1}, {SideDPrime, 1<<53 + 1, dp, 2}} {
		r := Request{Trial: 3, Side: tc.side, Seed: tc.seed}
		res, err := pl.Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if err := Compare(res, Result{Releases: [][]float64{{sum(tc.rows), 3}}}); err != nil {
			t.Errorf("%v: %v", r, err)
		}
		var info struct {
			Seed  string
			Side  string
			Label float64
		}
		if err := json.Unmarshal(res.Info, &info); err != nil || info.Seed != strconv.FormatUint(tc.seed, 10) || info.Side != tc.side || info.Label != tc.label {
			t.Errorf("%v: info %s (%v)", r, res.Info, err)
		}
	}
	for seed, says := range map[uint64]string{
		13: "ValueError: unlucky seed 13",
		14: "ValueError: release 1, coordinate 1 is nan: releases must be finite",
		15: "ValueError: release 1 has 1 coordinates, the handshake declares dim 2",
		16: "ValueError: Out of range float values are not JSON compliant",
	} {
		_, err := pl.Run(context.Background(), Request{Trial: int(seed), Side: SideD, Seed: seed})
		var te *TrialError
		if !errors.As(err, &te) || te.Message != says {
			t.Errorf("seed %d: %v, want a trial error %q", seed, err, says)
		}
	}
	if n := startedCount() - n0; n != 0 {
		t.Errorf("%d processes started: the helper's process should survive its trial errors", n)
	}
	pl.Close()
	for _, want := range []string{
		"[sampler 1] printed before serve\n",
		"[sampler 1] print() inside run goes to stderr\n",
		"[sampler 1] a native write to fd 1 goes to stderr\n",
		"[sampler 1] ValueError: unlucky seed 13\n", // the traceback's last line
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

func TestPythonGaussianExample(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	needPython(t, "numpy")
	dir := t.TempDir()
	// The records of testdata/gaussian-mechanism.yaml: q(D) = 0.1 and
	// q(D') = 1.1, so Δ = 1 and σ = 1/μ.
	writeCSV(t, filepath.Join(dir, "d.csv"), [][]float64{{0.3, 0}, {-0.2, 0}, {0, 0}}, true)
	writeCSV(t, filepath.Join(dir, "dp.csv"), [][]float64{{0.3, 0}, {-0.2, 0}, {1, 0}}, true)
	for _, tc := range []struct {
		mu            string
		n             int
		meanD, meanDp float64
		sd            float64
		seeds         uint64
	}{
		{"1", 4000, 0.1, 1.1, 1, 1 << 20},
		{"2", 1000, 0.1, 1.1, 0.5, 2 << 20},
		{"0", 1000, 0.1, 0.1, 1, 3 << 20}, // the same law on both sides
	} {
		t.Run("mu="+tc.mu, func(t *testing.T) {
			c := Config{
				Command:  []string{debianPython, examplePath(t, "python", "gaussian.py"), "--mu", tc.mu},
				Env:      []string{"MCMCAUDIT_D=" + filepath.Join(dir, "d.csv"), "MCMCAUDIT_DPRIME=" + filepath.Join(dir, "dp.csv"), "PYTHONDONTWRITEBYTECODE=1"},
				Timeout:  20 * time.Second,
				MaxProcs: 2,
			}
			pl := mustStart(t, c)
			defer mustClose(t, pl)
			reqs := make([]Request, 2*tc.n)
			for i := range reqs {
				side := SideD
				if i%2 == 1 {
					side = SideDPrime
				}
				reqs[i] = Request{Trial: i, Side: side, Seed: splitmix64(uint64(i) + tc.seeds)}
			}
			begin := time.Now()
			res := runMany(t, pl, reqs, 2)
			took := time.Since(begin)
			t.Logf("%d trials through 2 processes in %v: %.0f µs per trial", len(reqs), took.Round(time.Millisecond), float64(took.Microseconds())/float64(len(reqs)))
			var xd, xp []float64
			for i, r := range res {
				if i%2 == 0 {
					xd = append(xd, r.Releases[0][0])
				} else {
					xp = append(xp, r.Releases[0][0])
				}
			}
			checkNormalMoments(t, "D", xd, tc.meanD, tc.sd)
			checkNormalMoments(t, "D'", xp, tc.meanDp, tc.sd)
			// Same seed, fresh process: the same bits.
			again, err := pl.RunFresh(context.Background(), reqs[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := Compare(res[1], again); err != nil {
				t.Errorf("not deterministic: %v", err)
			}
		})
	}
}

// logisticGradStep is one ULA step's mean for Bayesian logistic regression
// (Bertazzi et al. 2025, eq. 12): θ − γ(αθ − Σ_i (y_i − σ(θ·x_i)) x_i),
// computed here independently of the Python code.
func logisticGradStep(theta []float64, rows [][]float64, gamma, alpha float64) []float64 {
	g := make([]float64, len(theta))
	for k := range g {
		g[k] = alpha * theta[k]
	}
	for _, r := range rows {
		z := 0.0
		for k := range theta {
			z += theta[k] * r[k]
		}
		s := 1 / (1 + math.Exp(-z))
		for k := range theta {
			g[k] -= (r[len(theta)] - s) * r[k]
		}
	}
	out := make([]float64, len(theta))
	for k := range out {
		out[k] = theta[k] - gamma*g[k]
	}
	return out
}

func TestPythonULAExample(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	needPython(t, "numpy")
	dir := t.TempDir()
	// D: a few records (x1, x2, y); D': zero features, where the
	// likelihood has no gradient and ULA is the Gaussian AR(1) chain
	// θ ← aθ + √(2γ) z with a = 1 − γα.
	d := [][]float64{{1, 0.5, 1}, {-0.3, 2, 0}, {0.8, -1.2, 1}, {2, 1, 0}, {-1.5, 0.4, 1}}
	zero := [][]float64{{0, 0, 1}, {0, 0, 0}, {0, 0, 1}}
	writeCSV(t, filepath.Join(dir, "d.csv"), d, true)
	writeCSV(t, filepath.Join(dir, "dp.csv"), zero, true)
	env := []string{"MCMCAUDIT_D=" + filepath.Join(dir, "d.csv"), "MCMCAUDIT_DPRIME=" + filepath.Join(dir, "dp.csv"), "PYTHONDONTWRITEBYTECODE=1"}
	const gamma, alpha = 0.05, 2.0
	theta0 := []float64{0.5, -1}
	script := examplePath(t, "python", "ula_logistic.py")
	common := []string{debianPython, script, "--gamma", "0.05", "--alpha", "2", "--init", "0.5,-1"}

	t.Run("one step", func(t *testing.T) {
		// θ₁ ~ N(θ₀ − γ∇U(θ₀), 2γ I) exactly.
		c := Config{Command: append(common, "--iterations", "1"), Env: env, Timeout: 20 * time.Second, MaxProcs: 2}
		pl := mustStart(t, c)
		defer mustClose(t, pl)
		const n = 2000
		reqs := make([]Request, n)
		for i := range reqs {
			reqs[i] = Request{Trial: i, Side: SideD, Seed: splitmix64(uint64(i) + 7)}
		}
		res := runMany(t, pl, reqs, 2)
		want := logisticGradStep(theta0, d, gamma, alpha)
		for k := range want {
			xs := make([]float64, n)
			for i, r := range res {
				xs[i] = r.Releases[0][k]
			}
			checkNormalMoments(t, fmt.Sprintf("θ₁[%d]", k), xs, want[k], math.Sqrt(2*gamma))
		}
	})

	t.Run("prior chain", func(t *testing.T) {
		// θ_k ~ N(a^k θ₀, 2γ(1 − a^{2k})/(1 − a²)) at k = 10, 20, 30.
		c := Config{Command: append(common, "--iterations", "30", "--release-every", "10"), Env: env, Timeout: 20 * time.Second, MaxProcs: 2}
		pl, hs, err := Start(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		defer mustClose(t, pl)
		if !hs.Equal(Handshake{Dim: 2, Releases: []string{"iteration 10", "iteration 20", "iteration 30"}}) {
			t.Fatalf("handshake %v", hs)
		}
		const n = 2000
		reqs := make([]Request, n)
		for i := range reqs {
			reqs[i] = Request{Trial: i, Side: SideDPrime, Seed: splitmix64(uint64(i) + 1<<40)}
		}
		res := runMany(t, pl, reqs, 2)
		a := 1 - gamma*alpha
		for j, k := range []int{10, 20, 30} {
			sd := math.Sqrt(2 * gamma * (1 - math.Pow(a, float64(2*k))) / (1 - a*a))
			for c := range theta0 {
				xs := make([]float64, n)
				for i, r := range res {
					xs[i] = r.Releases[j][c]
				}
				checkNormalMoments(t, fmt.Sprintf("θ_%d[%d]", k, c), xs, math.Pow(a, float64(k))*theta0[c], sd)
			}
		}
		again, err := pl.RunFresh(context.Background(), reqs[5])
		if err != nil {
			t.Fatal(err)
		}
		if err := Compare(res[5], again); err != nil {
			t.Errorf("not deterministic: %v", err)
		}
	})
}

// readDigits reads testdata/digits.csv.gz (64 pixel counts 0…16, then the
// label) and scales the pixels by 1/16, as the tool's digits preset does.
func readDigits(t *testing.T) [][]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "digits.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float64, len(recs))
	for i, rec := range recs {
		rows[i] = make([]float64, len(rec))
		for j, s := range rec {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			if j < len(rec)-1 {
				v /= 16
			}
			rows[i][j] = v
		}
	}
	return rows
}

func TestPyTorchDigitsExample(t *testing.T) {
	testutil.Slow(t)
	needPython(t, "numpy", "torch")
	all := readDigits(t)
	if len(all) != 1797 || len(all[0]) != 65 {
		t.Fatalf("digits: %d rows of %d columns", len(all), len(all[0]))
	}
	train, test := all[:1400], all[1400:]
	testRecords := len(test)
	// A canary of the right shape (the tool crafts a DeepFool one): record
	// 0's pixels pulled halfway towards record 1's, which has another
	// label.
	x0, y0 := train[0][:64], int(train[0][64])
	var other []float64
	for _, r := range train {
		if int(r[64]) != y0 {
			other = r[:64]
			break
		}
	}
	xs := make([]float64, 64)
	for j := range xs {
		xs[j] = (x0[j] + other[j]) / 2
	}
	ys := (y0 + 1) % 10
	prime := append([][]float64{append(append([]float64(nil), xs...), float64(y0))}, train[1:]...)
	dir := t.TempDir()
	writeCSV(t, filepath.Join(dir, "d.csv"), train, true)
	writeCSV(t, filepath.Join(dir, "dp.csv"), prime, true)
	writeCSV(t, filepath.Join(dir, "test.csv"), test, true)
	can, _ := json.Marshal(map[string]any{"index": 0, "x0": x0, "y0": y0, "x_star": xs, "y_star": ys})
	const epochs = 2
	c := Config{
		Command: []string{debianPython, examplePath(t, "pytorch", "digits_sgld.py"), "--epochs", strconv.Itoa(epochs)},
		Env: []string{
			"MCMCAUDIT_D=" + filepath.Join(dir, "d.csv"), "MCMCAUDIT_DPRIME=" + filepath.Join(dir, "dp.csv"),
			"MCMCAUDIT_TEST=" + filepath.Join(dir, "test.csv"), "MCMCAUDIT_CANARY=" + string(can),
			"PYTHONDONTWRITEBYTECODE=1",
		},
		Timeout:  60 * time.Second,
		MaxProcs: 2, // room for RunFresh's process next to the pooled one
	}
	begin := time.Now()
	pl, hs, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, pl)
	t.Logf("start-up (imports, data) %v", time.Since(begin).Round(time.Millisecond))
	if !hs.Equal(Handshake{Dim: 4, Releases: []string{"epoch 1", "epoch 2"}}) {
		t.Fatalf("handshake %v", hs)
	}
	run := func(r Request, fresh bool) Result {
		t.Helper()
		begin := time.Now()
		var res Result
		var err error
		if fresh {
			res, err = pl.RunFresh(context.Background(), r)
		} else {
			res, err = pl.Run(context.Background(), r)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v (fresh %v): %v", r, fresh, time.Since(begin).Round(time.Millisecond))
		return res
	}
	seed := uint64(1)<<63 + 5
	a := run(Request{Trial: 0, Side: SideD, Seed: seed}, false)
	b := run(Request{Trial: 1, Side: SideDPrime, Seed: 17}, false)
	a2 := run(Request{Trial: 0, Side: SideD, Seed: seed}, false) // after another trial in the same process
	a3 := run(Request{Trial: 0, Side: SideD, Seed: seed}, true)  // in a new process
	// Seeds equal in their low 32 bits must still differ (PyTorch's own
	// CPU generator would confuse them).
	c2 := run(Request{Trial: 2, Side: SideD, Seed: seed - 1<<32}, false)
	for _, x := range []Result{a2, a3} {
		if err := Compare(a, x); err != nil {
			t.Errorf("same (seed, side), different releases: %v", err)
		}
	}
	if Equal(a, c2) {
		t.Error("seeds differing above bit 32 give the same releases")
	}
	for _, res := range []Result{a, b} {
		for _, rel := range res.Releases {
			for k, p := range rel {
				if !(p >= 0 && p <= 1) {
					t.Errorf("probability %d is %g", k+1, p)
				}
			}
		}
		var info struct {
			Correct []int `json:"correct"`
		}
		if err := json.Unmarshal(res.Info, &info); err != nil || len(info.Correct) != epochs {
			t.Fatalf("info %s: %v", res.Info, err)
		}
		// Ten classes: a model that learnt nothing is right 10% of the
		// time; two epochs of SGLD reach far more (about 0.75, see the
		// example's --standalone output).
		if acc := float64(info.Correct[epochs-1]) / float64(testRecords); acc < 0.5 {
			t.Errorf("test accuracy after %d epochs %.3f", epochs, acc)
		}
		t.Logf("releases %v, correct test records %v of %d", res.Releases, info.Correct, testRecords)
	}
}

// benchPython serves trials of a Python example through a one-process pool
// and reports the time per trial, to set against the example's own
// --standalone loop (which runs the same trials without the protocol).
func benchPython(b *testing.B, modules []string, env []string, command ...string) {
	code := "import " + strings.Join(modules, ", ")
	if err := exec.Command(debianPython, "-c", code).Run(); err != nil {
		b.Skipf("%s cannot import %v", debianPython, modules)
	}
	c := Config{Command: append([]string{debianPython}, command...), Env: append(env, "PYTHONDONTWRITEBYTECODE=1"), MaxProcs: 1}
	pl, _, err := Start(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
	pid := lastStarted()
	cpu0, cpuOK := cpuTime(pid)
	i := 0
	begin := time.Now()
	for b.Loop() {
		side := SideD
		if i%2 == 1 {
			side = SideDPrime
		}
		if _, err := pl.Run(context.Background(), Request{Trial: i, Side: side, Seed: uint64(i + 1)}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(time.Since(begin).Microseconds())/float64(i), "µs/trial")
	if cpu1, ok := cpuTime(pid); ok && cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(i), "cpu-µs/trial")
	}
}

func BenchmarkPythonExamples(b *testing.B) {
	here, _ := filepath.Abs(filepath.Join("..", "..", "examples"))
	b.Run("gaussian", func(b *testing.B) {
		benchPython(b, []string{"numpy"}, nil, filepath.Join(here, "python", "gaussian.py"))
	})
	b.Run("ula_logistic", func(b *testing.B) {
		benchPython(b, []string{"numpy"}, nil, filepath.Join(here, "python", "ula_logistic.py"))
	})
	b.Run("digits_sgld_10_epochs", func(b *testing.B) {
		benchPython(b, []string{"numpy", "torch"}, nil, filepath.Join(here, "pytorch", "digits_sgld.py"), "--epochs", "10", "--demo-data")
	})
}
