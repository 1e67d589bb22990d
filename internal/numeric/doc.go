// Package numeric holds the small numerical primitives that stats and
// closedform share: log-space arithmetic (log-sum-exp, log(1−eˣ)), the log
// of the standard normal CDF far into its tails, and a bracketing root
// finder; and, for crafting canaries in mechanisms, non-negative least
// squares and least-distance programming (Lawson & Hanson), which gonum's
// optimize does not offer. gonum provides the special functions (Φ⁻¹,
// incomplete beta); this package covers only what gonum does not export.
//
// It imports no other package of the project.
package numeric
