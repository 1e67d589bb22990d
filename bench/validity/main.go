// Command validity measures how often the path audits claim more than is
// true: over many seeds of the same scenario, the rate at which a canary
// with no contribution gets ε_lb > 0 or μ_lb > 0 (null), at which a path
// whose μ is known exactly gets μ_lb > μ or ε_lb above the μ-GDP ε at δ,
// and at which a correct configuration's theorem claim is refuted. Each
// rate is printed with its two-sided 95% Clopper–Pearson interval, as a
// Markdown table (docs/derivations/path.md, "Validity").
//
// Every audit runs in this process on one worker, through the scenario
// package (LoadConfig, Build, Simulate, Analyze), with the scenario's seed
// replaced by 1, 2, …; everything else is the file's, after the --set
// settings and audit.trials = -runs.
//
//	go run ./bench/validity                      # the table of the docs (about 25 min of CPU)
//	go run ./bench/validity -file F -seeds 200   # any scenario, e.g. a testdata/bugs correct one
//	go run ./bench/validity -file F -seeds 500 -mu 1.5 -set sampler.sgld.clip=1
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// sets is a repeatable -set flag.
type sets []string

func (s *sets) String() string     { return strings.Join(*s, " ") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

// Table returns the rows of the docs' validity table, with the scenario
// files under root (the repository's root directory).
func Table(root string, seedsFull, seedsPoisson, runs int) []Row {
	full := filepath.Join(root, "testdata/tight/dp-sgld-full-path.yaml")
	poisson := filepath.Join(root, "testdata/tight/dp-sgld-poisson-path.yaml")
	null := "sampler.sgld.plant.clip=1e-9"
	return []Row{
		{Label: "null, full batch", File: full, Sets: []string{null}, Seeds: seedsFull, First: 1, Runs: runs, Null: true},
		{Label: "null, Poisson", File: poisson, Sets: []string{null}, Seeds: seedsPoisson, First: 1, Runs: runs, Null: true},
		{Label: "known μ, full batch (correct)", File: full, Seeds: seedsFull, First: 1, Runs: runs, Mu: 1.5},
		{Label: "known μ, full batch, clip 0.5", File: full, Sets: []string{"sampler.sgld.clip=0.5"}, Seeds: seedsFull, First: 1, Runs: runs, Mu: 0.75},
		{Label: "correct, Poisson", File: poisson, Seeds: seedsPoisson, First: 1, Runs: runs},
		// DP-HMC and DP-penalty at the bound are μ-GDP paths with the
		// theorems' μ (docs/derivations/path-hmc.md); DP-Barker's correct
		// file is tested against its theorem and its path's exact profile.
		{Label: "known μ, DP-HMC (correct)", File: filepath.Join(root, "testdata/tight/dp-hmc-path.yaml"), Seeds: seedsPoisson, First: 1, Runs: runs, Mu: math.Sqrt(30)},
		{Label: "known μ, DP-penalty (correct)", File: filepath.Join(root, "testdata/tight/dp-penalty-path.yaml"), Seeds: seedsPoisson, First: 1, Runs: runs, Mu: math.Sqrt(20.0 / 9)},
		{Label: "correct, DP-Barker", File: filepath.Join(root, "testdata/bugs/dp-barker-correct.yaml"), Seeds: seedsPoisson, First: 1, Runs: runs},
	}
}

func main() {
	var (
		file  = flag.String("file", "", "a scenario file (default: the table of the docs)")
		seeds = flag.Int("seeds", 0, "audits per row, seeds first, first+1, … (default: 500 with -file; 500 full batch and 200 Poisson for the table)")
		first = flag.Uint64("first", 1, "the first seed")
		runs  = flag.Int("runs", 10000, "runs per audit (audit.trials; 0: the file's, as the canary design needs)")
		mu    = flag.Float64("mu", 0, "the exact μ of the runs, when known (counts μ_lb > μ and ε_lb > ε_μ(δ))")
		label = flag.String("label", "", "the row's label (default: the file's name)")
		root  = flag.String("root", ".", "the repository's root (for the table's files)")
		set   sets
	)
	flag.Var(&set, "set", "FIELD=VALUE applied to the scenario, as audit run --set (repeatable)")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(2, fmt.Errorf("unexpected argument %q (flags only)", flag.Arg(0)))
	}
	if *seeds < 0 || *runs == 1 || *runs < 0 || *mu < 0 {
		fail(2, fmt.Errorf("-seeds must be ≥ 1, -runs 0 or ≥ 2 and -mu ≥ 0 (got %d, %d, %g)", *seeds, *runs, *mu))
	}
	if *file == "" && (len(set) > 0 || *mu > 0 || *label != "") {
		fail(2, fmt.Errorf("-set, -mu and -label apply to a -file row; the docs' table fixes its own"))
	}
	var rows []Row
	if *file == "" {
		sf, sp := 500, 200
		if *seeds > 0 {
			sf, sp = *seeds, *seeds
		}
		rows = Table(*root, sf, sp, *runs)
		for i := range rows {
			rows[i].First = *first
		}
	} else {
		n := *seeds
		if n == 0 {
			n = 500
		}
		l := *label
		if l == "" {
			l = strings.TrimSuffix(filepath.Base(*file), ".yaml")
		}
		rows = []Row{{Label: l, File: *file, Sets: set, Seeds: n, First: *first, Runs: *runs, Mu: *mu}}
	}
	for _, row := range rows {
		if err := Check(row); err != nil {
			fail(2, err)
		}
	}
	var results []Result
	for _, row := range rows {
		fmt.Fprintf(os.Stderr, "%s: %d seeds × %d runs\n", row.Label, row.Seeds, row.Runs)
		res, err := Run(context.Background(), row, os.Stderr)
		if err != nil {
			fail(3, err)
		}
		results = append(results, res)
	}
	if err := WriteTable(os.Stdout, results); err != nil {
		fail(3, err)
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "validity:", err)
	os.Exit(code)
}
