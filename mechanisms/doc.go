// Package mechanisms holds what an audit runs: models (targets with
// per-record log-likelihoods and gradients), the samplers under audit (the
// SGLD family, ULA, DP-penalty, DP-HMC and the DP Barker test), release
// schedules and each sampler's guarantees, each run reproducible from a
// seed. Datasets and their adjacent pairs are in the sub-package dataset,
// the papers' synthetic datasets in synthetic, their preset settings in
// presets, crafted canaries in canary, samplers as external programs in
// program.
package mechanisms
