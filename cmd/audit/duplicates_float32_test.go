package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// total is the number of repeats counted in all.
func total(d audit.Duplicates) int { return d.WithinD + d.WithinDPrime + d.Across }

// writeFloat32NPY writes one-value rows as a 2-D float32 .npy file ('<f4',
// what numpy.save writes for a float32 array, e.g. a PyTorch sampler's
// draws) and returns its path.
func writeFloat32NPY(t *testing.T, path string, rows [][]float64) string {
	t.Helper()
	var data []byte
	for _, r := range rows {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(r[0])))
	}
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 1), }", len(rows))
	if err := os.WriteFile(path, testutil.NPYBytes(1, hdr, -1, data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeFloat32CSV writes one-value rows as the shortest decimals of their
// float32 values (as str() of a NumPy float32 prints them).
func writeFloat32CSV(t *testing.T, path string, rows [][]float64) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strconv.FormatFloat(float64(float32(r[0])), 'g', -1, 32))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// float32Files draws the first seed's two files of n float32 N(0, 1)
// values (and N(0.5, 1) on D′) whose rows repeat by chance, starting at
// seed 1: at n = 10⁴ about 3 repeats are expected, so the first seeds do.
func float32Files(t *testing.T, n int) (d, dp [][]float64, dup audit.Duplicates) {
	t.Helper()
	for seed := uint64(1); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 32))
		d, dp = make([][]float64, n), make([][]float64, n)
		for i := range d {
			d[i] = []float64{float64(float32(rng.NormFloat64()))}
			dp[i] = []float64{float64(float32(0.5 + rng.NormFloat64()))}
		}
		if dup = audit.CountDuplicateRows(d, dp); dup.Any() {
			return d, dp, dup
		}
	}
	t.Fatal("no seed repeats by chance")
	return
}

// Two files of 10⁴ independent float32 values each (as .npy and as CSV of
// the float32 decimals) repeat by chance — the original code refused such
// files ("independent runs of a continuous sampler never repeat"; 28 of
// 30 seeds at this size). They are accepted without a flag and without a
// warning; the JSON report counts the repeats and gives what independent
// float32 rows would repeat (bits 24, the limit at level 10⁻⁶), and the
// note says the repeats are within it.
func TestAnalyzeFloat32ChanceRepeatsAccepted(t *testing.T) {
	dir := t.TempDir()
	d, dp, dup := float32Files(t, 10000)
	npyD := writeFloat32NPY(t, filepath.Join(dir, "D.npy"), d)
	npyDP := writeFloat32NPY(t, filepath.Join(dir, "DP.npy"), dp)
	csvD := writeFloat32CSV(t, filepath.Join(dir, "D.csv"), d)
	csvDP := writeFloat32CSV(t, filepath.Join(dir, "DP.csv"), dp)
	for _, files := range [][2]string{{npyD, npyDP}, {csvD, csvDP}} {
		out := filepath.Join(dir, filepath.Ext(files[0])[1:]+".json")
		_, errs, code := runCLI(t, "analyze", files[0], files[1], "--json", out)
		if code != 0 || errs != "" {
			t.Fatalf("%s: exit %d, stderr %q", files[0], code, errs)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Report struct {
				Duplicates audit.Duplicates `json:"duplicates"`
				Bound      *struct {
					Expected float64 `json:"expected"`
					Limit    int     `json:"limit"`
					Level    float64 `json:"level"`
					Bits     int     `json:"bits"`
				} `json:"repeats_expected"`
				Notes []string `json:"notes"`
			} `json:"report"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		r := doc.Report
		if r.Duplicates != dup {
			t.Errorf("%s: duplicates %+v, the files hold %+v", files[0], r.Duplicates, dup)
		}
		if b := r.Bound; b == nil || b.Bits != 24 || b.Level != 1e-6 || b.Expected < 1 || b.Expected > 6 || b.Limit < total(dup) {
			t.Errorf("%s: bound %+v", files[0], b)
		}
		if n := r.Notes; len(n) == 0 || !strings.Contains(n[len(n)-1], "24 significant bits") || !strings.Contains(n[len(n)-1], "within that: chance repeats") {
			t.Errorf("%s: notes %q", files[0], n)
		}
	}
}

// Planted copies are still refused: 1% of D's rows copied over other rows
// of D (100 repeats where independent float32 rows repeat about 3 times,
// at most 18 at level 10⁻⁶). The message gives the counts, the expectation
// and the level, and no longer claims that continuous samplers never
// repeat; --allow-duplicate-rows accepts the rows with a warning.
func TestAnalyzeFloat32CopiesRefused(t *testing.T) {
	dir := t.TempDir()
	d, dp, dup := float32Files(t, 10000)
	rng := rand.New(rand.NewPCG(7, 7))
	to, from := rng.Perm(len(d)), rng.Perm(len(d))
	copied := 0
	for _, j := range to {
		if copied == 100 {
			break
		}
		if o := from[copied]; o != j {
			d[j] = append([]float64(nil), d[o]...)
			copied++
		}
	}
	planted := audit.CountDuplicateRows(d, dp)
	if planted.WithinD < dup.WithinD+90 {
		t.Fatalf("planted %+v", planted)
	}
	fd, fdp := writeFloat32NPY(t, filepath.Join(dir, "D.npy"), d), writeFloat32NPY(t, filepath.Join(dir, "DP.npy"), dp)
	_, errs, code := runCLI(t, "analyze", fd, fdp)
	if code != exitUsage || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := fmt.Sprintf("%d in all, where independent runs at the values' resolution (24 significant bits) would repeat about", total(planted))
	for _, s := range []string{fmt.Sprintf("samples: %d rows of D", planted.WithinD), want, "at level 10⁻⁶", "--allow-duplicate-rows"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr %q lacks %q", errs, s)
		}
	}
	if strings.Contains(errs, "never repeat") {
		t.Errorf("stderr %q still claims that continuous samplers never repeat", errs)
	}
	_, errs, code = runCLI(t, "analyze", fd, fdp, "--allow-duplicate-rows", "--json", filepath.Join(dir, "allowed.json"))
	if code != 0 || !strings.Contains(errs, "warning: samples:") || !strings.Contains(errs, want) {
		t.Errorf("allowed: exit %d, stderr %q", code, errs)
	}
}

// float32Scenario writes a scenario whose sampler is this test binary
// releasing float32 values (testProgram's mode float32: side + N(0, 1)
// from the trial's seed, rounded to float32), with the given audit seed
// and number of trials.
func float32Scenario(t *testing.T, dir string, seed uint64, trials int) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf(`name: program-float32
seed: %d
sampler:
  program:
    command: [%q]
    env: {AUDIT_TEST_PROGRAM: float32, AUDIT_TEST_AT: "-1"}
    timeout: 10s
audit: {trials: %d, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
`, seed, exe, trials)
	path := filepath.Join(dir, fmt.Sprintf("float32-%d.yaml", seed))
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runFloat32Program runs the float32 program at 20,000 trials for each
// seed: it must not be refused (the original code refused each of seeds
// 1 to 6, whose trials repeat by chance 1 to 4 times on D′, where values
// near 1 are coarser than near 0), and its report must count the repeats.
func runFloat32Program(t *testing.T, seeds ...uint64) {
	dir := t.TempDir()
	for _, seed := range seeds {
		out := filepath.Join(dir, fmt.Sprintf("seed%d.json", seed))
		_, errs, code := runCLI(t, "run", float32Scenario(t, dir, seed, 20000), "--quiet", "--workers", "2", "--json", out)
		if code != 0 {
			t.Errorf("seed %d: exit %d, stderr %q", seed, code, errs)
			continue
		}
		if d, _ := duplicatesOf(t, out); d == nil {
			t.Errorf("seed %d: no chance repeat reported: the test shows nothing", seed)
		}
	}
}

// A program sampler releasing float32 values, audited with 20,000 trials,
// is not refused (seed 1 here; seeds 1–6 under the slow tag).
func TestProgramFloat32NotRefused(t *testing.T) { runFloat32Program(t, 1) }

func TestProgramFloat32NotRefusedSeeds(t *testing.T) {
	testutil.Slow(t)
	runFloat32Program(t, 2, 3, 4, 5, 6)
}
