// Package numeric holds the small numerical primitives that stats and
// closedform share: log-space arithmetic (log-sum-exp, log(1−eˣ)), the log
// of the standard normal CDF far into its tails, and a bracketing root
// finder. gonum provides the special functions (Φ⁻¹, incomplete beta); this
// package covers only what gonum does not export.
//
// It imports no other package of the project.
package numeric
