// Package mechanisms holds what an audit runs: models (targets with
// per-record log-likelihoods and gradients), adjacent-dataset constructions,
// and the samplers under audit (the SGLD family, ULA, DP-penalty, DP-HMC and
// the DP Barker test), each reproducible from a seed.
package mechanisms
