//go:build slow

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Parts are self-contained: shards of a CSV scenario with a DeepFool
// canary (digits-sgld, few trials) run in one directory and merged from
// another that holds neither the scenario nor its data give the report of
// a single run, byte for byte (the canary is not crafted again: the parts
// carry the audit's design); a part that was tampered with is refused,
// naming what is wrong.
func TestMergeAnywhere(t *testing.T) {
	scen, err := filepath.Abs("../../testdata/digits-sgld.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work, elsewhere := t.TempDir(), t.TempDir()
	single := filepath.Join(work, "single.json")
	if _, errs, code := runCLI(t, "run", scen, "--trials", "60", "--json", single, "--quiet"); code != 0 {
		t.Fatalf("single run: exit %d %s", code, errs)
	}
	var parts []string
	for i := 0; i < 2; i++ {
		p := filepath.Join(work, fmt.Sprintf("part-%d", i))
		if _, errs, code := runCLI(t, "run", scen, "--trials", "60", "--shard", fmt.Sprintf("%d/2", i), "--out", p, "--quiet"); code != 0 {
			t.Fatalf("shard %d: exit %d %s", i, code, errs)
		}
		parts = append(parts, p)
	}
	t.Chdir(elsewhere)
	merged := filepath.Join(elsewhere, "merged.json")
	if _, errs, code := runCLI(t, append([]string{"merge", "--json", merged}, parts...)...); code != 0 {
		t.Fatalf("merge from another directory: exit %d %s", code, errs)
	}
	a, _ := os.ReadFile(single)
	b, _ := os.ReadFile(merged)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("the merged report differs from the single run's")
	}
	// Flip one byte of the design part-0 carries (in place of the data,
	// which a merge no longer needs): its checksum catches it.
	raw, _ := os.ReadFile(parts[0])
	i := bytes.Index(raw, []byte(`"design":{`))
	if i < 0 || bytes.Contains(raw, []byte(`"files":{`)) {
		t.Fatal("part-0 carries no design, or carries the data files")
	}
	raw[i+200] ^= 1
	bad := filepath.Join(elsewhere, "bad")
	os.WriteFile(bad, raw, 0o644)
	if _, errs, code := runCLI(t, "merge", bad, parts[1]); code != exitUsage || !bytes.Contains([]byte(errs), []byte("checksum")) {
		t.Errorf("tampered part: exit %d %q", code, errs)
	}
}
