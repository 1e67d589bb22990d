package mechanisms

import (
	"math"
	"unsafe"
)

// The two products of a softmax minibatch gradient (logits F = X·Wᵀ and
// the sum of outer products Gᵀ·X) run on these kernels. Each result is
// defined by one order of fused multiply–adds, which the AVX-512 and AVX2
// kernels (kernel_amd64.s, chosen at run time by the processor's
// features) and the portable Go code below all follow, so that a run
// gives the same bits whichever computes it: math.FMA is correctly
// rounded on every platform, in hardware or in software.

// dotLanes returns Σ_j w_j·x_j (j < len(x)) summed in eight lanes: lane
// l accumulates s_l = fma(w_j, x_j, s_l) over j ≡ l (mod 8) for j below
// the last multiple of eight, from s_l = 0; then
//
//	t = ((s₀+s₄) + (s₂+s₆)) + ((s₁+s₅) + (s₃+s₇)),
//
// and the remaining j are added one by one, t = fma(w_j, x_j, t). Its
// error is that of a pairwise-then-recursive sum, at most
// (⌈n/8⌉ + 3)·u·Σ|w_j·x_j| to first order (u = 2⁻⁵³; Higham 2002,
// Accuracy and Stability of Numerical Algorithms, §3.1).
func dotLanes(x, w []float64) float64 {
	n8 := len(x) / 8
	w = w[:len(x)]
	var t float64
	if useAVX2 && n8 > 0 {
		t = dot1AVX(&x[0], &w[0], n8)
	} else {
		t = dotLanesGo(x[:8*n8], w[:8*n8])
	}
	for j := 8 * n8; j < len(x); j++ {
		t = math.FMA(w[j], x[j], t)
	}
	return t
}

// dotLanesGo is dotLanes without the tail, on len(x) a multiple of 8.
func dotLanesGo(x, w []float64) float64 {
	var s [8]float64
	for i := 0; i+8 <= len(x); i += 8 {
		xs, ws := x[i:i+8], w[i:i+8]
		for l := range s {
			s[l] = math.FMA(ws[l], xs[l], s[l])
		}
	}
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

// dotRows writes out[c] = dotLanes(x, w[c·ldw : c·ldw+len(x)]) for the
// len(out) rows of the row-major matrix w: the logits of one record
// before their biases.
func dotRows(x, w []float64, ldw int, out []float64) {
	n := len(x)
	n8 := n / 8
	rows := len(out)
	if n8 == 0 || !useAVX2 {
		for c := range out {
			out[c] = dotLanes(x, w[c*ldw:c*ldw+n])
		}
		return
	}
	_ = w[(rows-1)*ldw+n-1] // bounds, once: the kernels read rows × 8·n8 entries
	c := 0
	for ; c+4 <= rows; c += 4 {
		dot4AVX(&x[0], &w[c*ldw], ldw, n8, (*[4]float64)(out[c:c+4]))
	}
	if c+2 <= rows {
		dot2AVX(&x[0], &w[c*ldw], ldw, n8, (*[2]float64)(out[c:c+2]))
		c += 2
	}
	if c < rows {
		out[c] = dot1AVX(&x[0], &w[c*ldw], n8)
	}
	if n8*8 < n {
		for c := range out {
			row := w[c*ldw : c*ldw+n]
			t := out[c]
			for j := 8 * n8; j < n; j++ {
				t = math.FMA(row[j], x[j], t)
			}
			out[c] = t
		}
	}
}

// sumOuter adds Σ_r g[r·ldg + c]·xs[r][j] to s[c·lds + j] for c < k and
// j < d, summing each entry over r in order by fused multiply–adds,
// s = fma(g_rc, x_rj, s): the sum of the records' outer products g_r ⊗ x_r
// (each xs[r] points at a record's d features). Every entry is its own
// sum, so the blocking of the kernel does not change a bit.
func sumOuter(s []float64, lds int, g []float64, ldg, k, d int, xs []*float64) {
	nr := len(xs)
	if nr == 0 {
		return
	}
	_ = s[(k-1)*lds+d-1]
	_ = g[(nr-1)*ldg+k-1]
	// The kernels sum the first j0 columns of the classes below c.
	c, j0 := 0, 0
	switch {
	case useAVX512 && d >= 32:
		n32 := d / 32
		for ; c+4 <= k; c += 4 {
			outer4x32AVX512(&xs[0], nr, &g[c], ldg, &s[c*lds], lds, n32)
		}
		if c+2 <= k {
			outer2x32AVX512(&xs[0], nr, &g[c], ldg, &s[c*lds], lds, n32)
			c += 2
		}
		j0 = 32 * n32
	case useAVX2 && d >= 16:
		n16 := d / 16
		for ; c+2 <= k; c += 2 {
			outer2AVX(&xs[0], nr, &g[c], ldg, &s[c*lds], lds, n16)
		}
		j0 = 16 * n16
	}
	// The entries the kernels left: odd last class, and the columns past
	// j0 (all of them without a kernel).
	for cc := 0; cc < k; cc++ {
		from := j0
		if cc >= c {
			from = 0
		}
		if from >= d {
			continue // the kernel summed this class's every column
		}
		row := s[cc*lds : cc*lds+d]
		for r, xp := range xs {
			x := unsafe.Slice(xp, d)
			gr := g[r*ldg+cc]
			for j := from; j < d; j++ {
				row[j] = math.FMA(gr, x[j], row[j])
			}
		}
	}
}

// negZero4 is the bias the AVX-512 logit kernels add when the bias must
// wait for the tail of a dot product: x + (−0) = x for every x, −0
// included (+0 would turn −0 into +0).
var negZero4 = [4]float64{math.Copysign(0, -1), math.Copysign(0, -1), math.Copysign(0, -1), math.Copysign(0, -1)}

// logitsRows writes out[r·ldo + c] = dotLanes(x_r, w_c) + bias[c] for the
// len(xs) records x_r (xs[r] points at n features) and the len(bias)
// rows w_c = w[c·ldw : c·ldw+n]: the logits of a block of records, each
// entry the bits of dotRows followed by the bias's addition. With
// AVX-512, four records at a time run in dot4x4AVX512 and dot4x2AVX512
// (four and two classes), which load each weight once for the four
// records.
func logitsRows(xs []*float64, n int, w []float64, ldw int, bias, out []float64, ldo int) {
	r := 0
	if useAVX512 && n >= 8 {
		for ; r+4 <= len(xs); r += 4 {
			logits4(((*[4]*float64)(xs[r : r+4])), n, w, ldw, bias, out[r*ldo:], ldo)
		}
	}
	for ; r < len(xs); r++ {
		fr := out[r*ldo : r*ldo+len(bias)]
		dotRows(unsafe.Slice(xs[r], n), w, ldw, fr)
		for c, b := range bias {
			fr[c] += b
		}
	}
}

// logits4 is logitsRows for four records on the AVX-512 kernels (n ≥ 8).
func logits4(xs *[4]*float64, n int, w []float64, ldw int, bias, out []float64, ldo int) {
	k := len(bias)
	n8 := n / 8
	_ = w[(k-1)*ldw+n-1] // bounds, once: the kernels read k rows × 8·n8 entries
	_ = out[3*ldo+k-1]
	tail := 8*n8 < n
	c := 0
	for ; c+4 <= k; c += 4 {
		b := (*[4]float64)(bias[c : c+4])
		if tail {
			b = &negZero4
		}
		dot4x4AVX512(xs, &w[c*ldw], ldw, n8, b, &out[c], ldo)
	}
	if c+2 <= k {
		b := (*[2]float64)(bias[c : c+2])
		if tail {
			b = (*[2]float64)(negZero4[:2])
		}
		dot4x2AVX512(xs, &w[c*ldw], ldw, n8, b, &out[c], ldo)
		c += 2
	}
	if c < k {
		for r, xp := range xs {
			v := dot1AVX(xp, &w[c*ldw], n8)
			if !tail {
				v += bias[c]
			}
			out[r*ldo+c] = v
		}
	}
	if !tail {
		return
	}
	for r, xp := range xs {
		x := unsafe.Slice(xp, n)
		fr := out[r*ldo : r*ldo+k]
		for c := range fr {
			row := w[c*ldw : c*ldw+n]
			t := fr[c]
			for j := 8 * n8; j < n; j++ {
				t = math.FMA(row[j], x[j], t)
			}
			fr[c] = t + bias[c]
		}
	}
}
