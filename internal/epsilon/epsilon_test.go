package epsilon

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// jsonOf runs f with the JSON on stdout and decodes it into v.
func jsonOf(t *testing.T, v any, f func(e *cli.Env, o cli.OutputFlags) error) {
	t.Helper()
	var out bytes.Buffer
	if err := f(&cli.Env{Stdout: &out, Stderr: io.Discard}, cli.OutputFlags{JSON: "-"}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
}

// Without errors the region bound is the ceiling the run counts allow;
// with errors it lies below; the plug-in estimate is above the bound.
func TestCounts(t *testing.T) {
	// The point estimate is +Inf without errors, which a float64 does not
	// decode: Report's other fields.
	type report struct {
		Counts     stats.Counts    `json:"counts"`
		Confidence float64         `json:"confidence"`
		Region     stats.Estimate  `json:"region"`
		Ceiling    stats.JSONFloat `json:"ceiling"`
		Point      struct {
			Epsilon stats.JSONFloat `json:"epsilon"`
		} `json:"point"`
		Note string `json:"note"`
	}
	var none, some report
	jsonOf(t, &none, func(e *cli.Env, o cli.OutputFlags) error {
		return Counts(e, stats.Counts{Negatives: 200, Positives: 200}, 1e-5, 0.95, o)
	})
	if none.Region.Epsilon <= 0 || none.Region.Epsilon != float64(none.Ceiling) {
		t.Errorf("no errors: region ε %g, ceiling %g; want equal and positive", none.Region.Epsilon, float64(none.Ceiling))
	}
	jsonOf(t, &some, func(e *cli.Env, o cli.OutputFlags) error {
		return Counts(e, stats.Counts{FP: 20, Negatives: 200, FN: 30, Positives: 200}, 1e-5, 0.95, o)
	})
	if !(some.Region.Epsilon > 0 && some.Region.Epsilon < float64(some.Ceiling) && float64(some.Point.Epsilon) > some.Region.Epsilon) {
		t.Errorf("with errors: region %g, ceiling %g, point %g; want 0 < region < ceiling, region < point",
			some.Region.Epsilon, float64(some.Ceiling), float64(some.Point.Epsilon))
	}
	if some.Note == "" || some.Confidence != 0.95 || some.Counts.FN != 30 {
		t.Errorf("the report lost its inputs or note: %+v", some)
	}
	// The table says when the bound is at its ceiling.
	var table bytes.Buffer
	if err := Counts(&cli.Env{Stdout: &table, Stderr: io.Discard}, stats.Counts{Negatives: 200, Positives: 200}, 1e-5, 0.95, cli.OutputFlags{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "The region bound is at its ceiling") {
		t.Errorf("no ceiling note:\n%s", table.String())
	}
}

// Counts beyond their totals are usage errors naming the flag.
func TestCountsRefused(t *testing.T) {
	e := &cli.Env{Stdout: io.Discard, Stderr: io.Discard}
	err := Counts(e, stats.Counts{FP: 10, Negatives: 5, Positives: 5}, 1e-5, 0.95, cli.OutputFlags{})
	var u cli.UsageError
	if !errors.As(err, &u) || u.Msg != "--fp: must be in [0, negatives=5], got 10" {
		t.Errorf("fp > negatives: %v", err)
	}
	err = OneRun(e, stats.OneRunCounts{Canaries: 10, Guesses: 11}, 1e-5, 0.95, cli.OutputFlags{})
	if !errors.As(err, &u) || u.Msg != "--guesses: must be in [0, canaries=10], got 11" {
		t.Errorf("guesses > canaries: %v", err)
	}
}

// A one-run audit whose guesses are all correct reaches its ceiling;
// fewer correct guesses give a smaller ε.
func TestOneRun(t *testing.T) {
	var all, most OneRunReport
	jsonOf(t, &all, func(e *cli.Env, o cli.OutputFlags) error {
		return OneRun(e, stats.OneRunCounts{Canaries: 1000, Guesses: 100, Correct: 100}, 1e-5, 0.95, o)
	})
	jsonOf(t, &most, func(e *cli.Env, o cli.OutputFlags) error {
		return OneRun(e, stats.OneRunCounts{Canaries: 1000, Guesses: 100, Correct: 80}, 1e-5, 0.95, o)
	})
	if all.OneRun.Epsilon <= 0 || all.OneRun.Epsilon != float64(all.Ceiling) {
		t.Errorf("all correct: ε %g, ceiling %g; want equal and positive", all.OneRun.Epsilon, float64(all.Ceiling))
	}
	if !(most.OneRun.Epsilon < all.OneRun.Epsilon) || float64(most.Ceiling) != float64(all.Ceiling) {
		t.Errorf("80 of 100 correct: ε %g (all: %g), ceiling %g (all: %g)", most.OneRun.Epsilon, all.OneRun.Epsilon, float64(most.Ceiling), float64(all.Ceiling))
	}
}
