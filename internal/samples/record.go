package samples

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Recorder wraps a mechanism and keeps every trial's releases, for
// "audit run --save-releases".
type Recorder struct {
	mechanisms.Mechanism
	points []mechanisms.ReleasePoint
	rows   [][]float64
	sides  []dataset.Side
}

// Run implements mechanisms.Mechanism.
func (r *Recorder) Run(ctx context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	dim := r.Dim()
	row := make([]float64, len(r.points)*dim)
	info, err := r.Mechanism.Run(ctx, t, d, func(k int, theta []float64) error {
		if k >= 0 && k < len(r.points) {
			copy(row[k*dim:], theta)
		}
		return emit(k, theta)
	})
	if err == nil {
		r.rows[t.Index], r.sides[t.Index] = row, t.Side
	}
	return info, err
}

// Name implements mechanisms.Namer.
func (r *Recorder) Name() string { return mechanisms.NameOf(r.Mechanism) }

// Check implements mechanisms.Checker.
func (r *Recorder) Check(d *dataset.Dataset) error {
	if c, ok := r.Mechanism.(mechanisms.Checker); ok {
		return c.Check(d)
	}
	return nil
}

// ChecksDeterminism implements audit.SelfChecking when the recorded
// mechanism checks its own determinism (a program).
func (r *Recorder) ChecksDeterminism() bool {
	s, ok := r.Mechanism.(audit.SelfChecking)
	return ok && s.ChecksDeterminism()
}

// Guarantees implements mechanisms.Guarantor.
func (r *Recorder) Guarantees(p dataset.Pair, at mechanisms.ReleasePoint) []closedform.Guarantee {
	return mechanisms.Guarantees(r.Mechanism, p, at)
}

// RecordReleases rebuilds the plan's audit around a recorder.
func RecordReleases(plan *scenario.Plan) (*Recorder, error) {
	a := plan.Audit
	t := a.Target()
	n := a.Options().Trials
	rec := &Recorder{Mechanism: t.Mechanism, points: a.Points(), rows: make([][]float64, n), sides: make([]dataset.Side, n)}
	t.Mechanism = rec
	b, err := audit.New(t, a.Options())
	if err == nil {
		b, err = b.WithExecution(a.Execution())
	}
	if err != nil {
		return nil, err
	}
	plan.Audit = b
	return rec, nil
}

// Write saves the runs on D and on D′ as PREFIX-D.csv and
// PREFIX-DPRIME.csv, with a trial column and columns LABEL[j].
func (r *Recorder) Write(e *cli.Env, prefix string) error {
	dim := r.Dim()
	var header bytes.Buffer
	header.WriteString("trial")
	for _, p := range r.points {
		for j := 0; j < dim; j++ {
			header.WriteString("," + csvQuote(fmt.Sprintf("%s[%d]", p.Label, j)))
		}
	}
	header.WriteByte('\n')
	for side, suffix := range []string{"-D.csv", "-DPRIME.csv"} {
		path := prefix + suffix
		err := cli.Output(path).Write(e, func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			bw.Write(header.Bytes())
			for i, row := range r.rows {
				if row == nil || int(r.sides[i]) != side {
					continue
				}
				bw.WriteString(strconv.Itoa(i))
				for _, v := range row {
					bw.WriteByte(',')
					bw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
				}
				bw.WriteByte('\n')
			}
			return bw.Flush()
		})
		if err != nil {
			return fmt.Errorf("--save-releases: cannot write %s: %v", path, err)
		}
	}
	return nil
}

// csvQuote quotes a field that needs it.
func csvQuote(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}
