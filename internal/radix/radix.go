package radix

import (
	"math"
	"slices"
)

// digitBits is the width of one digit: 2¹¹ counters of 4 bytes (8 KiB a
// histogram) stay in the first-level cache, where 16-bit digits (256 KiB
// of counters) spill out of it and cost a third more on 2.5·10⁵ keys.
const (
	digitBits = 11
	digits    = (64 + digitBits - 1) / digitBits // 6
	buckets   = 1 << digitBits
)

// Sort sorts keys in increasing order in place and returns the scratch
// memory it used (tmp when it held len(keys) keys, else a new slice), for
// the next call. One pass counts every digit; each digit that not all
// keys share then costs one stable scatter pass. Keys made from float32
// values widened to float64 share their low 29 bits, so they take four
// passes, not six. Below 512 keys it is slices.Sort.
func Sort(keys, tmp []uint64) []uint64 {
	n := len(keys)
	if n < 512 {
		slices.Sort(keys)
		return tmp
	}
	var hist [digits][buckets]int32
	for _, k := range keys {
		hist[0][k&(buckets-1)]++
		hist[1][(k>>digitBits)&(buckets-1)]++
		hist[2][(k>>(2*digitBits))&(buckets-1)]++
		hist[3][(k>>(3*digitBits))&(buckets-1)]++
		hist[4][(k>>(4*digitBits))&(buckets-1)]++
		hist[5][k>>(5*digitBits)]++
	}
	if cap(tmp) < n {
		tmp = make([]uint64, n)
	}
	src, dst := keys, tmp[:n]
	for d := range digits {
		shift := uint(d * digitBits)
		h := &hist[d]
		if int(h[(keys[0]>>shift)&(buckets-1)]) == n {
			continue // every key has this digit
		}
		var sum int32
		for i := range h {
			h[i], sum = sum, sum+h[i]
		}
		for _, k := range src {
			x := (k >> shift) & (buckets - 1)
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

// FloatKey maps a float64 other than NaN to a key whose unsigned order is
// the float's order; −0 and +0 map to one key (they compare equal). It has
// no branch: scores of either sign in random order would defeat branch
// prediction.
func FloatKey(s float64) uint64 {
	b := math.Float64bits(s + 0)  // −0 + 0 = +0
	neg := uint64(int64(b) >> 63) // all ones when the sign bit is set
	return b ^ (neg | 1<<63)
}

// Bit is 1 when b is set, else 0, without a branch.
func Bit(b bool) int {
	x := 0
	if b {
		x = 1
	}
	return x
}
