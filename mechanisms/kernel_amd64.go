package mechanisms

import "golang.org/x/sys/cpu"

// useAVX2 reports whether the AVX2 + FMA kernels of kernel_amd64.s run
// (the processor and the operating system support them).
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX512 reports whether the AVX-512 kernels run as well (AVX-512
// Foundation, which they use alone, with the processor's and the
// operating system's support); they give the bits of the AVX2 kernels
// and of the portable code.
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F

// dot1AVX returns the eight-lane sum of dotLanes over 8·n8 entries.
//
//go:noescape
func dot1AVX(x, w *float64, n8 int) float64

// dot4AVX writes the eight-lane sums of dotLanes over 8·n8 entries of x
// against four rows of w (ldw apart) into out.
//
//go:noescape
func dot4AVX(x, w *float64, ldw, n8 int, out *[4]float64)

// dot2AVX is dot4AVX for two rows.
//
//go:noescape
func dot2AVX(x, w *float64, ldw, n8 int, out *[2]float64)

// outer2AVX adds, for two classes (gr and gr+1) and the first 16·n16
// columns, Σ_r gr[r·ldg]·xs[r][j] into s[j] and gr[r·ldg+1]·xs[r][j] into
// s[lds+j], by one fused multiply–add per record in record order.
//
//go:noescape
func outer2AVX(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n16 int)

// softmaxResidual4AVX applies softmaxResidualGo to the four rows
// f[r·ldg : r·ldg+k] (labels ys[r]), one row per lane, with the scalar
// code's operations in its order; e is scratch for 4·k values and c is
// expVec. It returns false, leaving f untouched, when some row has a logit
// whose exponent is outside fastExp's inline range (below −708 after the
// maximum is subtracted, NaN, or infinite), for which the scalar code must
// run. With ldg = 0 the four lanes compute one row.
//
//go:noescape
func softmaxResidual4AVX(f *float64, ldg, k int, ys *[4]int, e *float64, c *[expVecLen][4]float64) bool

// dot4x4AVX512 writes, for the four records xs[r] and the four rows of w
// (ldw apart), the eight-lane sums of dotLanes over 8·n8 entries plus
// bias[c] into out[r·ldo + c].
//
//go:noescape
func dot4x4AVX512(xs *[4]*float64, w *float64, ldw, n8 int, bias *[4]float64, out *float64, ldo int)

// dot4x2AVX512 is dot4x4AVX512 for two rows of w.
//
//go:noescape
func dot4x2AVX512(xs *[4]*float64, w *float64, ldw, n8 int, bias *[2]float64, out *float64, ldo int)

// outer4x32AVX512 is outer2AVX for four classes (gr … gr+3) and the first
// 32·n32 columns; nr ≥ 1 and n32 ≥ 1.
//
//go:noescape
func outer4x32AVX512(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n32 int)

// outer2x32AVX512 is outer4x32AVX512 for two classes.
//
//go:noescape
func outer2x32AVX512(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n32 int)

// sgldStepAVX2 applies sgldUpdate's isotropic-prior update to the first
// 4·n4 coordinates, four at a time, with the scalar code's operations in
// its order (none fused); c is (−α, sc, η/2, sd). It reports whether the
// new coordinates are all finite.
//
//go:noescape
func sgldStepAVX2(theta, gi, noise *float64, n4 int, c *[4]float64) bool
