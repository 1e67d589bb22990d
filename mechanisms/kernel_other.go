//go:build !amd64

package mechanisms

// useAVX2 is false off amd64: the portable kernels run.
const useAVX2 = false

// useAVX512 is false off amd64.
const useAVX512 = false

func dot1AVX(x, w *float64, n8 int) float64               { panic("unreachable") }
func dot4AVX(x, w *float64, ldw, n8 int, out *[4]float64) { panic("unreachable") }
func dot2AVX(x, w *float64, ldw, n8 int, out *[2]float64) { panic("unreachable") }
func outer2AVX(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n16 int) {
	panic("unreachable")
}
func softmaxResidual4AVX(f *float64, ldg, k int, ys *[4]int, e *float64, c *[expVecLen][4]float64) bool {
	panic("unreachable")
}
func dot4x4AVX512(xs *[4]*float64, w *float64, ldw, n8 int, bias *[4]float64, out *float64, ldo int) {
	panic("unreachable")
}
func dot4x2AVX512(xs *[4]*float64, w *float64, ldw, n8 int, bias *[2]float64, out *float64, ldo int) {
	panic("unreachable")
}
func outer4x32AVX512(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n32 int) {
	panic("unreachable")
}
func outer2x32AVX512(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n32 int) {
	panic("unreachable")
}
func sgldStepAVX2(theta, gi, noise *float64, n4 int, c *[4]float64) bool { panic("unreachable") }
