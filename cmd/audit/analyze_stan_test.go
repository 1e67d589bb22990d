package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// stanChain is one generated CmdStan chain: draws of (theta.1, theta.2)
// after warmup, and optional warmup draws saved before them.
type stanChain struct {
	warmup, draws [][2]float64
}

// newStanChain draws a chain of n draws (a random walk around mean in the
// first coordinate) from its own seed, with w saved warmup draws far from
// it, so that a reader keeping them would change every figure.
func newStanChain(seed uint64, mean float64, n, w int) stanChain {
	r := rand.New(rand.NewPCG(seed, 17))
	var c stanChain
	for i := 0; i < w; i++ {
		c.warmup = append(c.warmup, [2]float64{1e3 + r.NormFloat64(), -1e3})
	}
	x := [2]float64{mean, 0}
	for i := 0; i < n; i++ {
		x[0] = mean + 0.5*(x[0]-mean) + r.NormFloat64()
		x[1] = 0.5*x[1] + r.NormFloat64()
		c.draws = append(c.draws, x)
	}
	return c
}

// stanText writes a chain as CmdStan does: configuration comments, the
// header (lp__ and the sampler's columns first), warmup draws when saved,
// the adaptation comments, the draws, and the timing comments.
func stanText(c stanChain, extra string) string {
	var b strings.Builder
	b.WriteString("# stan_version_major = 2\n# stan_version_minor = 35\n# stan_version_patch = 0\n# model = gauss_model\n# method = sample (Default)\n#   sample\n#     num_samples = 1000 (Default)\n")
	fmt.Fprintf(&b, "#     save_warmup = %v\n", len(c.warmup) > 0)
	b.WriteString("lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,theta.1,theta.2" + extra + "\n")
	row := func(x [2]float64) {
		fmt.Fprintf(&b, "%g,0.9,0.8,2,3,0,%g,%s,%s", -0.5*(x[0]*x[0]+x[1]*x[1]), 1+x[0]*x[0], formatG(x[0]), formatG(x[1]))
		if extra != "" {
			b.WriteString(",1.5")
		}
		b.WriteByte('\n')
	}
	for _, x := range c.warmup {
		row(x)
	}
	b.WriteString("# Adaptation terminated\n# Step size = 0.8\n# Diagonal elements of inverse mass matrix:\n# 1, 1\n")
	for _, x := range c.draws {
		row(x)
	}
	b.WriteString("# \n#  Elapsed Time: 0.01 seconds (Warm-up)\n#                0.02 seconds (Sampling)\n#                0.03 seconds (Total)\n# \n")
	return b.String()
}

// writeStanDirs writes n chains per side (D: mean 0, D′: mean 1.5), each
// seeded on its own, some with saved warmup draws and one gzipped, and
// returns the directories and the chains in file-name order.
func writeStanDirs(t *testing.T, dir string, n, draws int) ([2]string, [2][]stanChain) {
	t.Helper()
	var dirs [2]string
	var chains [2][]stanChain
	for side, mean := range []float64{0, 1.5} {
		dirs[side] = filepath.Join(dir, fmt.Sprintf("side%d", side))
		if err := os.Mkdir(dirs[side], 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			c := newStanChain(uint64(1000*side+i+1), mean, draws, 7*(i%3))
			chains[side] = append(chains[side], c)
			name := filepath.Join(dirs[side], fmt.Sprintf("chain-%04d.csv", i))
			if i == 5 {
				writeGzip(t, name+".gz", stanText(c, ""))
				continue
			}
			if err := os.WriteFile(name, []byte(stanText(c, "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Not chains: CmdStan's other outputs and hidden files.
		os.WriteFile(filepath.Join(dirs[side], "output.txt"), []byte("not a chain"), 0o644)
		os.WriteFile(filepath.Join(dirs[side], ".hidden.csv"), []byte("1,2\n"), 0o644)
	}
	return dirs, chains
}

func writeGzip(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(text))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Two directories of CmdStan chains (comments at the top and the bottom,
// saved warmup in some, theta.1 and theta.2) give one 2-D release per
// chain: the audit's figures equal those of the same releases written as
// a CSV file of runs (the last draw) and as a 3-D .npy (--draws 10,-1);
// the report states the layout and that each chain is one run.
func TestAnalyzeStanDirectories(t *testing.T) {
	dir := t.TempDir()
	const n, draws = 150, 40
	dirs, chains := writeStanDirs(t, dir, n, draws)
	for _, c := range []struct {
		flags []string
		pick  []int // 0-based draws after warmup
	}{
		{nil, []int{draws - 1}},
		{[]string{"--draws", "-1,10"}, []int{9, draws - 1}},
	} {
		var plain [2]string
		for side := range chains {
			var b strings.Builder
			var flat []float64
			for _, ch := range chains[side] {
				for k, d := range c.pick {
					x := ch.draws[d]
					if k > 0 {
						b.WriteByte(',')
					}
					b.WriteString(formatG(x[0]) + "," + formatG(x[1]))
					flat = append(flat, x[0], x[1])
				}
				b.WriteByte('\n')
			}
			plain[side] = filepath.Join(dir, fmt.Sprintf("plain%d-%d", len(c.pick), side))
			if len(c.pick) == 1 {
				plain[side] += ".csv"
				os.WriteFile(plain[side], []byte(b.String()), 0o644)
				continue
			}
			plain[side] += ".npy"
			w, err := os.Create(plain[side])
			if err != nil {
				t.Fatal(err)
			}
			if err := writeNPY3(w, n, len(c.pick), 2, flat); err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
		stanJSON, plainJSON := filepath.Join(dir, "stan.json"), filepath.Join(dir, "plain.json")
		args := append([]string{"analyze", dirs[0], dirs[1], "--seed", "4", "--json", stanJSON}, c.flags...)
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		if _, errs, code := runCLI(t, "analyze", plain[0], plain[1], "--seed", "4", "--json", plainJSON); code != 0 {
			t.Fatalf("plain: exit %d %s", code, errs)
		}
		a, b := reportOf(t, stanJSON), reportOf(t, plainJSON)
		sameStatistics(t, a, b)
		if got := int(a["trials"].(float64)); got != 2*n {
			t.Errorf("%v: %d trials, want one per chain, %d", c.flags, got, 2*n)
		}
		if eps := a["epsilon"].(map[string]any)["epsilon"].(float64); !(eps > 0) {
			t.Errorf("%v: ε_lb %v: the sides differ by 1.5 standard deviations", c.flags, eps)
		}
		var doc struct {
			Samples struct {
				Dim    int
				Points []string
				Files  []struct {
					Runs   int
					Chains []struct{ Path string }
				}
				Stan struct {
					Draws         []int
					DrawsPerChain int `json:"draws_per_chain"`
					Columns       []string
				}
			}
		}
		readJSON(t, stanJSON, &doc)
		wantPoints := []string{fmt.Sprintf("draw %d", draws)}
		if len(c.pick) == 2 {
			wantPoints = []string{"draw 10", fmt.Sprintf("draw %d", draws)}
		}
		s := doc.Samples
		if s.Dim != 2 || !reflect.DeepEqual(s.Points, wantPoints) || !reflect.DeepEqual(s.Stan.Columns, []string{"theta.1", "theta.2"}) || s.Stan.DrawsPerChain != draws {
			t.Errorf("%v: samples %+v", c.flags, s)
		}
		if len(s.Files) != 2 || s.Files[0].Runs != n || len(s.Files[1].Chains) != n || !strings.HasSuffix(s.Files[0].Chains[5].Path, "chain-0005.csv.gz") {
			t.Errorf("%v: files %+v", c.flags, s.Files)
		}
		notes := fmt.Sprint(a["notes"])
		if !strings.Contains(notes, "every chain is an independent run") || !strings.Contains(notes, "columns theta.1, theta.2") {
			t.Errorf("%v: notes %s", c.flags, notes)
		}
	}
}

// --param picks the columns of the release vector by parameter name, in
// the order given, and --stan-columns keeps lp__ and the sampler's.
func TestAnalyzeStanColumns(t *testing.T) {
	dir := t.TempDir()
	dirs, _ := writeStanDirs(t, dir, 12, 5)
	for _, c := range []struct {
		flags []string
		cols  []string
	}{
		{[]string{"--param", "theta"}, []string{"theta.1", "theta.2"}},
		{[]string{"--param", "theta.2,lp__"}, []string{"theta.2", "lp__"}},
		{[]string{"--stan-columns"}, []string{"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__", "theta.1", "theta.2"}},
	} {
		out := filepath.Join(dir, "r.json")
		os.Remove(out)
		args := append([]string{"analyze", dirs[0], dirs[1], "--json", out}, c.flags...)
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d %s", c.flags, code, errs)
		}
		var doc struct {
			Samples struct {
				Dim  int
				Stan struct{ Columns []string }
			}
		}
		readJSON(t, out, &doc)
		if doc.Samples.Dim != len(c.cols) || !reflect.DeepEqual(doc.Samples.Stan.Columns, c.cols) {
			t.Errorf("%v: dim %d columns %v, want %v", c.flags, doc.Samples.Dim, doc.Samples.Stan.Columns, c.cols)
		}
	}
}

// A CmdStan file given as a file of runs, and bad directories of chains,
// are refused with one line naming the file and what is wrong, exit 2.
func TestAnalyzeStanRefusals(t *testing.T) {
	dir := t.TempDir()
	dirs, chains := writeStanDirs(t, dir, 3, 6)
	good := filepath.Join(dirs[0], "chain-0000.csv")
	plain := filepath.Join(dir, "plain.csv")
	os.WriteFile(plain, []byte("1,2\n3,4\n"), 0o644)
	noComments := filepath.Join(dir, "nocomments.csv")
	text := stanText(chains[0][0], "")
	os.WriteFile(noComments, []byte(text[strings.Index(text, "lp__"):strings.Index(text, "# Adaptation")]), 0o644)
	mkdir := func(name string, files map[string]string) string {
		d := filepath.Join(dir, name)
		os.Mkdir(d, 0o755)
		for n, body := range files {
			os.MkdirAll(filepath.Dir(filepath.Join(d, n)), 0o755)
			os.WriteFile(filepath.Join(d, n), []byte(body), 0o644)
		}
		return d
	}
	c0, c1 := chains[0][0], chains[0][1]
	short := c1
	short.draws = short.draws[:4]
	nan := stanText(c1, "")
	nan = strings.Replace(nan, ","+formatG(c1.draws[5][1])+"\n", ",nan\n", 1)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{good, plain}, good + ": CmdStan output: its rows are the draws of ONE chain"},
		{[]string{plain, noComments}, noComments + ": CmdStan output"},
		{[]string{dirs[0], plain}, "is a directory, " + plain + " is not"},
		{[]string{mkdir("empty", map[string]string{"notes.txt": "x"}), dirs[1]}, "empty: no CmdStan chain file"},
		{[]string{mkdir("hdr", map[string]string{"a.csv": stanText(c0, ""), "b.csv": stanText(c1, ",mu")}), dirs[1]}, "b.csv: line 9: 10 columns, " + filepath.Join(dir, "hdr", "a.csv") + " has 9"},
		{[]string{dirs[0], mkdir("hdr2", map[string]string{"a.csv": strings.Replace(stanText(c0, ""), "theta.2", "theta.3", 1)})}, "a.csv: line 9: column 9 is \"theta.3\""},
		{[]string{mkdir("short", map[string]string{"a.csv": stanText(c0, ""), "b.csv": stanText(short, "")}), dirs[1]}, "b.csv: 4 draws, " + filepath.Join(dir, "short", "a.csv") + " has 6"},
		{[]string{dirs[0], dirs[1], "--draws", "7"}, "chain-0000.csv: 6 draws after warmup, too few for --draws 7"},
		{[]string{dirs[0], dirs[1], "--draws", "-1,6"}, "--draws: -1 and 6 are the same draw (of 6)"},
		{[]string{dirs[0], dirs[1], "--draws", "0"}, "--draws: must be comma-separated draw indices"},
		{[]string{dirs[0], dirs[1], "--param", "sigma"}, "--param: no column of \"sigma\""},
		{[]string{dirs[0], dirs[1], "--points", "2"}, "--points: not with directories"},
		{[]string{plain, plain, "--draws", "-1"}, "--draws: only with two directories"},
		{[]string{mkdir("nan", map[string]string{"a.csv": nan}), dirs[1]}, "a.csv: line 26, column \"theta.2\": must be a finite number"},
		{[]string{mkdir("nohdr", map[string]string{"a.csv": "# stan_version_major = 2\n1,2\n"}), dirs[1]}, "a.csv: line 2: a draw before the header"},
		{[]string{mkdir("nodraws", map[string]string{"a.csv": "# x\nlp__,theta\n# y\n"}), dirs[1]}, "a.csv: no draws"},
		{[]string{mkdir("subdir", map[string]string{"x.csv/a.csv": ""}), dirs[1]}, "cannot read " + filepath.Join(dir, "subdir", "x.csv") + ": it is a directory"},
		{[]string{mkdir("onlysampler", map[string]string{"a.csv": "lp__,accept_stat__\n1,2\n"}), dirs[1]}, "a.csv: no parameter column"},
	}
	for _, c := range cases {
		_, errs, code := runCLI(t, append([]string{"analyze"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("analyze %v: exit %d, stderr %q; want %q", c.args, code, errs, c.want)
		}
	}
}

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
