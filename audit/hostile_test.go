package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// craftPart writes a part whose header is hdr, followed by the declared
// sections filled with zeros (sides 0) and a correct checksum: a file the
// reader can only refuse for what its header says.
func craftPart(hdr map[string]any, spec []byte, refLen, sides, xLen int) []byte {
	var b bytes.Buffer
	hb, _ := json.Marshal(hdr)
	b.WriteString(partMagic)
	binary.Write(&b, binary.LittleEndian, uint32(len(hb)))
	b.Write(hb)
	b.Write(spec)
	b.Write(make([]byte, 8*refLen+sides+4*xLen))
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// smallPart is a valid part of 3 trials with 2 points × 2 features.
func smallPart(t testing.TB) []byte {
	tr := &Trials{ConfigHash: "abc", N: 10, Lo: 2, Hi: 5, P: 2, F: 2,
		Side: []dataset.Side{0, 1, 0}, Ref: []float64{1, 2, 3, 4}, X: make([]float32, 12)}
	for i := range tr.X {
		tr.X[i] = float32(i) / 8
	}
	var b bytes.Buffer
	if err := WritePart(&b, tr, []byte("spec")); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Crafted parts are refused before anything the header declares is
// allocated: each error is checked, and none may panic.
func TestCraftedParts(t *testing.T) {
	hdr := func(n, lo, hi, p, f int, spec int64) map[string]any {
		return map[string]any{"config_hash": "x", "n": n, "lo": lo, "hi": hi, "points": p, "features": f, "spec_len": spec}
	}
	valid := smallPart(t)
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated before its magic"},
		{"bad magic", append([]byte("mcmcaudit-trials v2\n"), valid[20:]...), "bad magic"},
		{"truncated", valid[:len(valid)-1], "the header declares"},
		{"one byte more", append(append([]byte(nil), valid...), 0), "the header declares"},
		{"flipped bit", func() []byte { b := append([]byte(nil), valid...); b[len(b)-40] ^= 4; return b }(), "checksum"},
		{"header longer than the file", append([]byte(partMagic), 0xff, 0xff, 0x0f, 0), "header length"},
		{"header not JSON", craftPartRaw([]byte("{not json")), "(header)"},
		// 10⁵ points × 2^20 features: 8·10¹¹ bytes of reference declared.
		{"huge shape", craftPart(hdr(10, 0, 0, 100000, 1<<20, 0), nil, 0, 0, 0), "the header declares"},
		{"shape beyond the limits", craftPart(hdr(10, 0, 0, mechanisms.MaxReleasePoints+1, 1, 0), nil, 0, 0, 0), "(shape)"},
		{"negative range", craftPart(hdr(10, -1, 2, 1, 1, 0), nil, 1, 3, 3), "(range)"},
		{"hi beyond n", craftPart(hdr(10, 5, 11, 1, 1, 0), nil, 1, 6, 6), "(range)"},
		{"n beyond MaxTrials", craftPart(hdr(MaxTrials+1, 0, 1, 1, 1, 0), nil, 1, 1, 1), "(range)"},
		{"spec longer than the file", craftPart(hdr(10, 0, 1, 1, 1, 1<<29), nil, 1, 1, 1), "the header declares"},
		{"negative spec", craftPart(hdr(10, 0, 1, 1, 1, -5), nil, 1, 1, 1), "spec length"},
		{"side 2", func() []byte {
			b := craftPart(hdr(10, 0, 1, 1, 1, 0), nil, 1, 1, 1)
			// The side byte follows the 8-byte reference.
			i := len(b) - 32 - 4 - 1
			b[i] = 2
			sum := sha256.Sum256(b[:len(b)-32])
			copy(b[len(b)-32:], sum[:])
			return b
		}(), "(side)"},
	}
	for _, c := range cases {
		var err error
		alloc := allocated(func() { _, _, err = ReadPart(bytes.NewReader(c.b), int64(len(c.b))) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if alloc > uint64(4*len(c.b))+1<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte file", c.name, alloc, len(c.b))
		}
	}
	if _, _, err := ReadPart(bytes.NewReader(valid), int64(len(valid))); err != nil {
		t.Fatalf("the valid part: %v", err)
	}
}

func craftPartRaw(hb []byte) []byte {
	var b bytes.Buffer
	b.WriteString(partMagic)
	binary.Write(&b, binary.LittleEndian, uint32(len(hb)))
	b.Write(hb)
	b.Write(make([]byte, 32))
	return b.Bytes()
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A part that declares an audit of 10⁸ trials × 2^20 features while
// holding none (merge used to allocate N·P·F floats from such a tiny file,
// and crash): the headers are checked together before any allocation, and
// Merger refuses a shape beyond the feature store.
func TestMergeChecksHeadersBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	b := craftPart(map[string]any{"config_hash": "x", "n": MaxTrials, "lo": 0, "hi": 0, "points": 1, "features": 1 << 20, "spec_len": 0}, nil, 1<<20, 0, 0)
	path := filepath.Join(dir, "empty.part")
	os.WriteFile(path, b, 0o644)
	info, err := ReadPartHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPartInfos([]PartInfo{info}, []string{path}); err == nil || !strings.Contains(err.Error(), "trials [0, 100000000) are missing") {
		t.Errorf("coverage: %v", err)
	}
	tr, _, err := ReadPartFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m Merger
	var addErr error
	alloc := allocated(func() { addErr = m.Add(tr, "empty.part") })
	if addErr == nil || !strings.Contains(addErr.Error(), "exceed the feature store's limit of 16 GB") {
		t.Errorf("Merger.Add: %v", addErr)
	}
	if alloc > 1<<20 {
		t.Errorf("Merger.Add allocated %d bytes before refusing", alloc)
	}
	// Trials whose arrays do not match their shape are refused, not
	// copied out of range.
	bad := &Trials{ConfigHash: "x", N: 10, Lo: 8, Hi: 12, P: 1, F: 1, Side: make([]dataset.Side, 4), Ref: []float64{0}, X: make([]float32, 4)}
	if err := (&Merger{}).Add(bad, "bad"); err == nil || !strings.Contains(err.Error(), "not a valid range") {
		t.Errorf("out-of-range trials: %v", err)
	}
	short := &Trials{ConfigHash: "x", N: 10, Lo: 0, Hi: 2, P: 1, F: 2, Side: make([]dataset.Side, 2), Ref: []float64{0, 0}, X: make([]float32, 3)}
	if err := (&Merger{}).Add(short, "short"); err == nil || !strings.Contains(err.Error(), "arrays of the wrong length") {
		t.Errorf("short trials: %v", err)
	}
	// Headers of two parts that overlap, or of different shapes.
	infos := []PartInfo{{ConfigHash: "x", N: 10, Lo: 0, Hi: 6, P: 1, F: 1}, {ConfigHash: "x", N: 10, Lo: 5, Hi: 10, P: 1, F: 1}}
	if err := CheckPartInfos(infos, []string{"a", "b"}); err == nil || err.Error() != "b duplicates trials [5, 6) already in a" {
		t.Errorf("overlap: %v", err)
	}
	infos[1] = PartInfo{ConfigHash: "x", N: 10, Lo: 6, Hi: 10, P: 2, F: 1}
	if err := CheckPartInfos(infos, []string{"a", "b"}); err == nil || err.Error() != "b has a different shape than a" {
		t.Errorf("shape: %v", err)
	}
	infos[1].P = 1
	if err := CheckPartInfos(infos, []string{"a", "b"}); err != nil {
		t.Errorf("two parts that fit: %v", err)
	}
}

// A FIFO named as a part is refused at once, without waiting for a writer.
func TestPartFIFORefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo.part")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := ReadPartFile(path); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO part hangs")
	}
	if _, err := ReadPartHeader(path); err == nil {
		t.Error("ReadPartHeader accepted a FIFO")
	}
}

// FuzzReadPart feeds arbitrary bytes to the part reader: it never panics,
// never allocates much more than the file's size (the header is at most
// 1 MiB, and every array it declares must be present in the file), and
// what it accepts has arrays that match their declared shape and survives
// a write–read round trip.
func FuzzReadPart(f *testing.F) {
	f.Add(smallPart(f))
	f.Add(craftPart(map[string]any{"config_hash": "x", "n": 4, "lo": 1, "hi": 3, "points": 1, "features": 3, "spec_len": 2}, []byte("{}"), 3, 2, 6))
	f.Add([]byte(partMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tr *Trials
		var spec []byte
		var err error
		alloc := allocated(func() { tr, spec, err = ReadPart(bytes.NewReader(b), int64(len(b))) })
		if alloc > uint64(4*len(b))+4<<20 {
			t.Fatalf("allocated %d bytes for a %d-byte input", alloc, len(b))
		}
		if err != nil {
			if tr != nil || spec != nil {
				t.Fatal("trials returned with an error")
			}
			return
		}
		if err := tr.checkShape(); err != nil {
			t.Fatalf("accepted a part with %v", err)
		}
		var w bytes.Buffer
		if err := WritePart(&w, tr, spec); err != nil {
			t.Fatal(err)
		}
		tr2, spec2, err := ReadPart(bytes.NewReader(w.Bytes()), int64(w.Len()))
		if err != nil || !bytes.Equal(spec, spec2) || tr2.N != tr.N || tr2.Lo != tr.Lo || len(tr2.X) != len(tr.X) {
			t.Fatalf("round trip: %v", err)
		}
		for i := range tr.X {
			if math.Float32bits(tr.X[i]) != math.Float32bits(tr2.X[i]) {
				t.Fatalf("round trip changed feature %d", i)
			}
		}
		if _, err := storeSize(tr.N, tr.P, tr.F); err == nil && tr.N*tr.P*tr.F <= 1<<16 {
			var m Merger
			if err := m.Add(tr, "fuzz"); err != nil {
				t.Fatalf("Merger refused a valid part: %v", err)
			}
		}
	})
}

// The analysis stops between release points when its context is
// cancelled, returning an error that wraps the cause and no report.
func TestAnalyzeContextCancelled(t *testing.T) {
	a, err := New(cyclicTarget(t), Options{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a = withWorkers(t, a, 2)
	tr, err := a.Simulate(context.Background(), 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := a.AnalyzeContext(ctx, tr)
	if r != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: report %v, error %v", r != nil, err)
	}
	// Cancelled while running: the first attack fit cancels the context.
	// The analysis checks it before every attack, so each of the two
	// workers finishes at most the fit it had begun; without those checks
	// all 12 fits (six points, two attacks) would run. Counting fits
	// instead of timing them keeps the test true on a loaded machine.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var fits atomic.Int32
	spy := cancelOnFit{Classifier: attacks.Logistic{}, cancel: cancel, fits: &fits}
	b, err := New(cyclicTarget(t), Options{Trials: 200, Seed: 1, Attacks: []attacks.Classifier{spy, attacks.QDA{}}})
	if err != nil {
		t.Fatal(err)
	}
	b = withWorkers(t, b, 2)
	tr, err = b.Simulate(context.Background(), 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	r, err = b.AnalyzeContext(ctx, tr)
	if r != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during: report %v, error %v", r != nil, err)
	}
	if n := fits.Load(); n > 2 {
		t.Errorf("%d attack fits after the cancellation began; at most one per worker (2) may finish", n)
	}
}

// cancelOnFit is an attack that cancels the analysis's context when it is
// fitted, counting its fits.
type cancelOnFit struct {
	attacks.Classifier
	cancel context.CancelFunc
	fits   *atomic.Int32
}

func (c cancelOnFit) Fit(d *attacks.Data, delta, conf float64) (attacks.Scorer, error) {
	c.fits.Add(1)
	c.cancel()
	return c.Classifier.Fit(d, delta, conf)
}

// The work limit refuses a run before it starts and is raised on purpose;
// attacks beyond their dimension limit are refused by New, naming the
// attack and the limit.
func TestWorkAndDimensionLimits(t *testing.T) {
	a, err := New(cyclicTarget(t), Options{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a, err = a.WithExecution(Execution{MaxWork: 1000}); err != nil {
		t.Fatal(err)
	}
	w := a.Work()
	// Cyclic batch-1 SGLD, n = 6, 6 epochs: 36 iterations of
	// (1·1 + 1 + 1) units, 6 releases of θ (1 unit) and of its one
	// feature (1 unit), and the engine's 300 units per trial.
	if want := 36.0*3 + 6*(1+1) + 300; w.PerRun != want {
		t.Errorf("PerRun = %g, want %g", w.PerRun, want)
	}
	_, err = a.Simulate(context.Background(), 0, 200)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path.Go() != "MaxWork" || !strings.Contains(fe.Msg, "beyond the limit of 1e+03") {
		t.Fatalf("Simulate: %v", err)
	}
	if _, err := withMaxWork(t, a, 1e9).Simulate(context.Background(), 0, 200); err != nil {
		t.Fatalf("raised limit: %v", err)
	}
	if _, err := Run(context.Background(), cyclicTarget(t), Options{Trials: 200}, Execution{MaxWork: math.NaN()}); err == nil {
		t.Error("a NaN work limit was accepted")
	}
	// A 2000-dimensional release: qda is limited to 1000 features.
	big := gaussTarget(t, 1)
	d := &dataset.Dataset{Name: "wide", Records: []dataset.Record{{X: make([]float64, 2000)}, {X: make([]float64, 2000)}}}
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: make([]float64, 2000)})
	big.Pair = pair
	big.Mechanism = &mechanisms.Chain{Model: mechanisms.LinReg{D: 2000, Alpha: 1, Beta: 1}, Sampler: &mechanisms.GaussianQuery{Sigma: 1}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}
	_, err = New(big, Options{Trials: 100, Attacks: []attacks.Classifier{attacks.QDA{}}})
	if !errors.As(err, &fe) || fe.Path.Go() != "Attacks" || !strings.Contains(fe.Msg, "qda: at most 1000 features") || !strings.Contains(fe.Msg, "got 2000") {
		t.Errorf("qda on 2000 features: %v", err)
	}
	if _, err := New(big, Options{Trials: 100, Attacks: []attacks.Classifier{attacks.BestCoordinate{}}}); err != nil {
		t.Errorf("threshold on 2000 features: %v", err)
	}
}

// withMaxWork returns a with the work limit w.
func withMaxWork(t testing.TB, a *Audit, w float64) *Audit {
	t.Helper()
	x := a.Execution()
	x.MaxWork = w
	b, err := a.WithExecution(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
