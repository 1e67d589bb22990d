package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// goldenSummary extracts from a report (decoded JSON) the values the
// golden files of testdata/golden hold (see its README).
func goldenSummary(r map[string]any) map[string]any {
	num := func(m any, key string) any {
		if v, ok := m.(map[string]any)[key]; ok {
			return v
		}
		return 0.0
	}
	if c, ok := r["canaries"].(map[string]any); ok {
		return oneRunSummary(r, c)
	}
	// A claim is tested once (claim_tests): it is refuted at the release
	// its test was made at, and nowhere else.
	refutedAt := map[[2]int]bool{}
	tests, _ := r["claim_tests"].([]any)
	for ci, tv := range tests {
		ct := tv.(map[string]any)
		if ref, ok := ct["refutation"].(map[string]any); ok && ref["refuted"].(bool) {
			refutedAt[[2]int{int(ct["point"].(float64)), ci}] = true
		}
	}
	var points []any
	for k, pv := range r["points"].([]any) {
		p := pv.(map[string]any)
		var atks, claims []any
		for _, av := range p["attacks"].([]any) {
			a := av.(map[string]any)
			atks = append(atks, map[string]any{"attack": a["attack"], "rule": a["rule"], "gdp_rule": a["gdp_rule"], "counts": a["counts"], "gdp_counts": a["gdp_counts"]})
		}
		cs, _ := p["claims"].([]any)
		for ci, cv := range cs {
			c := cv.(map[string]any)
			claims = append(claims, map[string]any{"name": c["name"], "epsilon_at_delta": c["epsilon_at_delta"], "refuted": refutedAt[[2]int{k, ci}]})
		}
		if claims == nil {
			claims = []any{}
		}
		points = append(points, map[string]any{
			"label": p["point"].(map[string]any)["label"], "best": p["best"], "best_gdp": p["best_gdp"],
			"region":  map[string]any{"epsilon": num(p["region"], "epsilon"), "counts": p["region"].(map[string]any)["counts"]},
			"gdp":     map[string]any{"mu": num(p["gdp"], "mu"), "epsilon": num(p["gdp"], "epsilon"), "counts": p["gdp"].(map[string]any)["counts"]},
			"ceiling": num(p["ceiling"], "epsilon"), "attacks": atks, "claims": claims,
		})
	}
	return map[string]any{"headline": r["headline"], "verdict": r["verdict"], "epsilon": num(r["epsilon"], "epsilon"), "points": points}
}

// oneRunSummary is goldenSummary for a canary design: per release point
// the guesses behind the one-run bound, its ε_lb, the f-DP bound's μ_lb,
// the descriptive AUROC and the claims' outcomes (refuted: rejected at a
// release the verdict rests on, the headline or every release when it is
// -1), read from the points every design reports.
func oneRunSummary(r, canaries map[string]any) map[string]any {
	headline := r["headline"].(float64)
	var points []any
	for k, pv := range r["points"].([]any) {
		p := pv.(map[string]any)
		e, f := p["one_run"].(map[string]any), p["one_run_fdp"].(map[string]any)
		var claims []any
		cs, _ := p["claims"].([]any)
		for _, cv := range cs {
			c := cv.(map[string]any)
			rejected, _ := c["rejected"].(bool)
			claims = append(claims, map[string]any{"name": c["name"], "refuted": rejected && (headline < 0 || float64(k) == headline)})
		}
		points = append(points, map[string]any{"label": p["point"].(map[string]any)["label"], "counts": e["guesses"],
			"epsilon": e["epsilon"], "mu": f["mu"], "auroc": p["descriptive"].(map[string]any)["auroc"], "claims": claims})
	}
	return map[string]any{"verdict": r["verdict"], "headline": r["headline"], "included": canaries["included"], "points": points}
}

// compareGolden reports every difference between want and got: the
// golden values must be reproduced exactly (a change is made on purpose,
// with "go test -update", and reviewed as the diff of the golden file).
func compareGolden(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		var out []string
		for k, v := range w {
			out = append(out, compareGolden(path+"/"+k, v, g[k])...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s/%s: new, not in the golden file", path, k))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %d elements, want %d", path, len(g), len(w))}
		}
		var out []string
		for i := range w {
			out = append(out, compareGolden(fmt.Sprintf("%s/%d", path, i), w[i], g[i])...)
		}
		return out
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return []string{fmt.Sprintf("%s: %v, want %v", path, got, want)}
	}
	return nil
}

// checkGolden compares a report with testdata/golden/NAME.json when it
// exists, or rewrites that existing file under -update.
func checkGolden(t *testing.T, name, reportJSON string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	var doc struct {
		Report map[string]any `json:"report"`
	}
	if err := json.Unmarshal([]byte(reportJSON), &doc); err != nil {
		t.Fatal(err)
	}
	// Round trip through JSON so that the summary holds the same types as
	// a decoded golden file.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(goldenSummary(doc.Report)); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	wb, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return // scenarios without a golden file (see its README)
	}
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(wb, &want); err != nil {
		t.Fatal(err)
	}
	diffs := compareGolden(name, want, got)
	for i, d := range diffs {
		if i == 10 {
			t.Errorf("… %d more differences", len(diffs)-10)
			break
		}
		t.Errorf("golden %s (go test -update rewrites it; review the diff)", d)
	}
}
