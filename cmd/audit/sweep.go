package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// "audit bounds --sweep": every theorem's ε at δ as one parameter of the
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
	maxAccuracyRuns  = 100000
	defaultSweepSize = 10
)

// sweepFlags are the sweep's flags of "audit bounds".
type sweepFlags struct {
	sweep, series string
	sets          []string
	log           bool
	accuracy      int
}

// register adds the sweep's flags to the flag set.
func (f *sweepFlags) register(fs *flagSet) {
	fs.StringVar(&f.sweep, "sweep", "", "PARAM=FROM:TO[:N]: ε at δ of every theorem for N values of PARAM (default 10, at most 200); PARAM is iterations, n (the dataset size the theorems see), q (batch = q·n), or a numeric field of the sampler (tau_l, tau, batch, n0, step.eta, …); NAME1,NAME2=… sets several")
	fs.StringVar(&f.series, "series", "", "PARAM=V1,V2,…: one curve per value of a second parameter (at most 10)")
	fs.Func("set", "PARAM=V: fix a parameter for the whole sweep (repeatable), e.g. --set n=1000000 --set batch=1000", func(s string) error {
		f.sets = append(f.sets, s)
		return nil
	})
	fs.BoolVar(&f.log, "log", false, "space the sweep's values geometrically and draw its axis in log scale")
	fs.intVar(&f.accuracy, "accuracy", 0, 0, maxAccuracyRuns, "with --sweep: run the sampler this many times on D at every value and measure its releases against the exact posterior (gauss and linreg models),")
}

// sweepOutputHelp is the help of "audit bounds"'s outputs: --plot and
// --csv are the sweep's.
var sweepOutputHelp = outputHelp{
	json: "write the guarantees as JSON to FILE (- for stdout)",
	plot: "with --sweep: draw ε at δ against the parameter (and the accuracy against ε) to FILE.svg or FILE.png",
	csv:  "with --sweep: write the rows as CSV to FILE (- for stdout)",
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
		return assignment{}, usagef("--%s: must be PARAM=VALUE, got %q", flag, s)
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return assignment{}, usagef("--%s: %s: value must be a finite number, got %q", flag, names, v)
	}
	return assignment{names: strings.Split(names, ","), value: x}, nil
}

// parseSweep parses NAMES=FROM:TO[:N] into the values of the sweep.
func parseSweep(s string, geometric bool) ([]string, []float64, error) {
	names, rng, ok := strings.Cut(s, "=")
	if !ok || names == "" {
		return nil, nil, usagef("--sweep: must be PARAM=FROM:TO[:N], got %q", s)
	}
	parts := strings.Split(rng, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, nil, usagef("--sweep: %s: range must be FROM:TO or FROM:TO:N, got %q", names, rng)
	}
	from, err1 := strconv.ParseFloat(parts[0], 64)
	to, err2 := strconv.ParseFloat(parts[1], 64)
	if err1 != nil || err2 != nil || math.IsInf(from, 0) || math.IsInf(to, 0) || math.IsNaN(from) || math.IsNaN(to) || !(to > from) {
		return nil, nil, usagef("--sweep: %s: FROM and TO must be finite numbers with FROM < TO, got %q", names, rng)
	}
	n := defaultSweepSize
	if len(parts) == 3 {
		var err error
		if n, err = strconv.Atoi(parts[2]); err != nil || n < 2 || n > maxSweepPoints {
			return nil, nil, usagef("--sweep: %s: N must be an integer in [2, %d], got %q", names, maxSweepPoints, parts[2])
		}
	}
	if geometric && !(from > 0) {
		return nil, nil, usagef("--sweep: %s: --log needs FROM > 0, got %g", names, from)
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
		return nil, nil, usagef("--series: must be PARAM=V1,V2,…, got %q", s)
	}
	var vals []float64
	for _, v := range strings.Split(list, ",") {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil, usagef("--series: %s: values must be finite numbers, got %q", names, v)
		}
		vals = append(vals, x)
	}
	if len(vals) > maxSweepSeries {
		return nil, nil, usagef("--series: at most %d values, got %d", maxSweepSeries, len(vals))
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
						return usagef("n: the dataset size must be an integer in [1, 2^40], got %g", a.value)
					}
					pt.st.N, pt.nChanged = int(a.value), true
				case "iterations", "T":
					if a.value < 1 || a.value != math.Trunc(a.value) || a.value > mechanisms.MaxIterations {
						return usagef("%s: must be an integer in [1, 2^40], got %g", name, a.value)
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
			return usagef("q: the sampling ratio must be in (0, 1], got %g", *q)
		}
		b := math.Max(1, math.Round(*q*float64(pt.st.N)))
		s, err := setSamplerField(pt.sampler, "batch", b)
		if err != nil {
			return usagef("q: %s has no batch size", pt.sampler.Name())
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
		return usagef("--%s: %s is already given by --%s %s%s; a parameter takes its values from one flag", flag, name, u.flag, u.name, also)
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
		return nil, usagef("%s: %s has no such parameter (its parameters are the keys of its sampler section)", path, s.Name())
	case errors.Is(err, scenario.ErrInexact):
		return nil, usagef("%s: %s cannot hold %g (an integer field?)", path, s.Name(), v)
	case err != nil:
		return nil, usagef("%s: cannot set it to %g (%s)", path, v, errors.Unwrap(err))
	}
	return out.(mechanisms.Sampler), nil
}

// sweepAccuracy is what running the sampler at one point showed.
type sweepAccuracy struct {
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

// sweepRow is one point of the sweep.
type sweepRow struct {
	Value  float64  `json:"value"`
	Series *float64 `json:"series,omitempty"`
	// Epsilon maps each theorem (source [variant]) that applies to its ε
	// at δ.
	Epsilon  map[string]stats.JSONFloat `json:"epsilon"`
	Accuracy *sweepAccuracy             `json:"accuracy,omitempty"`
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
func parseSweepSpec(f sweepFlags) (sweepSpec, error) {
	var sp sweepSpec
	var err error
	if sp.names, sp.vals, err = parseSweep(f.sweep, f.log); err != nil {
		return sp, err
	}
	for _, s := range f.sets {
		a, err := parseAssign("set", s)
		if err != nil {
			return sp, err
		}
		sp.sets = append(sp.sets, a)
	}
	sp.seriesVals = []float64{math.NaN()}
	if f.series != "" {
		if sp.seriesNames, sp.seriesVals, err = parseSeries(f.series); err != nil {
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
		return nil, usagef("--accuracy: the scenario's model has no exact posterior to measure the sampler against (use the gauss or linreg model)")
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
func runSweep(e *env, cfg *scenario.Config, plan *scenario.Plan, f sweepFlags, delta float64, out outputFlags) error {
	if plan.Sampler == nil {
		return usagef("--sweep: the scenario's mechanism is not a sampler with parameters")
	}
	sp, err := parseSweepSpec(f)
	if err != nil {
		return err
	}
	if err := out.checkPlotExt(); err != nil {
		return err
	}
	pts := plan.Points()
	sw := &sweeper{cfg: cfg, plan: plan, spec: sp, delta: delta, baseIters: pts[len(pts)-1].Iteration, runs: f.accuracy, seen: map[string]bool{}}
	if f.accuracy > 0 {
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
		return usagef("--sweep: no theorem applies at any of the %d points, so no row has a value (%s)", len(rows), sw.why)
	}
	return writeSweep(ctx, e, sw, f, out, rows)
}

// rows evaluates every point: each series value, then each swept value.
func (sw *sweeper) rows(ctx context.Context) ([]sweepRow, error) {
	var rows []sweepRow
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
		return pt, usagef("--sweep at %s = %g: batch: the batch size must be in [1, n] = [1, %d] (n: the dataset size the theorems see), got %g",
			sw.spec.what(), v, pt.st.N, b)
	}
	if !pt.nChanged {
		if err := pt.sampler.Check(plan.Model, plan.Pair.D); err != nil {
			return pt, usagef("--sweep at %s = %g: %v", sw.spec.what(), v, err)
		}
	}
	return pt, nil
}

// row is the sweep's row at swept value v and series value sv: every
// theorem's ε at δ, and with --accuracy the sampler measured there.
func (sw *sweeper) row(ctx context.Context, v, sv float64) (sweepRow, error) {
	pt, err := sw.point(v, sv)
	if err != nil {
		return sweepRow{}, err
	}
	row := sweepRow{Value: v, Epsilon: map[string]stats.JSONFloat{}}
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
func (sw *sweeper) epsilons(row *sweepRow, pt sweepPoint) error {
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
func (sw *sweeper) accuracy(ctx context.Context, pt sweepPoint) (*sweepAccuracy, error) {
	if pt.nChanged {
		return nil, usagef("--accuracy: the sampler runs on the scenario's dataset, so n cannot be swept or set")
	}
	if pt.itChanged && pt.st.Iterations != pt.sampler.Iterations(sw.plan.Pair.D) {
		return nil, usagef("--accuracy: the sampler's run length cannot follow the iterations swept")
	}
	return measureAccuracy(ctx, sw.plan, sw.cfg, pt.sampler, *sw.law, sw.runs)
}

// writeSweep writes the sweep's table (unless JSON or CSV goes to
// stdout), JSON, CSV and plot; an interruption stops before the next file.
func writeSweep(ctx context.Context, e *env, sw *sweeper, f sweepFlags, out outputFlags, rows []sweepRow) error {
	cfg, plan, what, series := sw.cfg, sw.plan, sw.spec.what(), sw.spec.series()
	if !out.stdoutTaken() {
		writeSweepTable(e.stdout, cfg, plan, f.sets, what, series, sw.delta, sw.labels, rows)
	}
	return writeDocuments(ctx, e, interruptedError{"interrupted while writing the outputs; those not yet written were not written"},
		document{out.json, func(w io.Writer) error {
			return writeJSONTo(w, map[string]any{"scenario": cfg.Name, "config_hash": plan.Hash, "parameter": what,
				"series": series, "delta": sw.delta, "theorems": sw.labels, "rows": rows})
		}},
		document{out.csv, func(w io.Writer) error { return writeSweepCSV(w, what, sw.labels, rows) }},
		document{out.plot, func(w io.Writer) error {
			return plotSweep(w, out.plot, report.ClipName(cfg.Name, report.TitleNameRunes), what, series, sw.delta, f.log, sw.labels, rows)
		}},
	)
}

// errSweepInterrupted ends a sweep stopped by SIGINT or SIGTERM during the
// accuracy runs, before anything was written.
var errSweepInterrupted = interruptedError{"interrupted during the accuracy runs; nothing was written"}

// measureAccuracy runs the sampler runs times on D from the scenario's
// starting point (trial i draws from the scenario's seed, side D, index i)
// and compares the final states with the exact posterior of D. A cancelled
// ctx stops the runs (each run checks it too) with errSweepInterrupted.
func measureAccuracy(ctx context.Context, plan *scenario.Plan, cfg *scenario.Config, s mechanisms.Sampler, law audit.Normal, runs int) (*sweepAccuracy, error) {
	if runs < 2 {
		return nil, usagef("--accuracy: needs at least 2 runs, got %d", runs)
	}
	ch := &mechanisms.Chain{Model: plan.Model, Sampler: s, Init: cfg.Init, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}
	d := plan.Pair.D
	if err := ch.Check(d); err != nil {
		return nil, usagef("--accuracy: %v", err)
	}
	draws := make([][]float64, runs)
	infos := make([]mechanisms.Info, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < runs && ctx.Err() == nil; i += workers {
				tr := mechanisms.NewTrial(cfg.Seed, dataset.SideD, i)
				infos[i], errs[i] = ch.Run(ctx, tr, d, func(_ int, th []float64) error {
					draws[i] = append([]float64(nil), th...)
					return nil
				})
			}
		}(w)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, errSweepInterrupted
	}
	var info mechanisms.Info
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("--accuracy run %d: %w", i, err)
		}
		info.Add(infos[i].Totals())
	}
	return accuracyOf(draws, law, runs, info)
}

// accuracyOf compares the final states draws with the exact posterior law.
func accuracyOf(draws [][]float64, law audit.Normal, runs int, info mechanisms.Info) (*sweepAccuracy, error) {
	coords := make([]int, len(law.Mean))
	for j := range coords {
		coords[j] = j
	}
	fit, err := audit.FitPosterior(draws, law, coords)
	if err != nil {
		return nil, err
	}
	acc := &sweepAccuracy{Runs: runs, SDRatioMin: math.Inf(1), SDRatioMax: math.Inf(-1), MeanPValue: fit.MeanPValue, KSPValue: fit.KSPValue}
	for j := range fit.MeanError {
		acc.MaxMeanErrorSD = math.Max(acc.MaxMeanErrorSD, math.Abs(fit.MeanError[j]))
		acc.SDRatioMin, acc.SDRatioMax = math.Min(acc.SDRatioMin, fit.SDRatio[j]), math.Max(acc.SDRatioMax, fit.SDRatio[j])
	}
	if r := info.AcceptanceRate(); !math.IsNaN(r) {
		acc.AcceptanceRate = &r
	}
	return acc, nil
}

// writeSweepTable prints the sweep: one row per value (and series value),
// one column per theorem, then the accuracy columns.
func writeSweepTable(w io.Writer, cfg *scenario.Config, plan *scenario.Plan, sets []string, what, series string, delta float64, labels []string, rows []sweepRow) {
	fmt.Fprintf(w, "scenario   %s\nmechanism  %s\n", report.ClipName(cfg.Name, report.NameRunes), mechanisms.NameOf(plan.Mechanism))
	if len(sets) > 0 {
		fmt.Fprintf(w, "fixed      %s\n", strings.Join(sets, ", "))
	}
	fmt.Fprintf(w, "sweep      %s", what)
	if series != "" {
		fmt.Fprintf(w, ", one series per %s", series)
	}
	fmt.Fprintf(w, "; ε at δ = %g\n\n", delta)
	header := []string{what}
	if series != "" {
		header = append(header, series)
	}
	header = append(header, labels...)
	hasAcc := len(rows) > 0 && rows[0].Accuracy != nil
	if hasAcc {
		header = append(header, "max |mean err|/sd", "sd ratio", "p mean / KS", "acceptance")
	}
	t := newTable(w, header...)
	for _, r := range rows {
		cells := []string{fmtG(r.Value)}
		if r.Series != nil {
			cells = append(cells, fmtG(*r.Series))
		}
		for _, l := range labels {
			if e, ok := r.Epsilon[l]; ok {
				cells = append(cells, stats.FormatFloat(float64(e)))
			} else {
				cells = append(cells, "does not apply")
			}
		}
		if a := r.Accuracy; a != nil {
			acc := "n/a"
			if a.AcceptanceRate != nil {
				acc = fmt.Sprintf("%.3g", *a.AcceptanceRate)
			}
			cells = append(cells, fmt.Sprintf("%.3g", a.MaxMeanErrorSD), fmt.Sprintf("%.3g–%.3g", a.SDRatioMin, a.SDRatioMax),
				fmt.Sprintf("%.2g / %.2g", a.MeanPValue, a.KSPValue), acc)
		}
		row := make([]any, len(cells))
		for i, c := range cells {
			row[i] = c
		}
		t.Append(row...)
	}
	t.Render()
	if hasAcc {
		fmt.Fprintf(w, "Accuracy: %d runs of the sampler on D at each value, final states against the exact posterior of D\n", rows[0].Accuracy.Runs)
		fmt.Fprintln(w, "(mean error in posterior standard deviations; SD ratio; p-values of the χ² mean test and of the KS test).")
	}
}

// writeSweepCSV writes one row per point.
func writeSweepCSV(w io.Writer, what string, labels []string, rows []sweepRow) error {
	var b strings.Builder
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	head := []string{q(what), "series"}
	for _, l := range labels {
		head = append(head, q("epsilon:"+l))
	}
	head = append(head, "runs", "max_abs_mean_error_sd", "sd_ratio_min", "sd_ratio_max", "mean_p_value", "ks_p_value", "acceptance_rate")
	b.WriteString(strings.Join(head, ",") + "\n")
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range rows {
		cells := []string{g(r.Value), ""}
		if r.Series != nil {
			cells[1] = g(*r.Series)
		}
		for _, l := range labels {
			if e, ok := r.Epsilon[l]; ok {
				cells = append(cells, g(float64(e)))
			} else {
				cells = append(cells, "")
			}
		}
		if a := r.Accuracy; a != nil {
			acc := ""
			if a.AcceptanceRate != nil {
				acc = g(*a.AcceptanceRate)
			}
			cells = append(cells, strconv.Itoa(a.Runs), g(a.MaxMeanErrorSD), g(a.SDRatioMin), g(a.SDRatioMax), g(a.MeanPValue), g(a.KSPValue), acc)
		} else {
			cells = append(cells, "", "", "", "", "", "", "")
		}
		b.WriteString(strings.Join(cells, ",") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plotSweep draws ε at δ against the parameter, one line per theorem and
// series value; with accuracy figures, a second panel draws the mean
// error (posterior SDs) against the first theorem's ε: the trade-off.
func plotSweep(w io.Writer, file, name, what, series string, delta float64, logX bool, labels []string, rows []sweepRow) error {
	p, err := epsilonPanel(name, what, series, delta, logX, labels, rows)
	if err != nil {
		return err
	}
	plots := []*plot.Plot{p}
	if len(labels) > 0 && len(rows) > 0 && rows[0].Accuracy != nil {
		q, err := accuracyPanel(what, delta, labels[0], rows)
		if err != nil {
			return err
		}
		plots = append(plots, q)
	}
	return drawPanels(w, file, plots)
}

// epsilonPanel draws ε at δ against the swept parameter: one line per
// theorem and series value.
func epsilonPanel(name, what, series string, delta float64, logX bool, labels []string, rows []sweepRow) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: ε at δ = %g against %s", name, delta, what)
	p.X.Label.Text = what
	p.Y.Label.Text = "ε"
	p.Add(plotter.NewGrid())
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	seriesVals := sweepSeriesValues(series, rows)
	drawn := 0
	for li, l := range labels {
		for si, sv := range seriesVals {
			xys := epsilonLine(series, sv, l, rows)
			if len(xys) == 0 {
				continue
			}
			line, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			c := plotutil.Color(li*len(seriesVals) + si)
			line.Color, pts.Color = c, c
			line.Dashes = plotutil.Dashes(si)
			p.Add(line, pts)
			legend := l
			if series != "" {
				legend = fmt.Sprintf("%s = %s", series, fmtG(sv))
				if len(labels) > 1 {
					legend = l + ", " + legend
				}
			}
			p.Legend.Add(legend, line, pts)
			drawn++
		}
	}
	if drawn == 0 {
		return nil, usagef("--plot: no theorem applies at any value of the sweep: nothing to draw")
	}
	if series != "" && len(labels) == 1 {
		p.Title.Text += "\n" + labels[0]
	}
	p.Legend.Top = true
	return p, nil
}

// sweepSeriesValues lists the series values of the rows in their order
// ({NaN}, one pass, without a series).
func sweepSeriesValues(series string, rows []sweepRow) []float64 {
	if series == "" {
		return []float64{math.NaN()}
	}
	var vals []float64
	seen := map[float64]bool{}
	for _, r := range rows {
		if !seen[*r.Series] {
			seen[*r.Series] = true
			vals = append(vals, *r.Series)
		}
	}
	return vals
}

// epsilonLine is theorem l's finite ε against the swept value, on the
// rows of series value sv.
func epsilonLine(series string, sv float64, l string, rows []sweepRow) plotter.XYs {
	var xys plotter.XYs
	for _, r := range rows {
		if series != "" && *r.Series != sv {
			continue
		}
		if e, ok := r.Epsilon[l]; ok && !math.IsInf(float64(e), 0) {
			xys = append(xys, plotter.XY{X: r.Value, Y: float64(e)})
		}
	}
	return xys
}

// accuracyPanel draws the mean error against theorem label's ε, each
// point labelled with its swept value: the trade-off.
func accuracyPanel(what string, delta float64, label string, rows []sweepRow) (*plot.Plot, error) {
	q := plot.New()
	q.Title.Text = "accuracy against privacy"
	q.X.Label.Text = fmt.Sprintf("ε at δ = %g (%s)", delta, label)
	q.Y.Label.Text = "max |mean error| (posterior SDs)"
	q.Add(plotter.NewGrid())
	var xys plotter.XYs
	var lbls []string
	for _, r := range rows {
		if e, ok := r.Epsilon[label]; ok && r.Accuracy != nil && !math.IsInf(float64(e), 0) {
			xys = append(xys, plotter.XY{X: float64(e), Y: r.Accuracy.MaxMeanErrorSD})
			lbls = append(lbls, fmt.Sprintf("%s = %s", what, fmtG(r.Value)))
		}
	}
	sort.Sort(byX{xys, lbls})
	if len(xys) == 0 {
		return q, nil
	}
	line, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, err
	}
	q.Add(line, pts)
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: lbls})
	if err != nil {
		return nil, err
	}
	q.Add(lab)
	return q, nil
}

// drawPanels draws the panels side by side into one SVG or PNG, the
// format named by file's extension.
func drawPanels(w io.Writer, file string, plots []*plot.Plot) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	width := 16 * vg.Centimeter
	c, err := draw.NewFormattedCanvas(width*vg.Length(len(plots)), 11*vg.Centimeter, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	for i, pl := range plots {
		pl.Draw(tiles.At(dc, i, 0))
	}
	_, err = c.WriteTo(w)
	return err
}

// byX sorts points (and their labels) by abscissa.
type byX struct {
	xys  plotter.XYs
	lbls []string
}

func (b byX) Len() int           { return len(b.xys) }
func (b byX) Less(i, j int) bool { return b.xys[i].X < b.xys[j].X }
func (b byX) Swap(i, j int) {
	b.xys[i], b.xys[j] = b.xys[j], b.xys[i]
	b.lbls[i], b.lbls[j] = b.lbls[j], b.lbls[i]
}
