package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const poolScenario = `
name: pool
seed: 3
sampler:
  program:
    command: [/nonexistent/sampler]
audit:
  design: canaries
  canaries: {count: 5, kind: mislabel, pool: pool.csv, guesses: 2}
  delta: 1.0e-5
  confidence: 0.95
`

// Mislabel canaries from a pool file, for a program that loads its data
// itself: every canary is a record of the pool with another of its K
// labels (K = 3 here, from the pool), and the file's digest is pinned.
func TestCanaryPool(t *testing.T) {
	dir := t.TempDir()
	pool := "x1,x2,y\n0.1,0.2,0\n0.3,0.4,1\n0.5,0.6,2\n0.7,0.8,1\n"
	if err := os.WriteFile(filepath.Join(dir, "pool.csv"), []byte(pool), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig([]byte(poolScenario))
	if err != nil {
		t.Fatal(err)
	}
	c.baseDir = dir
	cs, err := drawCanaries(c, &Plan{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[[2]float64]float64{{0.1, 0.2}: 0, {0.3, 0.4}: 1, {0.5, 0.6}: 2, {0.7, 0.8}: 1}
	seen := map[[2]float64]int{}
	for _, r := range cs {
		key := [2]float64{r.X[0], r.X[1]}
		y, ok := labels[key]
		if !ok || r.Y == y || r.Y < 0 || r.Y > 2 || r.Y != float64(int(r.Y)) {
			t.Errorf("canary %+v: not a pool record with another of its 3 labels", r)
		}
		seen[key]++
	}
	// Five canaries from four records: every record once before any twice.
	if len(cs) != 5 || len(seen) != 4 {
		t.Errorf("%d canaries from %d records", len(cs), len(seen))
	}
	if len(c.Audit.Canaries.PoolSHA256) != 64 {
		t.Errorf("digest not pinned: %q", c.Audit.Canaries.PoolSHA256)
	}
	// A changed file is refused against the pinned digest.
	os.WriteFile(filepath.Join(dir, "pool.csv"), []byte(pool+"0.9,1.0,0\n"), 0o644)
	c.files = nil
	if _, err := drawCanaries(c, &Plan{}, nil); err == nil || !strings.Contains(err.Error(), "PoolSHA256") || !strings.Contains(err.Error(), "the scenario pins") {
		t.Errorf("changed pool: error %v", err)
	}
}

// The pool's field errors.
func TestCanaryPoolErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"kind: mislabel, pool: pool.csv", "kind: random, pool: pool.csv, features: 2, classes: 2, range: [0, 1]", "audit.canaries.pool: only with kind: mislabel"},
		{"pool: pool.csv", "pool_sha256: abc", "audit.canaries.pool: required with pool_sha256"},
		{"pool: pool.csv", "pool: pool.csv, features: 3", "audit.canaries.features"},
	} {
		_, err := ParseConfig([]byte(strings.Replace(poolScenario, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.to, err, c.want)
		}
	}
}
