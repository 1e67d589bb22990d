// Package curve is "audit curve": the exact lower bounds on the privacy
// loss of cyclic SGLD in the interim region (Heller & Fetaya §IV.B) on its
// counterexample — D1 = n copies of (x_h, c·x_h), D2 replacing one by
// (x_h/2, c·x_h/2) — where the output after each epoch is a Gaussian (D1)
// against a uniform mixture of n Gaussians (D2). It has three modes
// (Mode): the four curves per epoch for c and η given or solved for
// (Run with ModeCurves), Theorem IV.1's construction checked with the exact
// curves (App. A-A; ModeConstruct), and n_min of eq. 33 with runs of
// Algorithm 1 (propose–test–sample) on the datasets of eq. 9 (ModeNMin).
// Options holds the command's flags and checks them; the results are
// rendered as a table, JSON, CSV, an SVG or PNG plot and an HTML page.
// The epochs are evaluated on the pool of internal/pool.
package curve
