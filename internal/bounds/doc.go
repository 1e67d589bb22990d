// Package bounds is "audit bounds": every theoretical upper bound of the
// papers for a scenario's sampler on its adjacent datasets (Row: the
// theorem, the assumptions checked with their numbers, and ε at δ, or why
// it does not apply), the lower bound that convergence to the posteriors
// proves (Bertazzi et al. 2025, Prop. 3.3 / A.3) and the distance to the
// posterior each upper bound then requires (Prop. 3.4 / A.4), as a table
// fitted to 120 columns and as JSON. The sweep of those bounds along a
// parameter is internal/sweep.
package bounds
