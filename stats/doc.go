// Package stats turns attack error counts into privacy statements.
//
// It holds the binomial confidence bounds (Clopper–Pearson, Jeffreys), the
// empirical ε lower bound of Heller & Fetaya eq. 12 with its ceiling for a
// given number of runs, Gaussian differential privacy (the privacy profile
// δ(ε) of μ-GDP, its inverse ε(δ), and the μ lower bound from counts), and
// the Rényi-DP conversions used by the accountants: one Conversion setting
// (Improved, the default, or Mironov's reference form) for curves
// (RDPCurve.Epsilon, LogDelta; orders optional, continuous when nil) and
// for tables at integer orders (RDPTable.Epsilon, LogDelta, Profile).
//
// Every estimator returns an Estimate, which carries the estimator's name,
// the confidence level, δ and the counts next to the number, so that an ε
// never travels without its provenance.
//
// Conventions: a "negative" is a run on the original dataset D and a
// "positive" a run on the neighbour D′; a false positive (FP) is a run on D
// that the attack attributes to D′, a false negative (FN) a run on D′
// attributed to D. Confidence is 1−α, with α the probability that a reported
// bound is wrong; it must lie in (0, 1). δ must lie in [0, 1).
package stats
