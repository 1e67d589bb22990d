// Package sweep is "audit bounds --sweep": every theorem's ε at δ as one
// parameter of a scenario's sampler (or the number of iterations, the
// dataset size the theorems see, or the sampling ratio) runs over a range,
// optionally one curve per value of a second parameter — Heikkilä et al.'s
// Fig. 1 (ε against the subsampling ratio q and against T for the
// subsampled Barker test) — and, with --accuracy, Räisä et al.'s trade-off
// between ε and how far the sampler's releases are from the exact
// posterior, measured by running it (on the pool of internal/pool). Its
// outputs are a table, JSON, CSV and an SVG or PNG plot.
package sweep
