package mechanisms

import (
	"math"
	"math/bits"
)

// MulCount returns a·b for counts a, b ≥ 0 and whether the product fits in
// an int; configuration integers (epochs, batches, strides, trials) are
// multiplied through it so that a huge value is refused instead of
// wrapping around to a small or negative one. A negative operand is
// reported as not fitting.
func MulCount(a, b int) (int, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return 0, false
	}
	return int(lo), true
}

// addCount returns a + b for counts a, b ≥ 0 and whether the sum fits in an
// int.
func addCount(a, b int) (int, bool) {
	if a < 0 || b < 0 || a > math.MaxInt-b {
		return 0, false
	}
	return a + b, true
}

// satMul is MulCount saturating at math.MaxInt: callers compare the result
// with a limit far below it, so a saturated value is always refused.
func satMul(a, b int) int {
	if p, ok := MulCount(a, b); ok {
		return p
	}
	return math.MaxInt
}

// satAdd adds two counters, saturating at the int range instead of
// wrapping (totals of run counters over many trials).
func satAdd(a, b int) int {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt
	}
	return s
}

// scaleCount returns a·m for m ≥ 1 and a counter a of either sign,
// saturating at the int range instead of wrapping (satAdd's rule).
func scaleCount(a, m int) int {
	if a == 0 {
		return 0
	}
	neg := a < 0
	ua := uint64(a)
	if neg {
		ua = -ua // |a|, also for math.MinInt
	}
	hi, lo := bits.Mul64(ua, uint64(m))
	switch {
	case neg && (hi != 0 || lo > 1<<63):
		return math.MinInt
	case neg:
		return int(-lo)
	case hi != 0 || lo > math.MaxInt:
		return math.MaxInt
	}
	return int(lo)
}

// MaxModelDim bounds the dimension of the linear models (linreg, logistic),
// as the softmax and MLP models bound their features: 2^20 coordinates.
const MaxModelDim = 1 << 20
