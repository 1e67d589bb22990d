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

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The trials file ("part") format, shared by shards and checkpoints:
//
//	magic line "mcmcaudit-trials v2\n"
//	uint32 length + JSON header (config hash, the config itself, N, range, P, F, sampler info)
//	P·F float64: the reference features (trial 0's)
//	Hi−Lo bytes: the side of each trial
//	(Hi−Lo)·P·F float32: the features' deviations from the reference
//	32 bytes: SHA-256 of everything above (a truncated or corrupted file is refused)
//
// All numbers are little-endian.
const partMagic = "mcmcaudit-trials v2\n"

type partHeader struct {
	ConfigHash string          `json:"config_hash"`
	Config     *Config         `json:"config"`
	N          int             `json:"n"`
	Lo         int             `json:"lo"`
	Hi         int             `json:"hi"`
	P          int             `json:"points"`
	F          int             `json:"features"`
	Info       mechanisms.Info `json:"info"`
	Correct    []int64         `json:"correct,omitempty"`
	TestSize   int             `json:"test_size,omitempty"`
}

// WritePart writes trials of plan p in the part format.
func WritePart(w io.Writer, p *Plan, t *Trials) error {
	h := sha256.New()
	bw := bufio.NewWriter(io.MultiWriter(w, h))
	hdr, err := json.Marshal(partHeader{ConfigHash: p.Hash, Config: p.Config, N: t.N, Lo: t.Lo, Hi: t.Hi, P: t.P, F: t.F, Info: t.Info, Correct: t.Correct, TestSize: t.TestSize})
	if err != nil {
		return err
	}
	bw.WriteString(partMagic)
	binary.Write(bw, binary.LittleEndian, uint32(len(hdr)))
	bw.Write(hdr)
	var buf [8]byte
	for _, x := range t.Ref {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
		bw.Write(buf[:])
	}
	for _, s := range t.Side {
		bw.WriteByte(byte(s))
	}
	for _, x := range t.X {
		binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(x))
		bw.Write(buf[:4])
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

// ReadPart reads a part file and returns its trials and the config that
// produced them. The config's hash is recomputed and must match.
func ReadPart(r io.Reader) (*Trials, *Config, error) {
	br := bufio.NewReader(r)
	hr := hashingReader{br, sha256.New()}
	magic := make([]byte, len(partMagic))
	if _, err := io.ReadFull(hr, magic); err != nil || string(magic) != partMagic {
		return nil, nil, errors.New("not a trials file (bad magic)")
	}
	var n uint32
	if err := binary.Read(hr, binary.LittleEndian, &n); err != nil || n > 64<<20 {
		return nil, nil, errors.New("corrupt trials file (header length)")
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(hr, hb); err != nil {
		return nil, nil, errors.New("truncated trials file (header)")
	}
	var hdr partHeader
	if err := json.Unmarshal(hb, &hdr); err != nil || hdr.Config == nil {
		return nil, nil, errors.New("corrupt trials file (header)")
	}
	if hdr.Lo < 0 || hdr.Hi < hdr.Lo || hdr.Hi > hdr.N || hdr.P < 1 || hdr.F < 1 || hdr.N > MaxTrials ||
		int64(hdr.Hi-hdr.Lo)*int64(hdr.P)*int64(hdr.F) > 1<<34 {
		return nil, nil, errors.New("corrupt trials file (range)")
	}
	if hdr.Config.Hash() != hdr.ConfigHash {
		return nil, nil, errors.New("corrupt trials file (config does not match its hash)")
	}
	m := hdr.Hi - hdr.Lo
	if len(hdr.Correct) != 0 && len(hdr.Correct) != hdr.P {
		return nil, nil, errors.New("corrupt trials file (metrics)")
	}
	t := &Trials{ConfigHash: hdr.ConfigHash, N: hdr.N, Lo: hdr.Lo, Hi: hdr.Hi, P: hdr.P, F: hdr.F, Info: hdr.Info,
		Correct: hdr.Correct, TestSize: hdr.TestSize,
		Side: make([]dataset.Side, m), Ref: make([]float64, hdr.P*hdr.F), X: make([]float32, m*hdr.P*hdr.F)}
	var buf [8]byte
	for i := range t.Ref {
		if _, err := io.ReadFull(hr, buf[:]); err != nil {
			return nil, nil, errors.New("truncated trials file (reference)")
		}
		t.Ref[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
	}
	sides := make([]byte, m)
	if _, err := io.ReadFull(hr, sides); err != nil {
		return nil, nil, errors.New("truncated trials file (sides)")
	}
	for i, s := range sides {
		if s > 1 {
			return nil, nil, errors.New("corrupt trials file (side)")
		}
		t.Side[i] = dataset.Side(s)
	}
	for i := range t.X {
		if _, err := io.ReadFull(hr, buf[:4]); err != nil {
			return nil, nil, errors.New("truncated trials file (features)")
		}
		t.X[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[:4]))
	}
	sum := hr.h.Sum(nil)
	var got [32]byte
	if _, err := io.ReadFull(br, got[:]); err != nil || string(got[:]) != string(sum) {
		return nil, nil, errors.New("corrupt or truncated trials file (checksum)")
	}
	return t, hdr.Config, nil
}

// ReadPartFile reads a part file from disk.
func ReadPartFile(path string) (*Trials, *Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read %s: %s", path, unwrapPathError(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("cannot read %s: not a regular file", path)
	}
	t, c, err := ReadPart(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, c, nil
}

// MergeTrials joins parts of one audit: same configuration, every trial
// index present exactly once. Parts may come in any order.
func MergeTrials(parts []*Trials, names []string) (*Trials, error) {
	if len(parts) == 0 {
		return nil, errors.New("no trials files")
	}
	idx := make([]int, len(parts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return parts[idx[a]].Lo < parts[idx[b]].Lo })
	first := parts[0]
	out := &Trials{ConfigHash: first.ConfigHash, N: first.N, Lo: 0, Hi: first.N, P: first.P, F: first.F, Ref: first.Ref, TestSize: first.TestSize}
	if first.TestSize > 0 {
		out.Correct = make([]int64, first.P)
	}
	next := 0
	for _, i := range idx {
		t := parts[i]
		if t.ConfigHash != first.ConfigHash {
			return nil, fmt.Errorf("%s comes from another configuration (hash %.12s…, %s has %.12s…)", names[i], t.ConfigHash, names[0], first.ConfigHash)
		}
		if t.N != first.N || t.P != first.P || t.F != first.F {
			return nil, fmt.Errorf("%s has a different shape", names[i])
		}
		for k := range t.Ref {
			if math.Float64bits(t.Ref[k]) != math.Float64bits(first.Ref[k]) {
				return nil, fmt.Errorf("%s has a different reference (trial 0) than %s", names[i], names[0])
			}
		}
		if t.Lo < next {
			return nil, fmt.Errorf("%s duplicates trials [%d, %d) already present", names[i], t.Lo, min(next, t.Hi))
		}
		if t.Lo > next {
			return nil, fmt.Errorf("trials [%d, %d) are missing (no part covers them)", next, t.Lo)
		}
		out.Side = append(out.Side, t.Side...)
		out.X = append(out.X, t.X...)
		out.Info.Add(t.Info)
		for k, c := range t.Correct {
			out.Correct[k] += c
		}
		next = t.Hi
	}
	if next != first.N {
		return nil, fmt.Errorf("trials [%d, %d) are missing (no part covers them)", next, first.N)
	}
	return out, nil
}

// ShardRange returns the trial range of shard i of n (0-based), balanced
// to within one trial.
func ShardRange(trials, i, n int) (lo, hi int) {
	return i * trials / n, (i + 1) * trials / n
}
