package mechanisms

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// fastNormal draws standard normal variates for the hot loops of the
// samplers: a xoshiro256+ generator (Blackman & Vigna 2018) kept in a
// concrete type so that it inlines, feeding the ziggurat method of
// Marsaglia & Tsang (2000, J. Stat. Softw. 5(8)) with 128 layers. It is
// seeded from the trial's *rand.Rand, so runs stay reproducible from
// (seed, side, trial) alone. Its values have the 32-bit resolution of the
// classical ziggurat, like math/rand's NormFloat64.
type fastNormal struct{ s0, s1, s2, s3 uint64 }

// newFastNormal seeds the generator from rng (four draws). It returns a
// value, which a run keeps on its stack.
func newFastNormal(rng *rand.Rand) fastNormal {
	f := fastNormal{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
	if f.s0|f.s1|f.s2|f.s3 == 0 {
		f.s0 = 1 // the all-zero state is the one xoshiro cannot leave
	}
	return f
}

// next returns 64 random bits (xoshiro256+; its low bits are the weakest,
// and the ziggurat below uses the high 32 bits for the value).
func (f *fastNormal) next() uint64 {
	r := f.s0 + f.s3
	t := f.s1 << 17
	f.s2 ^= f.s0
	f.s3 ^= f.s1
	f.s1 ^= f.s2
	f.s0 ^= f.s3
	f.s2 ^= t
	f.s3 = bits.RotateLeft64(f.s3, 45)
	return r
}

// uniform returns a float64 in (0, 1) from the top 53 bits.
func (f *fastNormal) uniform() float64 {
	return (float64(f.next()>>11) + 0.5) * (1.0 / (1 << 53))
}

// Ziggurat tables, built at start-up from the recursion of Marsaglia &
// Tsang §3 for the normal density with n = 128 layers: the rightmost layer
// starts at zigR and every layer (and the base strip with its tail) has
// area zigV under f(x) = exp(−x²/2).
const (
	zigR = 3.442619855899
	zigV = 9.91256303526217e-3
)

var zigK [128]uint32  // acceptance thresholds on |j|
var zigW [128]float64 // scale from the 32-bit integer to x
var zigF [128]float64 // f at the layer boundaries

// zigSqueeze holds two parallel lines in s = x² that enclose math.Exp(−s/2)
// over the values s takes in one wedge: lo + m·s below it, hi + m·s above.
type zigSqueeze struct{ m, lo, hi float64 }

// zigSq[i] is the squeeze of wedge i (1 ≤ i ≤ 127), built by
// buildZigSqueezes. It replaces the exponential of the wedge test only
// where its lines decide the comparison for certain.
//
// Why the decision is unchanged. Draws reach wedge i with |j| in
// [zigK[i], 2³¹], so x = fl(j·zigW[i]) and s = fl(x·x) lie in
// [sA, sB] = [fl(fl(zigK[i]·zigW[i])²), fl(fl(2³¹·zigW[i])²)] (rounding is
// monotone). The argument of math.Exp is fl(fl(−0.5·x)·x) = −s/2 exactly
// (halving is exact and commutes with rounding away from underflow), so
// the value compared is E = math.Exp(−s/2), within 1 ulp of g(s) =
// exp(−s/2) for the portable code and, as TestZigMathExpAccuracy checks
// against a 200-bit reference, a few ulps for the assembly one: |E − g(s)|
// < 2⁻⁵⁰ since g ≤ 1. g is convex in s, so on [sA, sB] it lies below
// its chord c + m·s and above the parallel tangent c − d + m·s, where d =
// the chord's largest height above g (at g'(s*) = m). The stored lines are
// widened by δ = 2⁻³²: lo = c − d − δ, hi = c + δ. Every quantity is at
// most 1 in magnitude (|m| ≤ g(sA)/2, and over the 127 wedges |m|·sB ≤
// 0.372 and c = g(sA) − m·sA ≤ 1, as TestZigSqueezeEncloses checks), so
// the rounding in building c, m, d from computed exponentials (an error
// in the tangent point s* moves d only to second order) and in evaluating
// fl(lo + fl(m·s)), fl(hi + fl(m·s)) (or their fused forms) adds less
// than 2⁻⁴⁵ all told (errors of ε in the chord's end values move the
// chord by at most ε inside [sA, sB]), and with the error of E that is
// far below δ. Hence fl(lo + m·s) < E < fl(hi + m·s) for every s of the
// wedge: y < fl(lo + m·s) implies y < E, y ≥ fl(hi + m·s) implies y ≥ E,
// whatever the rounding of y itself, and in between the comparison is made
// with E itself. TestZigSqueezeEncloses checks the enclosure, with room of
// δ/2 each side, at both ends of every wedge and on dense grids inside it.
var zigSq [128]zigSqueeze

// zigSqueezeMargin is δ above: the widening of the squeeze's lines.
const zigSqueezeMargin = 0x1p-32

func init() {
	const m1 = 1 << 31
	dn, tn := zigR, zigR
	q := zigV / math.Exp(-0.5*dn*dn)
	zigK[0] = uint32((dn / q) * m1)
	zigK[1] = 0
	zigW[0] = q / m1
	zigW[127] = dn / m1
	zigF[0] = 1
	zigF[127] = math.Exp(-0.5 * dn * dn)
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(zigV/dn+math.Exp(-0.5*dn*dn)))
		zigK[i+1] = uint32((dn / tn) * m1)
		tn = dn
		zigF[i] = math.Exp(-0.5 * dn * dn)
		zigW[i] = dn / m1
	}
	buildZigSqueezes()
}

// buildZigSqueezes fills zigSq from the tables (see zigSq).
func buildZigSqueezes() {
	for i := 1; i < 128; i++ {
		xa := float64(zigK[i]) * zigW[i]
		xb := float64(1<<31) * zigW[i]
		sa, sb := xa*xa, xb*xb
		ga, gb := math.Exp(-0.5*sa), math.Exp(-0.5*sb)
		m := (gb - ga) / (sb - sa)
		c := ga - m*sa
		// The tangent parallel to the chord touches g where g'(s) = −g(s)/2 = m.
		st := min(max(-2*math.Log(-2*m), sa), sb)
		d := c + m*st - math.Exp(-0.5*st)
		zigSq[i] = zigSqueeze{m: m, lo: c - d - zigSqueezeMargin, hi: c + zigSqueezeMargin}
	}
}

// norm returns a standard normal variate. The common case (a point
// inside a rectangle, ≈ 98.8% of draws) is small enough to inline.
func (f *fastNormal) norm() float64 {
	u := f.next()
	j := int32(u >> 32)
	i := u & 127
	if uint32(j+j>>31^j>>31) < zigK[i] { // |j| without a branch
		return float64(j) * zigW[i]
	}
	return f.normSlow(j, i)
}

// fill writes independent standard normal variates into z: the values
// len(z) calls of norm would return, with its common case inlined in the
// loop. The loop keeps the generator's state in a local copy, which the
// compiler holds in registers (through f it would store and reload the
// four words on every draw), and hands it back to f around the slow path.
func (f *fastNormal) fill(z []float64) {
	s0, s1, s2, s3 := f.s0, f.s1, f.s2, f.s3
	for k := range z {
		// xoshiro256+, as next.
		u := s0 + s3
		t := s1 << 17
		s2 ^= s0
		s3 ^= s1
		s1 ^= s2
		s0 ^= s3
		s2 ^= t
		s3 = bits.RotateLeft64(s3, 45)
		j, i := int32(u>>32), u&127
		if uint32(j+j>>31^j>>31) < zigK[i] {
			z[k] = float64(j) * zigW[i]
		} else {
			f.s0, f.s1, f.s2, f.s3 = s0, s1, s2, s3
			z[k] = f.normSlow(j, i)
			s0, s1, s2, s3 = f.s0, f.s1, f.s2, f.s3
		}
	}
	f.s0, f.s1, f.s2, f.s3 = s0, s1, s2, s3
}

// zigWedge decides the wedge test y < math.Exp(-0.5*x*x) for a point
// (x, y) of wedge i (1 ≤ i ≤ 127) where the squeeze of zigSq can: sure
// reports whether it could, and below is then that comparison's result,
// bit for bit (see zigSq for why). It leaves ≈ 0.7% of wedge draws
// undecided, and is small enough to inline.
func zigWedge(i uint64, x, y float64) (below, sure bool) {
	q := &zigSq[i]
	t := q.m * (x * x)
	below = y < q.lo+t
	return below, below || y >= q.hi+t
}

// normSlow handles draws outside the rectangles: the tail and the wedges.
// (j, i) must be such a draw, |j| ≥ zigK[i], as zigSq assumes.
func (f *fastNormal) normSlow(j int32, i uint64) float64 {
	for {
		x := float64(j) * zigW[i]
		if i == 0 {
			// The tail beyond zigR (Marsaglia 1964).
			for {
				xt := -math.Log(f.uniform()) / zigR
				y := -math.Log(f.uniform())
				if y+y >= xt*xt {
					if j > 0 {
						return zigR + xt
					}
					return -zigR - xt
				}
			}
		}
		// The wedge: accept with the density's shape.
		y := zigF[i] + f.uniform()*(zigF[i-1]-zigF[i])
		if below, sure := zigWedge(i, x, y); below || !sure && y < math.Exp(-0.5*x*x) {
			return x
		}
		u := f.next()
		j, i = int32(u>>32), u&127
		aj := uint32(j)
		if j < 0 {
			aj = uint32(-j)
		}
		if aj < zigK[i] {
			return float64(j) * zigW[i]
		}
	}
}
