package mechanisms

import (
	"math"
	"math/big"
)

// expTab[i] is 2^(i/64) rounded to nearest, computed once in 200-bit
// arithmetic (2^(1/64) as six square roots of 2, then its powers).
var expTab = func() (t [64]float64) {
	const prec = 200
	r := new(big.Float).SetPrec(prec).SetInt64(2)
	for range 6 {
		r.Sqrt(r)
	}
	p := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := range t {
		t[i], _ = p.Float64()
		p.Mul(p, r)
	}
	return t
}()

// Constants of fastExp's reduction x = k·ln2/64 + r: ln 2/64 split into
// a head with 32 significant bits (so that k·head is exact for
// |k| < 2²¹) and the rounded rest.
const (
	expInvLn2x64 = 64 / math.Ln2
	expLn2x64Hi  = 0x1.62e42fefp-7
	expLn2x64Lo  = math.Ln2/64 - expLn2x64Hi
	expShift     = 0x1.8p52 // adding and subtracting it rounds to an integer
)

// fastExp returns e^x for the softmax gradient, about twice as fast as
// math.Exp. With k = round(64x/ln 2) and r = x − k·ln2/64 (|r| ≤ ln2/128,
// reduced in two steps), e^x = 2^⌊k/64⌋ · 2^((k mod 64)/64) · e^r, the
// middle factor from a table and e^r − 1 from its Taylor polynomial of
// degree 5 (remainder below |r|⁶/720 < 4e-17), added as one fused
// multiply–add t + t·q. On [−708, 709] its result is within 2 ulp of
// math.Exp (TestFastExpError checks every input of a dense grid and 10⁶
// random ones); outside that range, and for NaN, it is math.Exp.
func fastExp(x float64) float64 {
	if !(x >= -708 && x <= 709) {
		return math.Exp(x)
	}
	// The conversions round each product before its sum, so that no
	// build (GOAMD64=v3 fuses x*y + z) changes the bits.
	kf := (float64(x*expInvLn2x64) + expShift) - expShift
	k := int64(kf)
	r := (x - float64(kf*expLn2x64Hi)) - float64(kf*expLn2x64Lo)
	q := r * (1 + float64(r*(1.0/2+float64(r*(1.0/6+float64(r*(1.0/24+float64(r*(1.0/120)))))))))
	t := math.Float64frombits(math.Float64bits(expTab[k&63]) + uint64(k>>6)<<52)
	return math.FMA(t, q, t)
}
