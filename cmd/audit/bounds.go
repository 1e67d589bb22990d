package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// boundRow is one guarantee in "audit bounds --json".
type boundRow struct {
	Source     string             `json:"source"`
	Variant    string             `json:"variant,omitempty"`
	Release    string             `json:"release"`
	Applies    bool               `json:"applies"`
	Reason     string             `json:"reason,omitempty"`
	Epsilon    *stats.JSONFloat   `json:"epsilon,omitempty"`
	Delta      float64            `json:"delta"`
	Iterations int                `json:"iterations"`
	Checks     []closedform.Check `json:"checks"`
	Note       string             `json:"note,omitempty"`
}

func runBounds(args []string, e *env) error {
	fs := newFlagSet("bounds [scenario.yaml] [--delta D] [--iterations K] [--json FILE]",
		"Lists every theoretical upper bound of the papers for a scenario's sampler on its adjacent datasets:\n"+
			"the theorem, the assumptions checked with their numbers, and ε at δ — or why the theorem does not\n"+
			"apply. Without a scenario it uses the built-in one.")
	var delta float64
	var iters int
	var jsonOut string
	fs.floatVar(&delta, "delta", math.NaN(), "(0, 1)", inUnitOpen, "δ at which to report ε (default: the scenario's audit.delta), in")
	fs.intVar(&iters, "iterations", 0, 0, 1<<40, "iterations of the released state (0: the whole run),")
	fs.StringVar(&jsonOut, "json", "", "write the guarantees as JSON to FILE (- for stdout)")
	if err := fs.parse(args, e, 1); err != nil {
		return err
	}
	out := output(jsonOut)
	var inputs []namedInput
	if fs.NArg() == 1 {
		inputs = append(inputs, namedInput{fs.Arg(0), "scenario file"})
	}
	if err := checkOutputs(e, []namedOutput{{out, "json"}}, inputs); err != nil {
		return err
	}
	cfg, err := loadScenario(fs)
	if err != nil {
		return err
	}
	plan, err := scenario.Build(cfg)
	if err != nil {
		return usageError{err.Error()}
	}
	if math.IsNaN(delta) {
		delta = cfg.Audit.Delta
		if delta <= 0 {
			return usagef("--delta: the scenario's audit.delta is 0; give --delta in (0, 1)")
		}
	}
	if iters == 0 {
		pts := plan.Points()
		iters = pts[len(pts)-1].Iteration
	}
	gs := mechanisms.Guarantees(plan.Mechanism, plan.Pair, mechanisms.ReleasePoint{Iteration: iters})
	var rows []boundRow
	for _, g := range gs {
		r := boundRow{Source: g.Source, Variant: g.Variant, Release: g.Release, Applies: g.Applies,
			Reason: g.Reason, Delta: delta, Iterations: iters, Checks: g.Checks, Note: g.Note}
		if g.Applies {
			eps, err := g.Epsilon(delta)
			if err != nil {
				return err
			}
			v := stats.JSONFloat(eps)
			r.Epsilon = &v
		}
		rows = append(rows, r)
	}
	if !out.toStdout() {
		w := e.stdout
		fmt.Fprintf(w, "scenario   %s\nmechanism  %s, %d iterations\ndatasets   %s (%d records) and %s, %s\n\n",
			cfg.Name, mechanisms.NameOf(plan.Mechanism), iters, plan.Pair.D.Name, plan.Pair.D.Len(), plan.Pair.DPrime.Name, plan.Pair.Adjacency)
		t := newTable(w, "theorem", "variant", "release", fmt.Sprintf("ε at δ = %g", delta), "assumptions")
		for _, r := range rows {
			eps := "does not apply"
			if r.Epsilon != nil {
				eps = stats.FormatFloat(float64(*r.Epsilon))
			}
			t.Append(r.Source, r.Variant, r.Release, eps, checksText(r))
		}
		t.Render()
		fmt.Fprintln(w, "Constants that depend on the data (gradient bounds) are taken over the records of D and D′.")
	}
	return out.write(e, func(w io.Writer) error {
		return writeJSONTo(w, map[string]any{"scenario": cfg.Name, "config_hash": plan.Hash, "guarantees": rows})
	})
}

func checksText(r boundRow) string {
	if !r.Applies {
		return "fails: " + r.Reason
	}
	var parts []string
	for _, c := range r.Checks {
		parts = append(parts, c.Name+" ("+c.Detail+")")
	}
	return strings.Join(parts, "; ")
}
