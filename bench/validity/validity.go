package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Row is one line of the validity table: a scenario file, the settings
// applied to it (as `audit run --set`), how many seeds and runs, and what
// is known about the runs' privacy.
type Row struct {
	// Label says what the row checks ("null, full batch").
	Label string
	// File is the scenario file; Sets are applied to it in order.
	File string
	Sets []string
	// Seeds audits are run, with seed First, First+1, …, each of Runs runs
	// (audit.trials).
	Seeds int
	First uint64
	Runs  int
	// Mu, when > 0, is the exact μ of the runs (their path's
	// log-likelihood ratio is exactly μ-GDP): the rates of μ_lb > μ and of
	// ε_lb > ε_μ(δ) are then counted.
	Mu float64
	// Null says the canary contributes nothing to the runs (D and D′ have
	// the same law, up to a vanishing planted clip factor), so that any
	// ε_lb > 0 or μ_lb > 0 is a false positive.
	Null bool
}

// Result is a row's outcome over its seeds.
type Result struct {
	Row Row
	// Delta is the scenario's δ, and EpsExact the μ-GDP ε at δ of Row.Mu
	// (0 without one).
	Delta, EpsExact float64
	// Counts over the seeds: ε_lb > 0, μ_lb > 0, μ_lb > Row.Mu,
	// ε_lb > EpsExact, ε_lb above the tightest claim's ε at δ, and claim
	// refuted (the CLI's exit 1).
	EpsPos, MuPos, MuAbove, EpsAbove, AboveClaim, Refuted int
	// SumEps and SumMu add the headline ε_lb and μ_lb (for their means);
	// MaxEps and MaxMu are the largest seen.
	SumEps, SumMu, MaxEps, MaxMu float64
	// Claim is the tightest claim's ε at δ (+Inf or 0 without one), Ceiling
	// the largest ε_lb the run counts allow (of the last seed).
	Claim, Ceiling float64
	// Elapsed is the wall time of the row.
	Elapsed time.Duration
}

// Rate is k of n with its two-sided 95% Clopper–Pearson interval.
type Rate struct {
	K, N   int
	Lo, Hi float64
}

// rate returns k/n with its interval.
func rate(k, n int) Rate {
	iv, err := stats.ClopperPearson(k, n, 0.95)
	if err != nil {
		return Rate{K: k, N: n, Lo: math.NaN(), Hi: math.NaN()}
	}
	return Rate{K: k, N: n, Lo: iv.Lo, Hi: iv.Hi}
}

// String renders "k/n = p [lo, hi]".
func (r Rate) String() string {
	return fmt.Sprintf("%d/%d = %.3f [%.3f, %.3f]", r.K, r.N, float64(r.K)/float64(r.N), r.Lo, r.Hi)
}

// Compatible reports whether the rate is compatible with a true rate of
// at most p: the interval's lower end is at most p.
func (r Rate) Compatible(p float64) bool { return r.Lo <= p }

// Seed is one audit's headline.
type Seed struct {
	Epsilon, Mu, Claim, Ceiling, Delta float64
	Refuted                            bool
}

// load reads the row's scenario with its settings and audit.trials (not
// set when Runs is 0: the canary design's runs are its own).
func load(row Row) (*scenario.Config, error) {
	sets := make([]scenario.Setting, 0, len(row.Sets)+1)
	all := slices.Clone(row.Sets)
	if row.Runs > 0 {
		all = append(all, fmt.Sprintf("audit.trials=%d", row.Runs))
	}
	for _, s := range all {
		st, err := scenario.ParseSetting(s)
		if err != nil {
			return nil, err
		}
		sets = append(sets, st)
	}
	return scenario.LoadConfig(row.File, sets...)
}

// Check reports an error if the row's scenario does not load and build
// with its settings, or if the row asks for no seeds.
func Check(row Row) error {
	if row.Seeds < 1 {
		return fmt.Errorf("%s: seeds must be ≥ 1, got %d", row.Label, row.Seeds)
	}
	c, err := load(row)
	if err != nil {
		return err
	}
	p, err := scenario.Build(c)
	if err != nil {
		return err
	}
	return p.Close()
}

// runSeed loads the row's scenario with its settings, runs the audit of
// the given seed on one worker and returns its headline figures.
func runSeed(ctx context.Context, row Row, seed uint64) (Seed, error) {
	c, err := load(row)
	if err != nil {
		return Seed{}, err
	}
	c.Seed = seed
	p, err := scenario.Build(c)
	if err != nil {
		return Seed{}, err
	}
	defer p.Close()
	x := p.Audit.Execution()
	x.Workers = 1
	a, err := p.Audit.WithExecution(x)
	if err != nil {
		return Seed{}, err
	}
	tr, err := a.Simulate(ctx, 0, a.Options().Trials)
	if err != nil {
		return Seed{}, err
	}
	r, err := a.AnalyzeContext(ctx, tr)
	if err != nil {
		return Seed{}, err
	}
	return headline(r), nil
}

// headline returns a report's ε_lb (the verdict's), its μ_lb (at the
// headline release, or the largest over releases under Bonferroni), the
// tightest claim's ε at δ and the verdict.
func headline(r *audit.Report) Seed {
	s := Seed{Epsilon: r.Epsilon.Epsilon, Refuted: r.Violated(), Claim: math.Inf(1), Delta: r.Delta}
	for k := range r.Points {
		pr := &r.Points[k]
		if r.Headline >= 0 && k != r.Headline {
			continue
		}
		s.Mu = math.Max(s.Mu, pr.MuBound().Mu)
		s.Ceiling = math.Max(s.Ceiling, pr.Ceiling.Epsilon)
		for _, c := range pr.Claims {
			if c.Covered {
				s.Claim = math.Min(s.Claim, float64(c.EpsilonAtDelta))
			}
		}
	}
	return s
}

// Run audits every seed of the row in turn, writing one dot per seed to
// progress (may be nil).
func Run(ctx context.Context, row Row, progress io.Writer) (Result, error) {
	res := Result{Row: row}
	start := time.Now()
	for i := 0; i < row.Seeds; i++ {
		s, err := runSeed(ctx, row, row.First+uint64(i))
		if err != nil {
			return res, fmt.Errorf("%s, seed %d: %w", row.File, row.First+uint64(i), err)
		}
		if i == 0 {
			res.Delta, res.Claim = s.Delta, s.Claim
			if row.Mu > 0 {
				if res.EpsExact, err = stats.GDPEpsilon(row.Mu, s.Delta); err != nil {
					return res, err
				}
			}
		}
		res.add(s)
		if progress != nil {
			fmt.Fprint(progress, ".")
		}
	}
	if progress != nil {
		fmt.Fprintln(progress)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// add counts one seed.
func (res *Result) add(s Seed) {
	count := func(c *int, ok bool) {
		if ok {
			*c++
		}
	}
	count(&res.EpsPos, s.Epsilon > 0)
	count(&res.MuPos, s.Mu > 0)
	count(&res.Refuted, s.Refuted)
	count(&res.AboveClaim, s.Epsilon > s.Claim)
	if res.Row.Mu > 0 {
		count(&res.MuAbove, s.Mu > res.Row.Mu)
		count(&res.EpsAbove, s.Epsilon > res.EpsExact)
	}
	res.SumEps += s.Epsilon
	res.SumMu += s.Mu
	res.MaxEps = math.Max(res.MaxEps, s.Epsilon)
	res.MaxMu = math.Max(res.MaxMu, s.Mu)
	res.Ceiling = s.Ceiling
}

// Rates returns the row's rates by name: "eps>0", "mu>0", "refuted",
// "eps>claim" and, with a known μ, "mu>mu" and "eps>exact".
func (res *Result) Rates() map[string]Rate {
	n := res.Row.Seeds
	m := map[string]Rate{
		"eps>0":     rate(res.EpsPos, n),
		"mu>0":      rate(res.MuPos, n),
		"refuted":   rate(res.Refuted, n),
		"eps>claim": rate(res.AboveClaim, n),
	}
	if res.Row.Mu > 0 {
		m["mu>mu"] = rate(res.MuAbove, n)
		m["eps>exact"] = rate(res.EpsAbove, n)
	}
	return m
}

// header is the table's header (Markdown).
const header = "| check | scenario | seeds × runs | ε_lb > 0 | μ_lb > 0 | μ_lb > μ | ε_lb > ε_μ(δ) | ε_lb > ε_ub | refuted (exit 1) | mean ε_lb (max) | mean μ_lb (max) | wall s |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|\n"

// WriteTable writes the results as a Markdown table, with the rates
// k/n = p and their 95% Clopper–Pearson intervals.
func WriteTable(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString(header)
	for _, res := range results {
		r := res.Rates()
		get := func(k string) string {
			if v, ok := r[k]; ok {
				return v.String()
			}
			return "—"
		}
		mu := ""
		if res.Row.Mu > 0 {
			mu = fmt.Sprintf(" (μ = %g, ε_μ = %.4f)", res.Row.Mu, res.EpsExact)
		}
		n := float64(res.Row.Seeds)
		runs := "one run"
		if res.Row.Runs > 0 {
			runs = strconv.Itoa(res.Row.Runs)
		}
		fmt.Fprintf(&b, "| %s%s | %s | %d × %s | %s | %s | %s | %s | %s | %s | %.3f (%.3f) | %.3f (%.3f) | %.0f |\n",
			res.Row.Label, mu, scenarioCell(res.Row), res.Row.Seeds, runs,
			get("eps>0"), get("mu>0"), get("mu>mu"), get("eps>exact"), get("eps>claim"), get("refuted"),
			res.SumEps/n, res.MaxEps, res.SumMu/n, res.MaxMu, res.Elapsed.Seconds())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// scenarioCell names the file (without testdata/) and its settings.
func scenarioCell(row Row) string {
	s := strings.TrimPrefix(row.File, "testdata/")
	for _, set := range row.Sets {
		s += " `" + set + "`"
	}
	return s
}
