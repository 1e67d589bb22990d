package mechanisms

import "golang.org/x/sys/cpu"

// useAVX2 reports whether the AVX2 + FMA kernels of kernel_amd64.s run
// (the processor and the operating system support them).
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

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
