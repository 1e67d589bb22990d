package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/samples"
	"github.com/sbinet/npyio"
	"gonum.org/v1/gonum/mat"
)

// reportOf decodes the report of a JSON document.
func reportOf(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Report map[string]any `json:"report"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Report
}

// sameStatistics compares what two reports say about the runs: per release
// point the attacks with their rules and counts, the region, GDP and
// ceiling estimates; the headline, its ε and the verdict. (Not compared:
// the ID, the mechanism's name and datasets, the sampler's counters and
// the exact ε — samples carry none of them.)
func sameStatistics(t *testing.T, a, b map[string]any) {
	t.Helper()
	for _, key := range []string{"headline", "epsilon", "verdict", "violations", "train_runs", "select_runs", "eval_runs",
		"eval_negatives", "eval_positives", "test_confidence", "multiplicity", "delta", "confidence"} {
		if !reflect.DeepEqual(a[key], b[key]) {
			t.Errorf("%s: %v vs %v", key, a[key], b[key])
		}
	}
	pa, pb := a["points"].([]any), b["points"].([]any)
	if len(pa) != len(pb) {
		t.Fatalf("%d vs %d release points", len(pa), len(pb))
	}
	for k := range pa {
		x, y := pa[k].(map[string]any), pb[k].(map[string]any)
		for _, key := range []string{"attacks", "best", "best_gdp", "region", "gdp", "ceiling", "claims"} {
			if !reflect.DeepEqual(x[key], y[key]) {
				t.Errorf("point %d %s: %v vs %v", k, key, x[key], y[key])
			}
		}
	}
}

// "audit analyze" on the releases of a run, in trial order, reproduces the
// run's report: the same split, features, rules, counts, bounds, headline
// and verdict, here with a claim and two competing attacks.
func TestAnalyzeReproducesRun(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	base, _ := os.ReadFile("../../testdata/sgld-interim.yaml")
	yml := strings.Replace(string(base), "trials: 4000", "trials: 600", 1) + "claim: {epsilon: 3, delta: 1.0e-5}\n"
	yml = strings.Replace(yml, "attacks: [threshold]", "attacks: [threshold, linear]", 1)
	os.WriteFile(scen, []byte(yml), 0o644)
	prefix := filepath.Join(dir, "rel")
	runJSON, anJSON := filepath.Join(dir, "run.json"), filepath.Join(dir, "an.json")
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--save-releases", prefix, "--json", runJSON); code > 1 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	_, errs, code := runCLI(t, "analyze", prefix+"-D.csv", prefix+"-DPRIME.csv", "--scenario", scen, "--json", anJSON)
	if code > 1 {
		t.Fatalf("analyze: exit %d %s", code, errs)
	}
	a, b := reportOf(t, runJSON), reportOf(t, anJSON)
	if len(a["points"].([]any)) != 20 {
		t.Fatalf("expected 20 release points")
	}
	sameStatistics(t, a, b)
	if notes := b["notes"].([]any); len(notes) != 2 || !strings.Contains(notes[0].(string), "independent run") {
		t.Errorf("notes %v", notes)
	}
}

// Without a trial column the rows are split by a permutation drawn from the
// seed, stated in the report; a .npy file (2-D and 3-D) holding the same
// numbers gives the same report as the CSV.
func TestAnalyzeCSVAndNPY(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "rel")
	if _, errs, code := runCLI(t, "run", "../../testdata/gaussian-mechanism.yaml", "--trials", "400", "--quiet", "--save-releases", prefix); code > 1 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	var rows [2][][]float64
	for side, suffix := range []string{"-D.csv", "-DPRIME.csv"} {
		f, err := samples.ReadFile(context.Background(), prefix+suffix)
		if err != nil {
			t.Fatal(err)
		}
		rows[side] = f.Rows
		// The same numbers without the trial column and the header.
		var b strings.Builder
		for _, r := range f.Rows {
			for j, v := range r {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(formatG(v))
			}
			b.WriteByte('\n')
		}
		os.WriteFile(filepath.Join(dir, "plain"+suffix), []byte(b.String()), 0o644)
		for _, shape := range []string{"2d", "3d"} {
			flat := []float64{}
			for _, r := range f.Rows {
				flat = append(flat, r...)
			}
			w, err := os.Create(filepath.Join(dir, shape+suffix+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			var werr error
			if shape == "2d" {
				werr = npyio.Write(w, matOf(len(f.Rows), len(f.Rows[0]), flat))
			} else {
				werr = writeNPY3(w, len(f.Rows), 1, len(f.Rows[0]), flat)
			}
			w.Close()
			if werr != nil {
				t.Fatal(werr)
			}
		}
	}
	var reps []map[string]any
	for _, pair := range [][2]string{{"plain-D.csv", "plain-DPRIME.csv"}, {"2d-D.csv.npy", "2d-DPRIME.csv.npy"}, {"3d-D.csv.npy", "3d-DPRIME.csv.npy"}} {
		out := filepath.Join(dir, pair[0]+".json")
		if _, errs, code := runCLI(t, "analyze", filepath.Join(dir, pair[0]), filepath.Join(dir, pair[1]), "--seed", "9", "--json", out); code != 0 {
			t.Fatalf("analyze %v: exit %d %s", pair, code, errs)
		}
		reps = append(reps, reportOf(t, out))
	}
	sameStatistics(t, reps[0], reps[1])
	sameStatistics(t, reps[0], reps[2])
	if n := reps[0]["notes"].([]any); !strings.Contains(n[1].(string), "random order drawn from seed 9") {
		t.Errorf("order note %q", n[1])
	}
	if got := int(reps[0]["trials"].(float64)); got != len(rows[0])+len(rows[1]) {
		t.Errorf("trials %d", got)
	}
}

// Bad samples are refused with one line and exit 2.
func TestAnalyzeErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.csv", "1,2\n3,4\n5,6\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{good}, "give two files"},
		{[]string{good, write("wide.csv", "1,2,3\n")}, "has 2 values per run"},
		{[]string{good, write("nan.csv", "1,NaN\n")}, "must be a finite number"},
		{[]string{good, write("ragged.csv", "1,2\n3\n")}, "wrong number of fields"},
		{[]string{write("t1.csv", "trial,a[0]\n0,1\n1,2\n"), write("t2.csv", "trial,a[0]\n1,3\n")}, "trial 1 appears twice"},
		{[]string{write("t3.csv", "trial,a[0]\n0,1\n"), write("t4.csv", "a[0]\n3\n")}, "a trial column must be in both files or in neither"},
		{[]string{write("n1.csv", "a[0]\n1\n"), write("n2.csv", "b[0]\n3\n")}, "different column names"},
		{[]string{write("mixed.csv", "a[0],a[1],b[0]\n1,2,3\n"), write("mixed2.csv", "a[0],a[1],b[0]\n1,2,3\n")}, "every release needs the same dimension"},
		{[]string{good, good, "--points", "3"}, "--points: 3 release points must divide"},
		{[]string{good, good, "--split", "0.5"}, "--split: must be TRAIN:EVAL"},
		{[]string{good, write("bad.npy", "not numpy")}, "not a NumPy file"},
		{[]string{good, filepath.Join(dir, "missing.csv")}, "cannot read"},
	}
	for _, c := range cases {
		_, errs, code := runCLI(t, append([]string{"analyze"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("analyze %v: exit %d, stderr %q; want %q", c.args, code, errs, c.want)
		}
	}
}

func formatG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// matOf wraps a row-major slice as a gonum matrix for npyio.
func matOf(r, c int, data []float64) *mat.Dense { return mat.NewDense(r, c, data) }

// writeNPY3 writes a 3-D float64 array (version 1.0 header, C order).
func writeNPY3(w io.Writer, a, b, c int, data []float64) error {
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d, %d), }", a, b, c)
	pad := 64 - (10+len(hdr)+1)%64
	hdr += strings.Repeat(" ", pad) + "\n"
	buf := []byte("\x93NUMPY\x01\x00")
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(hdr)))
	buf = append(buf, hdr...)
	for _, v := range data {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
	}
	_, err := w.Write(buf)
	return err
}
