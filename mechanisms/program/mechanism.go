package program

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// DefaultDeterminismChecks is the number of trials a Mechanism re-runs in
// fresh processes when not told otherwise.
const DefaultDeterminismChecks = 4

// Mechanism is a program as the audit engine's mechanism: trial i on side s
// is the request {"trial": i, "side": s, "seed": t.Seed} served by the
// pool, and its answer's releases are emitted in order. A few trials
// (CheckTrials) are also run in a brand-new process and must give the
// same releases bit for bit, so that a program whose output depends on
// anything but (seed, side) — the process's history, the time, a global
// generator seeded from the clock — is refused instead of making results
// depend on the worker count or the shard layout.
//
// The program's "info" object is read as integer counters: the names of
// mechanisms.Info's fields (iterations, proposals, accepted,
// clipped_grads, grad_evals, clipped_llrs, llr_evals, projections) fill
// them, "correct" (one count per release point, when TestSize > 0) the
// test accuracy, and any other key with a non-negative integer value is
// kept in Info.Counters. Other values are ignored: sums of floating-point
// numbers would depend on the order of the trials.
type Mechanism struct {
	pool *Pool
	hs   Handshake
	// iterationsKnown: the points carry the iterations, not ranks.
	iterationsKnown bool
	points          []mechanisms.ReleasePoint
	name            string
	check           map[int]bool
	testSize        int
	canaries        int
}

// MechanismConfig says how to run the program as a mechanism.
type MechanismConfig struct {
	Config
	// CheckTrials lists the trials re-run in a fresh process.
	CheckTrials []int
	// TestSize > 0 says that the program measures its releases on a test
	// set of that many records and reports info.correct.
	TestSize int
}

// CheckTrialsOf spreads k determinism checks over an audit of n trials:
// trials ⌊j·n/k⌋, j = 0 … k−1 (the same whatever the shard layout).
func CheckTrialsOf(n, k int) []int {
	var out []int
	for j := 0; j < k && j < n; j++ {
		out = append(out, int(int64(j)*int64(n)/int64(k)))
	}
	return out
}

// NewMechanism starts the program (one process, for the handshake).
func NewMechanism(ctx context.Context, c MechanismConfig) (*Mechanism, error) {
	pool, hs, err := Start(ctx, c.Config)
	if err != nil {
		return nil, err
	}
	if hs.Scores && c.Canaries == 0 {
		pool.Close()
		return nil, fmt.Errorf(`program: the handshake says "scores": true, which only the canary design uses (audit.design: canaries); in the multi-run design a program answers with its releases`)
	}
	m := FromHandshake(hs, c)
	m.pool = pool
	return m, nil
}

// FromHandshake returns a mechanism that knows the program's release
// points and dimension but runs nothing — enough to analyse trials a
// program produced elsewhere (a merge of shards).
func FromHandshake(hs Handshake, c MechanismConfig) *Mechanism {
	m := &Mechanism{hs: hs, name: "program " + strings.Join(c.Command, " "), check: map[int]bool{}, testSize: c.TestSize, canaries: c.Canaries}
	m.points, m.iterationsKnown = mechanisms.PointsFromLabels(hs.Releases, hs.Iterations)
	for _, i := range c.CheckTrials {
		m.check[i] = true
	}
	return m
}

// TestSize is the size of the test set the program measures its releases
// on (0: it does not).
func (m *Mechanism) TestSize() int { return m.testSize }

// IterationsKnown implements mechanisms.IterationsReporter: whether the
// handshake gave the iteration of each release (its "iterations", or
// labels "iteration K"); otherwise the release points count 1, 2, ….
func (m *Mechanism) IterationsKnown() bool { return m.iterationsKnown }

// ChecksDeterminism implements audit.SelfChecking: a program's
// determinism is checked by its own rule (CheckTrials, rerun in a fresh
// process), so the engine reruns none of its trials.
func (m *Mechanism) ChecksDeterminism() bool { return true }

// Handshake returns the program's handshake.
func (m *Mechanism) Handshake() Handshake { return m.hs }

// Name implements mechanisms.Namer.
func (m *Mechanism) Name() string { return m.name }

// Dim implements mechanisms.Mechanism: the handshake's dim, or the number
// of canaries when the program answers with scores.
func (m *Mechanism) Dim() int {
	if m.hs.Scores {
		return m.canaries
	}
	return m.hs.Dim
}

// Points implements mechanisms.Mechanism: the handshake's release labels.
func (m *Mechanism) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) { return m.points, nil }

// Close stops the program's processes.
func (m *Mechanism) Close() error {
	if m == nil || m.pool == nil {
		return nil
	}
	return m.pool.Close()
}

// Run implements mechanisms.Mechanism.
func (m *Mechanism) Run(ctx context.Context, t mechanisms.Trial, _ *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	req := Request{Trial: t.Index, Side: SideD, Seed: t.Seed}
	if t.Side == dataset.SideDPrime {
		req.Side = SideDPrime
	}
	return m.run(ctx, req, emit)
}

// RunCanaries runs a canary design's run (audit.CanaryRunner): the
// request carries the inclusion mask, and the answer holds the program's
// releases, or its scores when its handshake says "scores": true.
func (m *Mechanism) RunCanaries(ctx context.Context, t mechanisms.Trial, include []bool, emit mechanisms.Emit) (mechanisms.Info, error) {
	mask := make([]byte, len(include))
	for i, in := range include {
		mask[i] = '0'
		if in {
			mask[i] = '1'
		}
	}
	return m.run(ctx, Request{Trial: t.Index, Side: SideD, Seed: t.Seed, Canaries: string(mask)}, emit)
}

// run serves one request and emits its answer.
func (m *Mechanism) run(ctx context.Context, req Request, emit mechanisms.Emit) (mechanisms.Info, error) {
	if m.pool == nil {
		return mechanisms.Info{}, fmt.Errorf("the program is not running (this audit only analyses trials produced elsewhere)")
	}
	res, err := m.pool.Run(ctx, req)
	if err != nil {
		return mechanisms.Info{}, err
	}
	if m.check[req.Trial] {
		fresh, err := m.pool.RunFresh(ctx, req)
		if err != nil {
			return mechanisms.Info{}, fmt.Errorf("determinism check in a fresh process: %w", err)
		}
		if err := Compare(res, fresh); err != nil {
			return mechanisms.Info{}, fmt.Errorf("the program is not deterministic: trial %d (side %s, seed %d) answered differently in a fresh process: %v (a program must draw all its randomness from the seed it is given)", req.Trial, req.Side, req.Seed, err)
		}
	}
	info, err := m.parseInfo(res.Info)
	if err != nil {
		return info, fmt.Errorf("trial %d (side %s, seed %d): info: %v", req.Trial, req.Side, req.Seed, err)
	}
	for k, r := range res.Releases {
		if err := emit(k, r); err != nil {
			return info, err
		}
	}
	return info, nil
}

// parseInfo reads the integer counters of a program's info object.
func (m *Mechanism) parseInfo(raw json.RawMessage) (mechanisms.Info, error) {
	var info mechanisms.Info
	if len(raw) == 0 {
		if m.testSize > 0 {
			return info, fmt.Errorf(`no "correct" counts (one per release point) although the scenario measures accuracy`)
		}
		return info, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return info, fmt.Errorf("must be a JSON object: %v", err)
	}
	std := map[string]*int{"iterations": &info.Iterations, "proposals": &info.Proposals, "accepted": &info.Accepted,
		"clipped_grads": &info.ClippedGrads, "grad_evals": &info.GradEvals, "clipped_llrs": &info.ClippedLLRs,
		"llr_evals": &info.LLREvals, "projections": &info.Projections}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := fields[k]
		switch {
		case k == "correct" && m.testSize > 0:
			if err := m.parseCorrect(v, &info); err != nil {
				return info, err
			}
		case std[k] != nil:
			n, err := stdCounter(k, v)
			if err != nil {
				return info, err
			}
			*std[k] = n
		default:
			// Another counter is kept when it is a count; anything else
			// (not a number) is not aggregated.
			if n, ok := otherCounter(v); ok {
				if info.Counters == nil {
					info.Counters = map[string]int64{}
				}
				info.Counters[k] = n
			}
		}
	}
	if m.testSize > 0 && info.Correct == nil {
		return info, fmt.Errorf(`no "correct" counts (one per release point) although the scenario measures accuracy`)
	}
	return info, nil
}

// parseCorrect appends to info.Correct the accuracy counts of an info
// object's "correct" field v: one per release point, each an integer in
// [0, test set's size].
func (m *Mechanism) parseCorrect(v json.RawMessage, info *mechanisms.Info) error {
	var cs []float64
	if err := json.Unmarshal(v, &cs); err != nil || len(cs) != len(m.points) {
		return fmt.Errorf(`"correct" must list one count per release point (%d), got %s`, len(m.points), truncate(string(v), 60))
	}
	for _, c := range cs {
		n, ok := count(c)
		if !ok || n > int64(m.testSize) {
			return fmt.Errorf(`"correct" counts must be integers in [0, %d] (the test set's size), got %s`, m.testSize, truncate(string(v), 60))
		}
		info.Correct = append(info.Correct, n)
	}
	return nil
}

// stdCounter reads the value v of the standard counter k of an info
// object (mechanisms.Info's): an integer in [0, MaxInt32].
func stdCounter(k string, v json.RawMessage) (int, error) {
	var c float64
	n, ok := int64(0), json.Unmarshal(v, &c) == nil
	if ok {
		n, ok = count(c)
	}
	if !ok || n > math.MaxInt32 {
		return 0, fmt.Errorf("%q must be a non-negative integer, got %s", k, truncate(string(v), 60))
	}
	return int(n), nil
}

// otherCounter reads the value v of a counter of a program's own: ok when
// it is a count (see count).
func otherCounter(v json.RawMessage) (int64, bool) {
	var c float64
	if json.Unmarshal(v, &c) != nil {
		return 0, false
	}
	return count(c)
}

// count converts an exactly integral, non-negative number below 2⁵³.
func count(c float64) (int64, bool) {
	if c < 0 || c != math.Trunc(c) || c > 1<<53 {
		return 0, false
	}
	return int64(c), true
}
