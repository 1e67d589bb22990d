package scenario

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// buildErr builds a config and returns Build's error message.
func buildErr(t *testing.T, c *Config) string {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := Build(c); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			return ""
		}
		// The line the error is located at is checked by the decoder's
		// tests; here the message.
		return regexp.MustCompile(`^line [0-9]+: `).ReplaceAllString(err.Error(), "")
	case <-time.After(30 * time.Second):
		t.Fatal("Build hangs")
		return ""
	}
}

// The data-size limit applies to inline records as to synthetic data: at
// most MaxRecords records and MaxDataValues values.
func TestInlineRecordsLimited(t *testing.T) {
	for _, c := range []struct {
		n, dim int
		want   string
	}{
		{MaxRecords + 1, 1, "data.records: must be ≤ 1000000 records, got 1000001"},
		{1_000_000, 21, "data.records: 1000000 records × 21 features exceed the limit of 20000000 values"},
	} {
		cfg, err := ParseConfig([]byte(gaussScenario(1, 40, 1, "[threshold]")))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Model.LinReg.D = c.dim
		recs := make([]dataset.Record, c.n)
		x := make([]float64, c.dim)
		for i := range recs {
			recs[i].X = x
		}
		cfg.Data.Records = recs
		if got := buildErr(t, cfg); got != c.want {
			t.Errorf("%d records of %d features: %q, want %q", c.n, c.dim, got, c.want)
		}
	}
}

const csvScenario = `
name: csv
seed: 1
model: {linreg: {dim: 2, alpha: 1, beta: 1}}
data:
  csv: {path: data.csv, options: {real_labels: true}}
neighbour: {adjacency: replace-one, index: 0, record: {x: [1, 1], y: 1}}
sampler: {gaussian_query: {sigma: 1}}
audit: {trials: 40, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
`

// data.csv is scanned before it is read: its width against the model at
// the first row, a FIFO or a directory refused without blocking, and a
// file of the right shape accepted (the scan and the reader agree).
func TestCSVScannedBeforeLoading(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scen.yaml")
	os.WriteFile(path, []byte(csvScenario), 0o644)
	load := func() *Config {
		c, err := LoadConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	data := filepath.Join(dir, "data.csv")
	os.WriteFile(data, []byte("1,2,3,4,5\n1,2,3\n"), 0o644)
	if got := buildErr(t, load()); got != "data.csv: line 1 has 5 columns; the model (linreg(d=2, alpha=1, beta=1)) needs 3: 2 features and a label" {
		t.Errorf("wide: %q", got)
	}
	os.WriteFile(data, []byte("1,2,3\n4,5,6\n"), 0o644)
	if got := buildErr(t, load()); got != "" {
		t.Errorf("a good file: %q", got)
	}
	os.Remove(data)
	if err := syscall.Mkfifo(data, 0o644); err != nil {
		t.Skip(err)
	}
	if got := buildErr(t, load()); !strings.HasPrefix(got, "data.csv.path: ") || !strings.HasSuffix(got, "data.csv is not a regular file (a FIFO)") {
		t.Errorf("FIFO: %q", got)
	}
	os.Remove(data)
	os.Mkdir(data, 0o755)
	if got := buildErr(t, load()); !strings.HasSuffix(got, "data.csv is not a regular file (a directory)") {
		t.Errorf("directory: %q", got)
	}
}
