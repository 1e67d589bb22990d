package radix

import (
	"math"
	"math/bits"
	"slices"
)

// digitBits is the width of one digit: 2¹¹ counters of 4 bytes (8 KiB a
// histogram) stay in the first-level cache, where 16-bit digits (256 KiB
// of counters) spill out of it and cost a third more on 2.5·10⁵ keys.
const (
	digitBits = 11
	buckets   = 1 << digitBits
)

// Sort sorts keys in increasing order in place and returns the scratch
// memory it used (tmp when it held len(keys) keys, else a new slice), for
// the next call. Below 512 keys it is slices.Sort.
//
// Only the bits that vary among the keys are sorted on: with lo and top the
// lowest and one past the highest bit in which two keys differ, a span
// top − lo of at most 33 bits is sorted exactly in three stable passes of
// 11 bits (keys made from float32 values widened to float64 share their
// low 29 bits). A wider span (a float64 score of full precision) is sorted
// in three passes on its top 33 bits, which leaves keys ordered up to ties
// in those bits, and a last pass sorts each run of tied keys by the whole
// key: runs are short unless the scores crowd into a sliver of their
// range, and even then the cost is that of a comparison sort of the run.
// Three passes and a check in place of six passes: about half the memory
// traffic of a full 64-bit radix sort.
func Sort(keys, tmp []uint64) []uint64 {
	n := len(keys)
	if n < 512 {
		slices.Sort(keys)
		return tmp
	}
	and, or := ^uint64(0), uint64(0)
	for _, k := range keys {
		and &= k
		or |= k
	}
	diff := and ^ or
	if diff == 0 {
		return tmp // all keys equal
	}
	lo, top := bits.TrailingZeros64(diff), 64-bits.LeadingZeros64(diff)
	shift := max(lo, top-3*digitBits)
	if cap(tmp) < n {
		tmp = make([]uint64, n)
	}
	lsd(keys, tmp[:n], uint(shift))
	if shift > lo {
		sortTies(keys, uint(shift))
	}
	return tmp
}

// lsd sorts keys stably by bits [shift, shift + 33) in three passes of
// digitBits bits (a digit all keys share is skipped); tmp holds len(keys).
// Sort32 repeats its loops with constant shifts: written once as a
// generic function they cost Sort32 11% (a shift by a variable amount is
// checked against the key's width at every key).
func lsd(keys, tmp []uint64, shift uint) {
	n := len(keys)
	var hist [3][buckets]int32
	for _, k := range keys {
		k >>= shift
		hist[0][k&(buckets-1)]++
		hist[1][(k>>digitBits)&(buckets-1)]++
		hist[2][(k>>(2*digitBits))&(buckets-1)]++
	}
	src, dst := keys, tmp
	for d := range 3 {
		s := shift + uint(d*digitBits)
		h := &hist[d]
		if int(h[(keys[0]>>s)&(buckets-1)]) == n {
			continue // every key has this digit
		}
		var sum int32
		for i := range h {
			h[i], sum = sum, sum+h[i]
		}
		for _, k := range src {
			x := (k >> s) & (buckets - 1)
			dst[h[x]] = k
			h[x]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// sortTies sorts by the whole key each run of keys that agree in their
// bits from shift up (keys is sorted on those bits).
func sortTies(keys []uint64, shift uint) {
	n := len(keys)
	for i := 0; i < n; {
		j, hi := i+1, keys[i]>>shift
		for j < n && keys[j]>>shift == hi {
			j++
		}
		if j-i > 1 {
			if j-i <= 16 {
				insertion(keys[i:j])
			} else {
				slices.Sort(keys[i:j])
			}
		}
		i = j
	}
}

// insertion sorts a short run in place.
func insertion(a []uint64) {
	for i := 1; i < len(a); i++ {
		v, j := a[i], i
		for j > 0 && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}

// Sort32 sorts 32-bit keys in increasing order in place, in three stable
// passes of 11 bits (a digit all keys share is skipped), and returns the
// scratch memory it used as Sort does. Half the bytes of Sort's keys: a
// float32 value's key (Float32Key) sorts here in full.
func Sort32(keys, tmp []uint32) []uint32 {
	n := len(keys)
	if n < 512 {
		slices.Sort(keys)
		return tmp
	}
	var hist [3][buckets]int32
	for _, k := range keys {
		hist[0][k&(buckets-1)]++
		hist[1][(k>>digitBits)&(buckets-1)]++
		hist[2][k>>(2*digitBits)]++
	}
	if cap(tmp) < n {
		tmp = make([]uint32, n)
	}
	src, dst := keys, tmp[:n]
	for d := range 3 {
		s := uint(d * digitBits)
		h := &hist[d]
		if int(h[(keys[0]>>s)&(buckets-1)]) == n {
			continue
		}
		var sum int32
		for i := range h {
			h[i], sum = sum, sum+h[i]
		}
		for _, k := range src {
			x := (k >> s) & (buckets - 1)
			dst[h[x]] = k
			h[x]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
	return tmp
}

// Float32Key is FloatKey for a float32 (not NaN): −0 and +0 share a key.
func Float32Key(x float32) uint32 {
	b := math.Float32bits(x + 0)
	neg := uint32(int32(b) >> 31)
	return b ^ (neg | 1<<31)
}

// Key32Float inverts Float32Key (the key of −0 gives +0).
func Key32Float(k uint32) float32 {
	pos := uint32(int32(k) >> 31)
	return math.Float32frombits(k ^ (^pos | 1<<31))
}

// FloatKey maps a float64 other than NaN to a key whose unsigned order is
// the float's order; −0 and +0 map to one key (they compare equal). It has
// no branch: scores of either sign in random order would defeat branch
// prediction.
func FloatKey(s float64) uint64 {
	b := math.Float64bits(s + 0)  // −0 + 0 = +0
	neg := uint64(int64(b) >> 63) // all ones when the sign bit is set
	return b ^ (neg | 1<<63)
}

// KeyFloat inverts FloatKey (the key of −0 gives +0).
func KeyFloat(k uint64) float64 {
	pos := uint64(int64(k) >> 63) // all ones for a key of a float ≥ +0
	return math.Float64frombits(k ^ (^pos | 1<<63))
}

// Slot is where the next key of a side goes, without a branch, in a
// buffer that holds the positives' keys from 0 and the negatives' from pos:
// ip for a positive (b = 1), pos + in for a negative (b = 0), with ip
// positives and in negatives placed so far.
func Slot(pos, ip, in, b int) int { return pos + in + ((ip - pos - in) & -b) }

// Bit is 1 when b is set, else 0, without a branch.
func Bit(b bool) int {
	x := 0
	if b {
		x = 1
	}
	return x
}

// MedianKey returns the key at rank ⌊(len(a)+len(b))/2⌋ (from 0) of the
// sorted a and b together (not both empty), found by bisecting on how
// many come from a: where to split a merge of the two into halves.
func MedianKey(a, b []uint64) uint64 {
	t := (len(a) + len(b)) / 2
	lo, hi := max(0, t-len(b)), min(len(a), t)
	// The smallest i (keys taken from a) with a[i] ≥ b[t−i−1]: a[:i] and
	// b[:t−i] are then the t smallest keys.
	for lo < hi {
		i := int(uint(lo+hi) >> 1)
		if a[i] < b[t-i-1] {
			lo = i + 1
		} else {
			hi = i
		}
	}
	i, j := lo, t-lo
	switch {
	case i == len(a):
		return b[j]
	case j == len(b):
		return a[i]
	}
	return min(a[i], b[j])
}
