package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/pool"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// The sweep of "audit bounds --sweep": every theorem's ε at δ as one parameter of the
// scenario's sampler (or the number of iterations, the dataset size the
// theorems see, or the sampling ratio) runs over a range — Heikkilä et
// al.'s Fig. 1 (ε against the subsampling ratio q and against T for the
// subsampled Barker test) and, with --accuracy, Räisä et al.'s trade-off
// between ε and how well the sampler does (ε against τ, with the
// distance of the sampler's releases to the exact posterior measured by
// running it).

// Limits of a sweep.
const (
	maxSweepPoints   = 200
	maxSweepSeries   = 10
	MaxAccuracyRuns  = 100000
	defaultSweepSize = 10
)

// sweepFlags are the sweep's flags of "audit bounds".
type Flags struct {
	// Sweep is --sweep PARAM=FROM:TO[:N], Series --series PARAM=V1,V2,….
	Sweep, Series string
	// Sets are the --set PARAM=V, in order.
	Sets []string
	// Log is --log: geometric spacing and a log axis.
	Log bool
	// Accuracy is --accuracy RUNS (0: no accuracy runs).
	Accuracy int
}

// assignment sets one or several parameters to a value.
type assignment struct {
	names []string
	value float64
}

// parseAssign parses NAMES=VALUE.
func parseAssign(flag, s string) (assignment, error) {
	names, v, ok := strings.Cut(s, "=")
	if !ok || names == "" {
		return assignment{}, cli.Usagef("--%s: must be PARAM=VALUE, got %q", flag, s)
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return assignment{}, cli.Usagef("--%s: %s: value must be a finite number, got %q", flag, names, v)
	}
	return assignment{names: strings.Split(names, ","), value: x}, nil
}

// parseSweep parses NAMES=FROM:TO[:N] into the values of the sweep.
func parseSweep(s string, geometric bool) ([]string, []float64, error) {
	names, rng, ok := strings.Cut(s, "=")
	if !ok || names == "" {
		return nil, nil, cli.Usagef("--sweep: must be PARAM=FROM:TO[:N], got %q", s)
	}
	parts := strings.Split(rng, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, nil, cli.Usagef("--sweep: %s: range must be FROM:TO or FROM:TO:N, got %q", names, rng)
	}
	from, err1 := strconv.ParseFloat(parts[0], 64)
	to, err2 := strconv.ParseFloat(parts[1], 64)
	if err1 != nil || err2 != nil || math.IsInf(from, 0) || math.IsInf(to, 0) || math.IsNaN(from) || math.IsNaN(to) || !(to > from) {
		return nil, nil, cli.Usagef("--sweep: %s: FROM and TO must be finite numbers with FROM < TO, got %q", names, rng)
	}
	n := defaultSweepSize
	if len(parts) == 3 {
		var err error
		if n, err = strconv.Atoi(parts[2]); err != nil || n < 2 || n > maxSweepPoints {
			return nil, nil, cli.Usagef("--sweep: %s: N must be an integer in [2, %d], got %q", names, maxSweepPoints, parts[2])
		}
	}
	if geometric && !(from > 0) {
		return nil, nil, cli.Usagef("--sweep: %s: --log needs FROM > 0, got %g", names, from)
	}
	vals := make([]float64, n)
	for i := range vals {
		t := float64(i) / float64(n-1)
		if geometric {
			vals[i] = from * math.Pow(to/from, t)
		} else {
			vals[i] = from + (to-from)*t
		}
	}
	return strings.Split(names, ","), vals, nil
}

// parseSeries parses NAMES=V1,V2,….
func parseSeries(s string) ([]string, []float64, error) {
	names, list, ok := strings.Cut(s, "=")
	if !ok || names == "" || list == "" {
		return nil, nil, cli.Usagef("--series: must be PARAM=V1,V2,…, got %q", s)
	}
	var vals []float64
	for _, v := range strings.Split(list, ",") {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil, cli.Usagef("--series: %s: values must be finite numbers, got %q", names, v)
		}
		vals = append(vals, x)
	}
	if len(vals) > maxSweepSeries {
		return nil, nil, cli.Usagef("--series: at most %d values, got %d", maxSweepSeries, len(vals))
	}
	return strings.Split(names, ","), vals, nil
}

// sweepPoint is the sampler and setting at one point of a sweep.
type sweepPoint struct {
	sampler   mechanisms.Sampler
	st        mechanisms.Setting
	nChanged  bool
	itChanged bool
}

// apply sets the parameters of the assignments, in order: n first, then
// the sampler's fields and the iterations, then q (batch = q·n).
func (pt *sweepPoint) apply(as []assignment) error {
	var q *float64
	for pass := 0; pass < 2; pass++ {
		for _, a := range as {
			for _, name := range a.names {
				isN := name == "n"
				if (pass == 0) != isN {
					continue
				}
				switch name {
				case "n":
					if a.value < 1 || a.value != math.Trunc(a.value) || a.value > 1<<40 {
						return cli.Usagef("n: the dataset size must be an integer in [1, 2^40], got %g", a.value)
					}
					pt.st.N, pt.nChanged = int(a.value), true
				case "iterations", "T":
					if a.value < 1 || a.value != math.Trunc(a.value) || a.value > mechanisms.MaxIterations {
						return cli.Usagef("%s: must be an integer in [1, 2^40], got %g", name, a.value)
					}
					pt.st.Iterations, pt.itChanged = int(a.value), true
					// The sampler's own run length follows, when it has one
					// (the accuracy runs then stop at the same iteration).
					if s, err := setSamplerField(pt.sampler, "iterations", a.value); err == nil {
						pt.sampler = s
					}
				case "q":
					v := a.value
					q = &v
				default:
					s, err := setSamplerField(pt.sampler, name, a.value)
					if err != nil {
						return err
					}
					pt.sampler = s
				}
			}
		}
	}
	if q != nil {
		if !(*q > 0 && *q <= 1) {
			return cli.Usagef("q: the sampling ratio must be in (0, 1], got %g", *q)
		}
		b := math.Max(1, math.Round(*q*float64(pt.st.N)))
		s, err := setSamplerField(pt.sampler, "batch", b)
		if err != nil {
			return cli.Usagef("q: %s has no batch size", pt.sampler.Name())
		}
		pt.sampler = s
	}
	return nil
}

// paramKey is the parameter a name of --sweep, --set or --series sets: T
// is iterations, and q sets the batch size (batch = q·n).
func paramKey(name string) string {
	switch name {
	case "T":
		return "iterations"
	case "q":
		return "batch"
	}
	return name
}

// checkSweepNames refuses a parameter given by two flags (or twice by one):
// swept and also set (the set value was silently overridden), a series
// over the swept parameter, q with batch. Each parameter takes its values
// from one place.
func checkSweepNames(sweep, series []string, sets []assignment) error {
	type use struct{ flag, name string }
	seen := map[string]use{}
	add := func(flag, name string) error {
		k := paramKey(name)
		u, ok := seen[k]
		if !ok {
			seen[k] = use{flag, name}
			return nil
		}
		also := ""
		if u.name != name {
			also = fmt.Sprintf(" (%s and %s both set %s)", u.name, name, k)
		}
		return cli.Usagef("--%s: %s is already given by --%s %s%s; a parameter takes its values from one flag", flag, name, u.flag, u.name, also)
	}
	for _, n := range sweep {
		if err := add("sweep", n); err != nil {
			return err
		}
	}
	for _, a := range sets {
		for _, n := range a.names {
			if err := add("set", n); err != nil {
				return err
			}
		}
	}
	for _, n := range series {
		if err := add("series", n); err != nil {
			return err
		}
	}
	return nil
}

// setSamplerField returns a copy of s with the field at the YAML path (dots
// for nested fields, as in step.eta) set to v, through the scenario's
// typed field setter: names the sampler's type does not have and values
// the field cannot hold exactly are refused.
func setSamplerField(s mechanisms.Sampler, path string, v float64) (mechanisms.Sampler, error) {
	out, err := scenario.WithNumber(s, path, v)
	switch {
	case errors.Is(err, scenario.ErrNoSuchField):
		return nil, cli.Usagef("%s: %s has no such parameter (its parameters are the keys of its sampler section)", path, s.Name())
	case errors.Is(err, scenario.ErrInexact):
		return nil, cli.Usagef("%s: %s cannot hold %g (an integer field?)", path, s.Name(), v)
	case err != nil:
		return nil, cli.Usagef("%s: cannot set it to %g (%s)", path, v, errors.Unwrap(err))
	}
	return out.(mechanisms.Sampler), nil
}

// sweepAccuracy is what running the sampler at one point showed.
type Accuracy struct {
	Runs int `json:"runs"`
	// MaxMeanErrorSD is the largest error of the releases' mean, per
	// coordinate, in posterior standard deviations.
	MaxMeanErrorSD float64 `json:"max_mean_error_sd"`
	// SDRatio is the releases' standard deviation over the posterior's,
	// smallest and largest over the coordinates.
	SDRatioMin float64 `json:"sd_ratio_min"`
	SDRatioMax float64 `json:"sd_ratio_max"`
	MeanPValue float64 `json:"mean_p_value"`
	KSPValue   float64 `json:"ks_p_value"`
	// AcceptanceRate over the runs (accept/reject samplers).
	AcceptanceRate *float64 `json:"acceptance_rate,omitempty"`
}

// Row is one point of the sweep.
type Row struct {
	Value  float64  `json:"value"`
	Series *float64 `json:"series,omitempty"`
	// Epsilon maps each theorem (source [variant]) that applies to its ε
	// at δ.
	Epsilon  map[string]stats.JSONFloat `json:"epsilon"`
	Accuracy *Accuracy                  `json:"accuracy,omitempty"`
}

// sweepSpec is what the sweep's flags ask for: the swept parameters and
// their values, the parameters fixed for the whole sweep, and the series.
type sweepSpec struct {
	names       []string
	vals        []float64
	sets        []assignment
	seriesNames []string
	// seriesVals is {NaN} without --series: one pass over the values.
	seriesVals []float64
}

// what is the swept parameters' name in the outputs.
func (sp sweepSpec) what() string { return strings.Join(sp.names, ",") }

// series is the series parameters' name in the outputs ("" without one).
func (sp sweepSpec) series() string { return strings.Join(sp.seriesNames, ",") }

// parseSweepSpec parses --sweep, --set and --series and refuses a
// parameter given twice.
func parseSweepSpec(f Flags) (sweepSpec, error) {
	var sp sweepSpec
	var err error
	if sp.names, sp.vals, err = parseSweep(f.Sweep, f.Log); err != nil {
		return sp, err
	}
	for _, s := range f.Sets {
		a, err := parseAssign("set", s)
		if err != nil {
			return sp, err
		}
		sp.sets = append(sp.sets, a)
	}
	sp.seriesVals = []float64{math.NaN()}
	if f.Series != "" {
		if sp.seriesNames, sp.seriesVals, err = parseSeries(f.Series); err != nil {
			return sp, err
		}
	}
	return sp, checkSweepNames(sp.names, sp.seriesNames, sp.sets)
}

// accuracyLaw is the exact posterior of D that --accuracy measures the
// sampler against.
func accuracyLaw(plan *scenario.Plan) (*audit.Normal, error) {
	post, err := audit.ExactPosterior(plan.Mechanism, plan.Pair)
	if err != nil {
		return nil, err
	}
	if post == nil {
		return nil, cli.Usagef("--accuracy: the scenario's model has no exact posterior to measure the sampler against (use the gauss or linreg model)")
	}
	return &post.D, nil
}

// sweeper evaluates the points of a sweep, gathering the theorems that
// apply somewhere in the order they first do.
type sweeper struct {
	cfg       *scenario.Config
	plan      *scenario.Plan
	spec      sweepSpec
	delta     float64
	baseIters int
	// law and runs are --accuracy's (law nil without it).
	law  *audit.Normal
	runs int

	labels []string
	seen   map[string]bool
	// why is the first reason a theorem gave for not applying, to say why
	// no row has a number when none has.
	why string
}

// runSweep evaluates the sweep and writes its table, JSON, CSV and plot.
// SIGINT and SIGTERM stop the accuracy runs; nothing is written then.
func Run(e *cli.Env, cfg *scenario.Config, plan *scenario.Plan, f Flags, delta float64, out cli.OutputFlags) error {
	if plan.Sampler == nil {
		return cli.Usagef("--sweep: the scenario's mechanism is not a sampler with parameters")
	}
	sp, err := parseSweepSpec(f)
	if err != nil {
		return err
	}
	if err := out.CheckPlotExt(); err != nil {
		return err
	}
	pts := plan.Points()
	sw := &sweeper{cfg: cfg, plan: plan, spec: sp, delta: delta, baseIters: pts[len(pts)-1].Iteration, runs: f.Accuracy, seen: map[string]bool{}}
	if f.Accuracy > 0 {
		if sw.law, err = accuracyLaw(plan); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rows, err := sw.rows(ctx)
	if err != nil {
		return err
	}
	if len(sw.labels) == 0 {
		// Every row would be empty: no table that looks like a result.
		return cli.Usagef("--sweep: no theorem applies at any of the %d points, so no row has a value (%s)", len(rows), sw.why)
	}
	return writeSweep(ctx, e, sw, f, out, rows)
}

// rows evaluates every point: each series value, then each swept value.
func (sw *sweeper) rows(ctx context.Context) ([]Row, error) {
	var rows []Row
	for _, sv := range sw.spec.seriesVals {
		for _, v := range sw.spec.vals {
			row, err := sw.row(ctx, v, sv)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// point is the sampler and setting at swept value v and series value sv,
// checked.
func (sw *sweeper) point(v, sv float64) (sweepPoint, error) {
	plan := sw.plan
	pt := sweepPoint{sampler: plan.Sampler, st: mechanisms.SettingOf(plan.Model, plan.Pair, sw.baseIters)}
	pt.st.Init = sw.cfg.Init
	as := append(append([]assignment(nil), sw.spec.sets...), assignment{names: sw.spec.names, value: v})
	if len(sw.spec.seriesNames) > 0 {
		as = append(as, assignment{names: sw.spec.seriesNames, value: sv})
	}
	if err := pt.apply(as); err != nil {
		return pt, err
	}
	// A batch is drawn from the n records: more than n is no setting at
	// all, and every theorem would just not apply (an empty table). A
	// sampler without a batch has none to check.
	if b, err := scenario.NumberAt(pt.sampler, "batch"); err == nil && b > float64(pt.st.N) {
		return pt, cli.Usagef("--sweep at %s = %g: batch: the batch size must be in [1, n] = [1, %d] (n: the dataset size the theorems see), got %g",
			sw.spec.what(), v, pt.st.N, b)
	}
	if !pt.nChanged {
		if err := pt.sampler.Check(plan.Model, plan.Pair.D); err != nil {
			return pt, cli.Usagef("--sweep at %s = %g: %v", sw.spec.what(), v, err)
		}
	}
	return pt, nil
}

// row is the sweep's row at swept value v and series value sv: every
// theorem's ε at δ, and with --accuracy the sampler measured there.
func (sw *sweeper) row(ctx context.Context, v, sv float64) (Row, error) {
	pt, err := sw.point(v, sv)
	if err != nil {
		return Row{}, err
	}
	row := Row{Value: v, Epsilon: map[string]stats.JSONFloat{}}
	if len(sw.spec.seriesNames) > 0 {
		x := sv
		row.Series = &x
	}
	if err := sw.epsilons(&row, pt); err != nil {
		return row, err
	}
	if sw.law != nil {
		if row.Accuracy, err = sw.accuracy(ctx, pt); err != nil {
			return row, err
		}
	}
	return row, nil
}

// epsilons fills the row's ε at δ of every theorem that applies at pt.
func (sw *sweeper) epsilons(row *Row, pt sweepPoint) error {
	for _, g := range mechanisms.SamplerGuarantees(pt.sampler, pt.st) {
		l := mechanisms.GuaranteeLabel(g)
		if !g.Applies {
			if sw.why == "" {
				sw.why = fmt.Sprintf("at %s = %g: %s: %s", sw.spec.what(), row.Value, l, g.Reason)
			}
			continue
		}
		eps, err := g.Epsilon(sw.delta)
		if err != nil {
			return err
		}
		row.Epsilon[l] = stats.JSONFloat(eps)
		if !sw.seen[l] {
			sw.seen[l] = true
			sw.labels = append(sw.labels, l)
		}
	}
	return nil
}

// accuracy runs the sampler of pt on D (--accuracy), which needs the
// scenario's dataset and the sampler's own run length.
func (sw *sweeper) accuracy(ctx context.Context, pt sweepPoint) (*Accuracy, error) {
	if pt.nChanged {
		return nil, cli.Usagef("--accuracy: the sampler runs on the scenario's dataset, so n cannot be swept or set")
	}
	if pt.itChanged && pt.st.Iterations != pt.sampler.Iterations(sw.plan.Pair.D) {
		return nil, cli.Usagef("--accuracy: the sampler's run length cannot follow the iterations swept")
	}
	return measureAccuracy(ctx, sw.plan, sw.cfg, pt.sampler, *sw.law, sw.runs)
}

// writeSweep writes the sweep's table (unless JSON or CSV goes to
// stdout), JSON, CSV and plot; an interruption stops before the next file.
func writeSweep(ctx context.Context, e *cli.Env, sw *sweeper, f Flags, out cli.OutputFlags, rows []Row) error {
	cfg, plan, what, series := sw.cfg, sw.plan, sw.spec.what(), sw.spec.series()
	if !out.StdoutTaken() {
		writeSweepTable(e.Stdout, cfg, plan, f.Sets, what, series, sw.delta, sw.labels, rows)
	}
	return cli.WriteDocuments(ctx, e, cli.InterruptedError{Msg: "interrupted while writing the outputs; those not yet written were not written"},
		cli.Document{Out: out.JSON, Fill: func(w io.Writer) error {
			return cli.WriteJSONTo(w, map[string]any{"scenario": cfg.Name, "config_hash": plan.Hash, "parameter": what,
				"series": series, "delta": sw.delta, "theorems": sw.labels, "rows": rows})
		}},
		cli.Document{Out: out.CSV, Fill: func(w io.Writer) error { return writeSweepCSV(w, what, sw.labels, rows) }},
		cli.Document{Out: out.Plot, Fill: func(w io.Writer) error {
			return plotSweep(w, out.Plot, report.ClipName(cfg.Name, report.TitleNameRunes), what, series, sw.delta, f.Log, sw.labels, rows)
		}},
	)
}

// errSweepInterrupted ends a sweep stopped by SIGINT or SIGTERM during the
// accuracy runs, before anything was written.
var errSweepInterrupted = cli.InterruptedError{Msg: "interrupted during the accuracy runs; nothing was written"}

// measureAccuracy runs the sampler runs times on D from the scenario's
// starting point (trial i draws from the scenario's seed, side D, index i)
// and compares the final states with the exact posterior of D. A cancelled
// ctx stops the runs (each run checks it too) with errSweepInterrupted.
func measureAccuracy(ctx context.Context, plan *scenario.Plan, cfg *scenario.Config, s mechanisms.Sampler, law audit.Normal, runs int) (*Accuracy, error) {
	if runs < 2 {
		return nil, cli.Usagef("--accuracy: needs at least 2 runs, got %d", runs)
	}
	ch := &mechanisms.Chain{Model: plan.Model, Sampler: s, Init: cfg.Init, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}
	d := plan.Pair.D
	if err := ch.Check(d); err != nil {
		return nil, cli.Usagef("--accuracy: %v", err)
	}
	draws := make([][]float64, runs)
	infos := make([]mechanisms.Info, runs)
	err := pool.Each(ctx, runs, 0, func(ctx context.Context, i int) error {
		tr := mechanisms.NewTrial(cfg.Seed, dataset.SideD, i)
		var err error
		infos[i], err = ch.Run(ctx, tr, d, func(_ int, th []float64) error {
			draws[i] = append([]float64(nil), th...)
			return nil
		})
		if err != nil {
			return fmt.Errorf("--accuracy run %d: %w", i, err)
		}
		return nil
	})
	if ctx.Err() != nil {
		return nil, errSweepInterrupted
	}
	if err != nil {
		return nil, err
	}
	var info mechanisms.Info
	for i := range infos {
		info.Add(infos[i].Totals())
	}
	return accuracyOf(draws, law, runs, info)
}

// accuracyOf compares the final states draws with the exact posterior law.
func accuracyOf(draws [][]float64, law audit.Normal, runs int, info mechanisms.Info) (*Accuracy, error) {
	coords := make([]int, len(law.Mean))
	for j := range coords {
		coords[j] = j
	}
	fit, err := audit.FitPosterior(draws, law, coords)
	if err != nil {
		return nil, err
	}
	acc := &Accuracy{Runs: runs, SDRatioMin: math.Inf(1), SDRatioMax: math.Inf(-1), MeanPValue: fit.MeanPValue, KSPValue: fit.KSPValue}
	for j := range fit.MeanError {
		acc.MaxMeanErrorSD = math.Max(acc.MaxMeanErrorSD, math.Abs(fit.MeanError[j]))
		acc.SDRatioMin, acc.SDRatioMax = math.Min(acc.SDRatioMin, fit.SDRatio[j]), math.Max(acc.SDRatioMax, fit.SDRatio[j])
	}
	if r := info.AcceptanceRate(); !math.IsNaN(r) {
		acc.AcceptanceRate = &r
	}
	return acc, nil
}
