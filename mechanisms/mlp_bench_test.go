package mechanisms

import "testing"

// BenchmarkMLPGradLogLik: one record's gradient through a 64-32-10 network
// (2,410 parameters); the audit's budget is ≤ 50 µs.
func BenchmarkMLPGradLogLik(b *testing.B) {
	benchGrad(b, MLP{Features: 64, Hidden: 32, Classes: 10, Alpha: 1})
}

// BenchmarkMLPGradLogLikH64: the same with 64 hidden units.
func BenchmarkMLPGradLogLikH64(b *testing.B) {
	benchGrad(b, MLP{Features: 64, Hidden: 64, Classes: 10, Alpha: 1})
}

// BenchmarkSGLDRunDigitsMLP: one 20-epoch SGLD run of the 64-32-10 MLP on
// the digits (the audit's budget is ≤ 1.5 s per run).
func BenchmarkSGLDRunDigitsMLP(b *testing.B) {
	benchDigitsRun(b, MLP{Features: 64, Hidden: 32, Classes: 10, Alpha: 1})
}

// BenchmarkMLPMinibatchGrad: one minibatch of 32 digits-shaped records
// through the 64-32-10 network (2,410 parameters), reference vs matrix
// products.
func BenchmarkMLPMinibatchGrad(b *testing.B) {
	benchMinibatchGrad(b, MLP{Features: 64, Hidden: 32, Classes: 10, Alpha: 1}, 0)
}
