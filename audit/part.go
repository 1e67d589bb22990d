package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"sort"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The trials file ("part") format, shared by shards and checkpoints:
//
//	magic line "mcmcaudit-trials v3\n"
//	uint32 length + JSON header (ID, N, range, P, F, sampler info, metrics, spec length)
//	spec: opaque bytes chosen by the writer (a scenario stores itself and
//	      the audit's design there, so that a merge needs nothing but the
//	      parts; a spec without a design, from an older writer, is refused
//	      by the merge)
//	P·F float64: the reference features (trial 0's)
//	Hi−Lo bytes: the side of each trial
//	(Hi−Lo)·P·F float32: the features' deviations from the reference
//	(Hi−Lo) uint64, only when the header says release_hashes: each
//	      trial's hash of its raw releases (Trials.Hash, kept when the
//	      audit looks for repeated runs; parts written before it was
//	      added have none, and a merge with such a part cannot look)
//	(Hi−Lo)·K float64, only when the header says release_probes: K (at
//	      most 4, with release_hashes): each trial's last K raw values
//	      (Trials.Probe), from which the chance of a repeat is estimated;
//	      a merge with a part without them expects no repeat
//	32 bytes: SHA-256 of everything above (a truncated or corrupted file is refused)
//
// All numbers are little-endian. A reader checks that the sizes the header
// declares add up to the file's size before it allocates anything.
const partMagic = "mcmcaudit-trials v3\n"

// Bounds on what a part may declare (beyond them a file is refused as
// corrupt before anything is allocated).
const (
	// The header carries the per-release counters (mechanisms.Info
	// PerRelease, about 150 bytes of JSON per release point); it can never
	// be longer than the file, which the reader checks first.
	maxPartHeader = 1 << 26
	maxPartSpec   = 1 << 30
	maxPartPoints = mechanisms.MaxReleasePoints
	maxPartFeat   = 1 << 20
)

type partHeader struct {
	ConfigHash string          `json:"config_hash"`
	N          int             `json:"n"`
	Lo         int             `json:"lo"`
	Hi         int             `json:"hi"`
	P          int             `json:"points"`
	F          int             `json:"features"`
	Info       mechanisms.Info `json:"info"`
	Correct    []int64         `json:"correct,omitempty"`
	TestSize   int             `json:"test_size,omitempty"`
	SpecLen    int64           `json:"spec_len"`
	Hashes     bool            `json:"release_hashes,omitempty"`
	Probes     int             `json:"release_probes,omitempty"`
}

// WritePart writes trials in the part format, with spec stored verbatim.
func WritePart(w io.Writer, t *Trials, spec []byte) error {
	h := sha256.New()
	bw := bufio.NewWriter(io.MultiWriter(w, h))
	hdr, err := json.Marshal(partHeader{ConfigHash: t.ConfigHash, N: t.N, Lo: t.Lo, Hi: t.Hi, P: t.P, F: t.F,
		Info: t.Info, Correct: t.Correct, TestSize: t.TestSize, SpecLen: int64(len(spec)), Hashes: len(t.Hash) == len(t.Side), Probes: t.probesKept()})
	if err != nil {
		return err
	}
	bw.WriteString(partMagic)
	binary.Write(bw, binary.LittleEndian, uint32(len(hdr)))
	bw.Write(hdr)
	bw.Write(spec)
	// The arrays go out encoded a few thousand values at a time: the same
	// bytes as value by value, without a call per value.
	var buf [8192]byte
	for lo := 0; lo < len(t.Ref); lo += len(buf) / 8 {
		part := t.Ref[lo:min(lo+len(buf)/8, len(t.Ref))]
		for i, x := range part {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
		}
		bw.Write(buf[:8*len(part)])
	}
	for lo := 0; lo < len(t.Side); lo += len(buf) {
		part := t.Side[lo:min(lo+len(buf), len(t.Side))]
		for i, x := range part {
			buf[i] = byte(x)
		}
		bw.Write(buf[:len(part)])
	}
	for lo := 0; lo < len(t.X); lo += len(buf) / 4 {
		part := t.X[lo:min(lo+len(buf)/4, len(t.X))]
		for i, x := range part {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		bw.Write(buf[:4*len(part)])
	}
	if len(t.Hash) == len(t.Side) {
		for lo := 0; lo < len(t.Hash); lo += len(buf) / 8 {
			part := t.Hash[lo:min(lo+len(buf)/8, len(t.Hash))]
			for i, x := range part {
				binary.LittleEndian.PutUint64(buf[8*i:], x)
			}
			bw.Write(buf[:8*len(part)])
		}
	}
	if t.probesKept() > 0 {
		for lo := 0; lo < len(t.Probe); lo += len(buf) / 8 {
			part := t.Probe[lo:min(lo+len(buf)/8, len(t.Probe))]
			for i, x := range part {
				binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
			}
			bw.Write(buf[:8*len(part)])
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err = w.Write(h.Sum(nil))
	return err
}

// hashingReader hashes what it reads.
type hashingReader struct {
	r io.Reader
	h hash.Hash
}

func (hr hashingReader) Read(b []byte) (int, error) {
	n, err := hr.r.Read(b)
	hr.h.Write(b[:n])
	return n, err
}

// ErrCorruptPart marks a trials file that is not one, or is damaged.
var ErrCorruptPart = errors.New("corrupt trials file")

func corrupt(what string) error { return fmt.Errorf("%w (%s)", ErrCorruptPart, what) }

// checkHeader validates a header against the file's size: every range is
// plausible and the declared sections add up to exactly size bytes.
func (hdr *partHeader) check(size, hlen int64) error {
	if hdr.N < 1 || hdr.N > MaxTrials || hdr.Lo < 0 || hdr.Hi < hdr.Lo || hdr.Hi > hdr.N {
		return corrupt("range")
	}
	if hdr.P < 1 || hdr.P > maxPartPoints || hdr.F < 1 || hdr.F > maxPartFeat {
		return corrupt("shape")
	}
	if hdr.SpecLen < 0 || hdr.SpecLen > maxPartSpec {
		return corrupt("spec length")
	}
	if len(hdr.Correct) != 0 && len(hdr.Correct) != hdr.P || hdr.TestSize < 0 {
		return corrupt("metrics")
	}
	m, pf := int64(hdr.Hi-hdr.Lo), int64(hdr.P)*int64(hdr.F)
	// m ≤ 1e8 and pf ≤ 1e5·2^20 < 2^37: m·pf < 2^64 only if checked.
	if m > 0 && pf > (math.MaxInt64/4)/m {
		return corrupt("shape")
	}
	want := int64(len(partMagic)) + 4 + hlen + hdr.SpecLen + 8*pf + m + 4*m*pf + sha256.Size
	if hdr.Hashes {
		want += 8 * m
	}
	if !hdr.probesValid() {
		return corrupt("release probes")
	}
	want += 8 * m * int64(hdr.Probes)
	if want != size {
		return corrupt(fmt.Sprintf("the header declares %d bytes, the file has %d", want, size))
	}
	return nil
}

// probesValid reports whether the header declares at most repeatProbes
// probe values per trial, and none without hashes.
func (hdr *partHeader) probesValid() bool {
	return hdr.Probes == 0 || hdr.Hashes && hdr.Probes > 0 && hdr.Probes <= repeatProbes
}

// readPartHeader reads the magic and the header of a part of size bytes
// and checks the header against size; the returned reader hashes what it
// reads, from the first byte.
func readPartHeader(br *bufio.Reader, size int64) (*partHeader, hashingReader, error) {
	hr := hashingReader{br, sha256.New()}
	magic := make([]byte, len(partMagic))
	if _, err := io.ReadFull(hr, magic); err != nil {
		return nil, hr, corrupt("truncated before its magic")
	}
	if string(magic) != partMagic {
		return nil, hr, errors.New("not a trials file of this version (bad magic)")
	}
	var n uint32
	if err := binary.Read(hr, binary.LittleEndian, &n); err != nil || n > maxPartHeader || int64(n) > size {
		return nil, hr, corrupt("header length")
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(hr, hb); err != nil {
		return nil, hr, corrupt("truncated header")
	}
	var hdr partHeader
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return nil, hr, corrupt("header")
	}
	if err := hdr.check(size, int64(n)); err != nil {
		return nil, hr, err
	}
	return &hdr, hr, nil
}

// ReadPart reads a part of size bytes and returns its trials and spec.
// Nothing is allocated before the header's sizes are checked against size.
func ReadPart(r io.Reader, size int64) (*Trials, []byte, error) {
	br := bufio.NewReader(r)
	hdr, hr, err := readPartHeader(br, size)
	if err != nil {
		return nil, nil, err
	}
	spec := make([]byte, hdr.SpecLen)
	if _, err := io.ReadFull(hr, spec); err != nil {
		return nil, nil, corrupt("truncated spec")
	}
	m := hdr.Hi - hdr.Lo
	t := &Trials{ConfigHash: hdr.ConfigHash, N: hdr.N, Lo: hdr.Lo, Hi: hdr.Hi, P: hdr.P, F: hdr.F, Info: hdr.Info,
		Correct: hdr.Correct, TestSize: hdr.TestSize,
		Side: make([]dataset.Side, m), Ref: make([]float64, hdr.P*hdr.F), X: make([]float32, m*hdr.P*hdr.F)}
	var buf [8]byte
	for i := range t.Ref {
		if _, err := io.ReadFull(hr, buf[:]); err != nil {
			return nil, nil, corrupt("truncated reference")
		}
		t.Ref[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
	}
	sides := make([]byte, m)
	if _, err := io.ReadFull(hr, sides); err != nil {
		return nil, nil, corrupt("truncated sides")
	}
	for i, s := range sides {
		if s > 1 {
			return nil, nil, corrupt("side")
		}
		t.Side[i] = dataset.Side(s)
	}
	for i := range t.X {
		if _, err := io.ReadFull(hr, buf[:4]); err != nil {
			return nil, nil, corrupt("truncated features")
		}
		t.X[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[:4]))
	}
	if hdr.Hashes {
		t.Hash = make([]uint64, m)
		for i := range t.Hash {
			if _, err := io.ReadFull(hr, buf[:]); err != nil {
				return nil, nil, corrupt("truncated hashes")
			}
			t.Hash[i] = binary.LittleEndian.Uint64(buf[:])
		}
	}
	if hdr.Probes > 0 {
		t.Probes, t.Probe = hdr.Probes, make([]float64, m*hdr.Probes)
		for i := range t.Probe {
			if _, err := io.ReadFull(hr, buf[:]); err != nil {
				return nil, nil, corrupt("truncated release probes")
			}
			t.Probe[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
		}
	}
	sum := hr.h.Sum(nil)
	var got [32]byte
	if _, err := io.ReadFull(br, got[:]); err != nil || string(got[:]) != string(sum) {
		return nil, nil, corrupt("checksum")
	}
	return t, spec, nil
}

// ReadPartFile reads a part file from disk; it must be a regular file.
func ReadPartFile(path string) (*Trials, []byte, error) {
	return readPartFileFlags(path, 0)
}

// readPartFileFlags is ReadPartFile with extra flags for open(2), such as
// O_NOFOLLOW.
func readPartFileFlags(path string, flags int) (*Trials, []byte, error) {
	f, size, err := openRegularFlags(path, flags)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	t, spec, err := ReadPart(f, size)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, spec, nil
}

// openRegular opens a file for reading only if it is a regular file. The
// open does not block (O_NONBLOCK), so that a FIFO is refused at once
// rather than waiting for a writer; on a regular file the flag is
// meaningless.
func openRegular(path string) (*os.File, int64, error) {
	return openRegularFlags(path, 0)
}

// openRegularFlags is openRegular with extra flags for open(2).
func openRegularFlags(path string, flags int) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot read %s: %s", path, unwrapPathError(err))
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("cannot read %s: not a regular file", path)
	}
	return f, st.Size(), nil
}

// PartInfo is what a part's header declares: its audit, the range of
// trials it holds and the shape of their features.
type PartInfo struct {
	ConfigHash string
	N, Lo, Hi  int
	P, F       int
	TestSize   int
}

// ReadPartHeader reads and checks only the header of a part file (its
// declared sizes against the file's size; the checksum is not verified),
// so that a merge can check that its parts fit together before it
// allocates the merged trials.
func ReadPartHeader(path string) (PartInfo, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return PartInfo{}, err
	}
	defer f.Close()
	hdr, _, err := readPartHeader(bufio.NewReader(f), size)
	if err != nil {
		return PartInfo{}, fmt.Errorf("%s: %w", path, err)
	}
	return PartInfo{ConfigHash: hdr.ConfigHash, N: hdr.N, Lo: hdr.Lo, Hi: hdr.Hi, P: hdr.P, F: hdr.F, TestSize: hdr.TestSize}, nil
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Merger joins parts of one audit into complete trials, one part at a
// time, so that a merge holds the result and a single part in memory.
type Merger struct {
	out   *Trials
	first string
	seen  []span
	// lo, hi: the range of trials the result covers when hi > 0 (a range
	// of a simulation run in blocks); else all of the audit's, [0, N).
	lo, hi int
	// noHash: some part carries no hashes of its releases; noProbe: some
	// part carries no probe values (or not as many as the first).
	noHash, noProbe bool
}

type span struct {
	lo, hi int
	name   string
}

// Add copies the trials of one part (named name in errors) into the result.
// The first part fixes the audit's size N × P × F, which must fit the
// feature store's limit (MaxFeatureBytes) before it is allocated; a part
// whose arrays do not match its declared shape is refused.
func (m *Merger) Add(t *Trials, name string) error {
	if err := t.checkShape(); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if m.out == nil {
		if err := m.start(t, name); err != nil {
			return err
		}
	}
	o := m.out
	if t.ConfigHash != o.ConfigHash {
		return fmt.Errorf("%s comes from another configuration (hash %.12s…, %s has %.12s…)", name, t.ConfigHash, m.first, o.ConfigHash)
	}
	if t.N != o.N || t.P != o.P || t.F != o.F || t.TestSize != o.TestSize {
		return fmt.Errorf("%s has a different shape than %s", name, m.first)
	}
	for k := range t.Ref {
		if math.Float64bits(t.Ref[k]) != math.Float64bits(o.Ref[k]) {
			return fmt.Errorf("%s has a different reference (trial 0) than %s", name, m.first)
		}
	}
	if t.Lo < o.Lo || t.Hi > o.Hi {
		return fmt.Errorf("%s holds trials [%d, %d), outside [%d, %d)", name, t.Lo, t.Hi, o.Lo, o.Hi)
	}
	for _, s := range m.seen {
		if t.Lo < s.hi && s.lo < t.Hi {
			return fmt.Errorf("%s duplicates trials [%d, %d) already in %s", name, max(t.Lo, s.lo), min(t.Hi, s.hi), s.name)
		}
	}
	m.seen = append(m.seen, span{t.Lo, t.Hi, name})
	at := t.Lo - o.Lo
	copy(o.Side[at:], t.Side)
	copy(o.X[at*o.P*o.F:], t.X)
	switch {
	case m.noHash:
	case len(t.Hash) == len(t.Side):
		copy(o.Hash[at:], t.Hash)
	default:
		m.noHash, o.Hash = true, nil
	}
	m.addProbes(t)
	o.Info.Add(t.Info)
	for k, c := range t.Correct {
		o.Correct[k] += c
	}
	return nil
}

// start allocates the result, shaped by the first part t (named name):
// the trials of [m.lo, m.hi), or all of the audit's when m.hi is 0.
func (m *Merger) start(t *Trials, name string) error {
	if m.hi == 0 {
		m.lo, m.hi = 0, t.N
	}
	n := m.hi - m.lo
	if _, err := storeSize(n, t.P, t.F); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	m.first = name
	m.out = &Trials{ConfigHash: t.ConfigHash, N: t.N, Lo: m.lo, Hi: m.hi, P: t.P, F: t.F, Ref: t.Ref, TestSize: t.TestSize,
		Side: make([]dataset.Side, n), X: make([]float32, n*t.P*t.F)}
	prefault(m.out.X) // filled block by block: mapped in one call
	if len(t.Hash) == len(t.Side) {
		m.out.Hash = make([]uint64, n)
	} else {
		m.noHash = true
	}
	m.startProbes(t, n)
	if t.TestSize > 0 {
		m.out.Correct = make([]int64, t.P)
	}
	return nil
}

// startProbes allocates the merged probe values of n trials when the
// first part t carries them.
func (m *Merger) startProbes(t *Trials, n int) {
	if k := t.probesKept(); k > 0 {
		m.out.Probes, m.out.Probe = k, make([]float64, n*k)
	} else {
		m.noProbe = true
	}
}

// addProbes copies the probe values of part t; a part without them, or
// with another number per trial, leaves the merged trials without any.
func (m *Merger) addProbes(t *Trials) {
	o := m.out
	switch {
	case m.noProbe:
	case t.probesKept() == o.Probes:
		copy(o.Probe[(t.Lo-o.Lo)*o.Probes:], t.Probe)
	default:
		m.noProbe, o.Probe, o.Probes = true, nil, 0
	}
}

// probesKept is the number of probe values per trial t carries (with its
// hashes), 0 when it carries none.
func (t *Trials) probesKept() int {
	m := t.Hi - t.Lo
	if t.Probes < 1 || len(t.Hash) != len(t.Side) || len(t.Probe) != m*t.Probes {
		return 0
	}
	return t.Probes
}

// checkShape checks that the arrays of t match its declared range and
// shape (a part read by ReadPart always does; Trials built by hand may not).
func (t *Trials) checkShape() error {
	if t.N < 1 || t.Lo < 0 || t.Hi < t.Lo || t.Hi > t.N || t.P < 1 || t.F < 1 {
		return fmt.Errorf("trials [%d, %d) of %d with %d points × %d features: not a valid range and shape", t.Lo, t.Hi, t.N, t.P, t.F)
	}
	m := t.Hi - t.Lo
	x, err := storeSize(m, t.P, t.F)
	if err != nil {
		return err
	}
	if len(t.Side) != m || len(t.Ref) != t.P*t.F || len(t.X) != x || (len(t.Correct) != 0 && len(t.Correct) != t.P) {
		return fmt.Errorf("trials [%d, %d) with %d points × %d features: arrays of the wrong length", t.Lo, t.Hi, t.P, t.F)
	}
	return nil
}

// storeSize returns n·p·f, the number of float32 features of n trials, or
// an error when it overflows or exceeds MaxFeatureBytes.
func storeSize(n, p, f int) (int, error) {
	pf, ok := mechanisms.MulCount(p, f)
	x, ok2 := mechanisms.MulCount(n, pf)
	if !ok || !ok2 || x > MaxFeatureBytes/4 {
		return 0, fmt.Errorf("%d trials × %d release points × %d features exceed the feature store's limit of %d GB", n, p, f, MaxFeatureBytes>>30)
	}
	return x, nil
}

// Trials returns the merged trials, or the first range no part covers.
func (m *Merger) Trials() (*Trials, error) {
	if m.out == nil {
		return nil, errors.New("no trials files")
	}
	if err := missing(m.seen, m.out.Lo, m.out.Hi); err != nil {
		return nil, err
	}
	return m.out, nil
}

// missing returns an error naming the first trial range of [lo, n) no
// span covers (the spans do not overlap).
func missing(seen []span, lo, n int) error {
	seen = append([]span(nil), seen...)
	sort.Slice(seen, func(i, j int) bool { return seen[i].lo < seen[j].lo })
	next := lo
	for _, s := range seen {
		if s.lo > next {
			return fmt.Errorf("trials [%d, %d) are missing (no part covers them)", next, s.lo)
		}
		next = max(next, s.hi)
	}
	if next != n {
		return fmt.Errorf("trials [%d, %d) are missing (no part covers them)", next, n)
	}
	return nil
}

// CheckPartInfos checks, from the parts' headers alone, what Merger checks
// on their contents: one configuration, one shape, every trial index
// covered exactly once, and a merged size within the feature store's
// limit — so that a merge allocates the result only for parts that fill
// it (names[i] names infos[i] in errors).
func CheckPartInfos(infos []PartInfo, names []string) error {
	if len(infos) == 0 {
		return errors.New("no trials files")
	}
	first := infos[0]
	var seen []span
	for i, p := range infos {
		if p.ConfigHash != first.ConfigHash {
			return fmt.Errorf("%s comes from another configuration (hash %.12s…, %s has %.12s…)", names[i], p.ConfigHash, names[0], first.ConfigHash)
		}
		if p.N != first.N || p.P != first.P || p.F != first.F || p.TestSize != first.TestSize {
			return fmt.Errorf("%s has a different shape than %s", names[i], names[0])
		}
		for _, s := range seen {
			if p.Lo < s.hi && s.lo < p.Hi {
				return fmt.Errorf("%s duplicates trials [%d, %d) already in %s", names[i], max(p.Lo, s.lo), min(p.Hi, s.hi), s.name)
			}
		}
		seen = append(seen, span{p.Lo, p.Hi, names[i]})
	}
	if err := missing(seen, 0, first.N); err != nil {
		return err
	}
	_, err := storeSize(first.N, first.P, first.F)
	return err
}

// MergeTrials joins parts of one audit: same configuration, every trial
// index present exactly once. Parts may come in any order.
func MergeTrials(parts []*Trials, names []string) (*Trials, error) {
	var m Merger
	for i, t := range parts {
		if err := m.Add(t, names[i]); err != nil {
			return nil, err
		}
	}
	return m.Trials()
}

// ShardRange returns the trial range of shard i of n (0-based), balanced
// to within one trial.
func ShardRange(trials, i, n int) (lo, hi int) {
	return int(int64(i) * int64(trials) / int64(n)), int(int64(i+1) * int64(trials) / int64(n))
}
