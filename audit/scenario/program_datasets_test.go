package scenario

import (
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/report"
)

// programDatasetsBase is a program that owns its data (a POSIX shell
// one-liner releasing its seed) with sampler.program.datasets set to %s.
const programDatasetsBase = `
name: described
seed: 1
sampler:
  program:
    command: [sh, -c, 'echo "{\"mcmcaudit\": 1, \"dim\": 1, \"releases\": [\"final\"]}"; while read -r l; do t=${l#*\"trial\": }; s=${l##*\"seed\": }; echo "{\"trial\": ${t%%,*}, \"releases\": [[${s%\}}]]}"; done']
    datasets: %s
audit:
  trials: 20
  split: {train: 0.5, eval: 0.5}
  delta: 1.0e-5
  confidence: 0.95
`

// The datasets a program's caller describes reach the design, hence every
// report: names, record counts, adjacency and note, in place of "owned by
// the mechanism".
func TestProgramDatasetsDescribed(t *testing.T) {
	yml := strings.Replace(programDatasetsBase, "%s", "{d: {name: D, records: 3}, d_prime: {name: D′, records: 4}, adjacency: add-one, note: 'the record [1.0] appended'}", 1)
	cfg, err := ParseConfig([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	d := p.Audit.Design()
	if d.D == nil || d.DPrime == nil || *d.D != (audit.DatasetInfo{Name: "D", Records: 3}) || *d.DPrime != (audit.DatasetInfo{Name: "D′", Records: 4}) {
		t.Fatalf("design datasets %+v, %+v", d.D, d.DPrime)
	}
	if d.Adjacency != "add-one" || d.PairNote != "the record [1.0] appended" {
		t.Errorf("adjacency %q, note %q", d.Adjacency, d.PairNote)
	}
	line := report.DatasetsLine(&audit.Report{D: d.D, DPrime: d.DPrime, Adjacency: d.Adjacency, PairNote: d.PairNote})
	if want := "D = D (3 records), D′ = D′, add-one: the record [1.0] appended"; line != want {
		t.Errorf("datasets line %q, want %q", line, want)
	}
	// Without an adjacency the line says that none is stated, and counts D′'s records.
	line = report.DatasetsLine(&audit.Report{D: d.D, DPrime: d.DPrime})
	if !strings.Contains(line, "D′ = D′ (4 records)") || !strings.Contains(line, "adjacency not stated") || strings.Contains(line, "owned by") {
		t.Errorf("datasets line without adjacency: %q", line)
	}
}

// Bad descriptions are refused with one line naming the field.
func TestProgramDatasetsErrors(t *testing.T) {
	for _, c := range []struct{ datasets, extra, want string }{
		{"{d: {name: D, records: 3}, d_prime: {name: D′, records: 3}, adjacency: swap}", "", "sampler.program.datasets.adjacency: must be replace-one, remove-one or add-one"},
		{"{d: {name: D, records: -1}, d_prime: {name: D′, records: 3}}", "", "sampler.program.datasets.d.records: must be >= 0"},
		{"{d: {name: D, records: 1}, d_prime: {records: 3}}", "", "sampler.program.datasets.d_prime.name: required"},
		{"{d: {name: D, records: 1}, d_prime: {name: E, records: 1}}", "data: {records: [{x: [0]}]}\n", "sampler.program.datasets: describes datasets the program gets from elsewhere"},
	} {
		yml := strings.Replace(programDatasetsBase, "%s", c.datasets, 1) + c.extra
		_, err := ParseConfig([]byte(yml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.datasets, err, c.want)
		}
	}
}
