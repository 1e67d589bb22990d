package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// audit analyze of samples files whose header names the releases by
// epoch ("epoch 5", "epoch 10", "epoch 20") draws them on an axis of
// epochs at 5, 10 and 20 — not on one of iterations 1, 2, 3, which the
// files never gave.
func TestAnalyzePlotAxisFromLabels(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []struct {
		name  string
		shift float64
	}{{"d.csv", 0}, {"dp.csv", 1}} {
		var b strings.Builder
		b.WriteString("epoch 5,epoch 10,epoch 20\n")
		for i := range 200 {
			// Deterministic, spread values: a fixed sequence, not a generator.
			u := math.Mod(float64(i)*0.6180339887, 1)
			fmt.Fprintf(&b, "%.6f,%.6f,%.6f\n", u+f.shift/3, u+2*f.shift/3, u+f.shift)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svg := filepath.Join(dir, "p.svg")
	if _, errs, code := runCLI(t, "analyze", filepath.Join(dir, "d.csv"), filepath.Join(dir, "dp.csv"), "--plot", svg); code != exitOK {
		t.Fatalf("analyze: exit %d %s", code, errs)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgRuns(string(b))
	has := func(s string) bool {
		for _, x := range texts {
			if x == s {
				return true
			}
		}
		return false
	}
	if !has("epoch") || has("iteration") {
		t.Errorf("x axis: epoch %v, iteration %v; want epochs only: %q", has("epoch"), has("iteration"), texts)
	}
	if !has("20") || !has("10") {
		t.Errorf("no ticks at epochs 10 and 20: %q", texts)
	}
}
