package audit

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// gaussRows draws n rows of w independent N(0, 1) values.
func gaussRows(rng *rand.Rand, n, w int) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, w)
		for j := range rows[i] {
			rows[i][j] = rng.NormFloat64()
		}
	}
	return rows
}

// samplesOf builds the samples of the two files, D's rows first, with
// points release points of dimension dim.
func samplesOf(d, dp [][]float64, points, dim int) *Samples {
	s := &Samples{Name: "test rows", Dim: dim}
	for k := 0; k < points; k++ {
		s.Points = append(s.Points, mechanisms.ReleasePoint{Iteration: k + 1, Label: string(rune('a' + k))})
	}
	s.Rows = append(append(s.Rows, d...), dp...)
	for i := range s.Rows {
		s.Sides = append(s.Sides, dataset.Side(min(1, i/len(d))))
	}
	return s
}

// simulateSamples prepares the samples' audit and returns its trials.
func simulateSamples(t testing.TB, s *Samples, o Options) (*Audit, *Trials) {
	t.Helper()
	a, err := NewSamples(Target{Name: "rows"}, s, o)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Trials(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return a, tr
}

// The detection study (docs/derivations/duplicate-rows.md). 120 seeded
// cases copy one row 2 to 10 times (in all: the original and its copies),
// within D's file, within D′'s, or from D's into D′'s, among Gaussian rows
// of 1 to 3 release points of dimension 1 or 2: every case is reported with
// exactly the counts the copies imply, both by the files' check and by the
// replayed trials' (RepeatedRuns). 500 seeds of independent float64
// Gaussian rows (1,000 rows per file, one value per row, the easiest case
// for an accidental repeat) are never reported.
func TestDuplicateRowsStudy(t *testing.T) {
	cases, detected := 0, 0
	for seed := uint64(0); seed < 120; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		points, dim := 1+int(seed%3), 1+int(seed/3%2)
		w := points * dim
		d, dp := gaussRows(rng, 100+rng.IntN(200), w), gaussRows(rng, 100+rng.IntN(200), w)
		copies := 2 + int(seed%9) // the row and its copies
		var want Duplicates
		src, dst := d, d
		switch seed % 3 {
		case 0:
			want.WithinD = copies - 1
		case 1:
			src, dst = dp, dp
			want.WithinDPrime = copies - 1
		case 2:
			dst = dp
			// The first copy in D′ repeats D's row; the others repeat it
			// and one another.
			want.Across, want.WithinDPrime = copies-1, copies-2
		}
		// Overwrite copies−1 rows of dst (never the original) with copies
		// of the original row: copies occurrences in all.
		orig := rng.IntN(len(src))
		placed := 0
		for _, j := range rng.Perm(len(dst)) {
			if placed == copies-1 {
				break
			}
			if seed%3 != 2 && j == orig {
				continue
			}
			dst[j] = append([]float64(nil), src[orig]...)
			placed++
		}
		cases++
		got := CountDuplicateRows(d, dp)
		if got != want {
			t.Errorf("seed %d (%d copies, case %d): counted %+v, want %+v", seed, copies, seed%3, got, want)
			continue
		}
		_, tr := simulateSamples(t, samplesOf(d, dp, points, dim), Options{Seed: seed, Repeats: RepeatsNoted})
		rr, ok := tr.RepeatedRuns()
		if within := (Duplicates{WithinD: want.WithinD, WithinDPrime: want.WithinDPrime}); !ok || rr != within {
			t.Errorf("seed %d: the trials count %+v (hashes %v), want %+v", seed, rr, ok, within)
			continue
		}
		detected++
	}
	falseReports := 0
	for seed := uint64(0); seed < 500; seed++ {
		rng := rand.New(rand.NewPCG(seed, 23))
		d, dp := gaussRows(rng, 1000, 1), gaussRows(rng, 1000, 1)
		if got := CountDuplicateRows(d, dp); got.Any() {
			falseReports++
			t.Errorf("seed %d: independent rows reported as %+v", seed, got)
		}
	}
	t.Logf("copied rows: %d of %d cases reported with the exact counts; independent rows: %d false reports in 500 seeds", detected, cases, falseReports)
}

// Counts on a hand-made example: D = {a, b, a, a}, D′ = {b, c, c, −0}:
// D repeats a twice; D′ repeats c once; b of D′ is D's b (across 1); −0
// and +0 are different bits, so D′'s −0 repeats nothing (D holds +0).
func TestCountDuplicateRowsByHand(t *testing.T) {
	a, b, c := []float64{1, 2}, []float64{3, 4}, []float64{5, 6}
	zero, negZero := []float64{0, 0}, []float64{0, math.Copysign(0, -1)}
	d := [][]float64{a, b, append([]float64(nil), a...), append([]float64(nil), a...), zero}
	dp := [][]float64{append([]float64(nil), b...), c, append([]float64(nil), c...), negZero}
	got := CountDuplicateRows(d, dp)
	if want := (Duplicates{WithinD: 2, WithinDPrime: 1, Across: 1}); got != want {
		t.Errorf("counted %+v, want %+v", got, want)
	}
	msg := got.String()
	for _, s := range []string{"2 runs on D and 1 on D′ repeat an earlier run", "1 run on D′ repeats a run on D"} {
		if !strings.Contains(msg, s) {
			t.Errorf("%q lacks %q", msg, s)
		}
	}
}

// A hash collision is confirmed on the rows themselves: rows filed under
// one hash but different are distinct rows, each found again when it
// repeats.
func TestRowIndexConfirmsCollisions(t *testing.T) {
	rows := [][]float64{{1}, {2}, {2}, {1}, {3}}
	x := newRowIndex(0, func(i, j int) bool { return sameBits(rows[i], rows[j]) })
	const h = 42 // every row under one hash: a collision for each pair
	var found []int
	for i := range rows {
		j := x.find(h, i)
		found = append(found, j)
		if j < 0 {
			x.add(h, i)
		}
	}
	if want := []int{-1, -1, 1, 0, -1}; !equalInts(found, want) {
		t.Errorf("found %v, want %v", found, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// constMech releases a value that depends only on the side when fixed is
// set (a sampler that ignores its seed), else a draw from the trial's
// stream; at trial 0 and beyond it releases value(i) if set.
type constMech struct {
	fixed bool
	value func(i int) float64
}

func (constMech) Dim() int { return 1 }
func (constMech) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "final"}, {Iteration: 2, Label: "again"}}, nil
}
func (m constMech) Run(_ context.Context, t mechanisms.Trial, _ *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	var x float64
	switch {
	case m.value != nil:
		x = m.value(t.Index)
	case m.fixed:
		x = float64(t.Side) + 0.25
	default:
		x = t.RNG.NormFloat64()
	}
	for k := 0; k < 2; k++ {
		if err := emit(k, []float64{x + float64(k)}); err != nil {
			return mechanisms.Info{}, err
		}
	}
	return mechanisms.Info{}, nil
}

// A mechanism that ignores its seed repeats every trial on a side: under
// RepeatsRefused the analysis refuses with the counts and the likely
// cause; under RepeatsNoted the report carries them (Duplicates and a
// note); under the default, RepeatsIgnored, it says nothing. A mechanism
// with a continuous output gives a report with neither under any policy.
func TestRepeatedTrialsRefusedOrNoted(t *testing.T) {
	const n = 60
	o := Options{Trials: n, Seed: 3, Assignment: AssignBalanced}
	fixed := Target{Name: "fixed", Mechanism: constMech{fixed: true}}
	o.Repeats = RepeatsRefused
	_, err := Run(context.Background(), fixed, o, Execution{Workers: 2})
	var re *RepeatedRunsError
	if !errors.As(err, &re) || re.Duplicates != (Duplicates{WithinD: n/2 - 1, WithinDPrime: n/2 - 1}) {
		t.Fatalf("refused with %v", err)
	}
	for _, s := range []string{"29 runs on D and 29 on D′ repeat", "ignores its seed", "allow_repeated_releases"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
	o.Repeats = RepeatsNoted
	r, err := Run(context.Background(), fixed, o, Execution{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	o.Repeats = RepeatsIgnored
	if ri, err := Run(context.Background(), fixed, o, Execution{Workers: 2}); err != nil || ri.Duplicates != nil || len(ri.Notes) != 0 {
		t.Errorf("ignored: %v %+v %q", err, ri.Duplicates, ri.Notes)
	}
	if r.Duplicates == nil || *r.Duplicates != re.Duplicates || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "29 runs on D and 29 on D′") {
		t.Errorf("noted: %+v %q", r.Duplicates, r.Notes)
	}
	o.Repeats = RepeatsRefused
	r, err = Run(context.Background(), Target{Name: "draws", Mechanism: constMech{}}, o, Execution{Workers: 2})
	if err != nil || r.Duplicates != nil || len(r.Notes) != 0 {
		t.Errorf("continuous: %v %+v %q", err, r.Duplicates, r.Notes)
	}
}

// Trials whose stored features coincide (float32 deviations from trial
// 0's) but whose raw releases differ are not repeats: the hash is of the
// released float64 values. Here trial 0 releases 0 and trial i releases
// 10⁶ + i·10⁻⁹, which the store keeps as the same float32 10⁶.
func TestRepeatsJudgedOnRawReleases(t *testing.T) {
	m := constMech{value: func(i int) float64 {
		if i == 0 {
			return 0
		}
		return 1e6 + float64(i)*1e-9
	}}
	a, err := New(Target{Name: "close", Mechanism: m}, Options{Trials: 40, Assignment: AssignBalanced, Repeats: RepeatsRefused})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Simulate(context.Background(), 0, 40)
	if err != nil {
		t.Fatal(err)
	}
	row := func(i int) []float64 { return tr.Row(i, 0, make([]float64, tr.F)) }
	if row(2)[0] != row(4)[0] {
		t.Fatalf("the store should keep trials 2 and 4 alike: %v %v", row(2), row(4))
	}
	if d, ok := tr.RepeatedRuns(); !ok || d.Any() {
		t.Errorf("repeats %+v (hashes %v)", d, ok)
	}
	if _, err := a.Analyze(tr); err != nil {
		t.Errorf("refused: %v", err)
	}
}

// The hashes travel with the trials: shards written and read as parts and
// merged, and a checkpointed run, hold the hashes of a whole run, so the
// refusal happens after a merge or a resume too; a part without hashes
// (written before they existed) merges into trials that carry none.
func TestRepeatHashesSurviveShardsAndCheckpoints(t *testing.T) {
	const n = 50
	o := Options{Trials: n, Seed: 9, Assignment: AssignBalanced, Repeats: RepeatsRefused}
	a, err := New(Target{Name: "fixed", Mechanism: constMech{fixed: true}}, o)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := a.Simulate(context.Background(), 0, n)
	if err != nil {
		t.Fatal(err)
	}
	var m Merger
	for i := 0; i < 3; i++ {
		lo, hi := ShardRange(n, i, 3)
		part, err := a.Simulate(context.Background(), lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WritePart(&b, part, nil); err != nil {
			t.Fatal(err)
		}
		back, _, err := ReadPart(bytes.NewReader(b.Bytes()), int64(b.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(back, "part"); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := m.Trials()
	if err != nil {
		t.Fatal(err)
	}
	if !equalHashes(merged.Hash, whole.Hash) {
		t.Errorf("merged hashes differ from the whole run's")
	}
	var re *RepeatedRunsError
	if _, err := a.Analyze(merged); !errors.As(err, &re) || re.Duplicates.WithinD != n/2-1 {
		t.Errorf("merged trials: %v", err)
	}
	ckDir := t.TempDir()
	ck, err := a.SimulateCheckpointed(context.Background(), ckDir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !equalHashes(ck.Hash, whole.Hash) {
		t.Errorf("checkpointed hashes differ from the whole run's")
	}
	// Resumed: every block is read back from the checkpoint.
	res, err := a.SimulateCheckpointed(context.Background(), ckDir, true)
	if err != nil {
		t.Fatal(err)
	}
	if !equalHashes(res.Hash, whole.Hash) {
		t.Errorf("resumed hashes differ from the whole run's")
	}
	if _, err := a.Analyze(res); !errors.As(err, &re) {
		t.Errorf("resumed trials: %v", err)
	}
	// A part without hashes.
	lo, hi := ShardRange(n, 0, 2)
	p0, _ := a.Simulate(context.Background(), lo, hi)
	p1, _ := a.Simulate(context.Background(), hi, n)
	p0.Hash = nil
	var b bytes.Buffer
	if err := WritePart(&b, p0, nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := ReadPart(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil || back.Hash != nil {
		t.Fatalf("a part without hashes read back as %v, %v", back.Hash, err)
	}
	old, err := MergeTrials([]*Trials{back, p1}, []string{"old", "new"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := old.RepeatedRuns(); ok || old.Hash != nil {
		t.Errorf("merged with a part without hashes: %v", old.Hash)
	}
}

func equalHashes(a, b []uint64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// An unknown policy is refused, naming the field.
func TestRepeatPolicyValidated(t *testing.T) {
	var fe *FieldError
	if err := (Options{Trials: 100, Repeats: RepeatsRefused + 1}).Validate(); !errors.As(err, &fe) || fe.Path.Go() != "Repeats" {
		t.Errorf("got %v", err)
	}
}
