// Package epsilon is "audit epsilon": the bounds that error counts alone
// give, without running anything. From an attack's false positives and
// negatives on evaluation runs (Counts): the region bound of Heller &
// Fetaya (eq. 12, Clopper–Pearson at α/2 per rate), the GDP μ lower
// bound, the ceiling the run counts allow and the plug-in estimate
// (eq. 11). From a one-run canary audit's guesses (OneRun): the bound of
// Steinke, Nasr & Jagielski 2023 (Thm 3.1; App. D for δ > 0) and the
// f-DP μ of Mahloujifar, Melis & Chaudhuri 2024.
package epsilon
