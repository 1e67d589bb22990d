package mechanisms

import (
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// addRemoveSource names the add/remove accountant of a DP-SGLD
// configuration's sampling scheme.
func addRemoveSource(cfg closedform.DPSGLD) string {
	if cfg.Sampling == closedform.Poisson || cfg.BatchSize == cfg.N {
		return closedform.SGMPoissonAddRemoveTightestSource
	}
	return closedform.SGMWithoutReplacementAddRemoveTightestSource
}

// addRemoveReason says why the add/remove accountant does not cover the
// sampler on neighbours of different sizes: the subsampled Gaussian
// mechanism it accounts for has a public gradient scale s and rate q,
// while the sampler takes both from the size of the dataset it runs on
// (s = n/b, and q = b/n for Poisson sampling), so D and D′ (n and n ± 1
// records) scale every record's gradient differently, which moves the
// drift by more than one record's clipped gradient.
func addRemoveReason(s *SGLD, adj dataset.Adjacency) string {
	return fmt.Sprintf("%s neighbours differ in size n, and the sampler (scheme %s) takes its gradient scale n/b and "+
		"its sampling rate b/n from the size of the dataset it runs on, so every record's gradient is scaled differently "+
		"on D and D′; the add/remove accountant needs n, the scale and the rate public (the same on both): with scheme poisson, set the sampler's n", adj, s.Scheme)
}

// OtherAdjacencyGuarantees returns the guarantees of the mechanism under
// the adjacency the scenario does not use, for "audit bounds" to list
// beside its own: for clipped DP-SGLD audited under replace-one, the
// add/remove accountant (closedform.DPSGLD.AddRemoveGuarantees) with n, the
// gradient scale and the rate taken as public; for add/remove scenarios,
// the replace-one accountant on D. Every entry's Variant says which
// adjacency it is for; nil when the mechanism has no such accountant.
func OtherAdjacencyGuarantees(m Mechanism, p dataset.Pair, at ReleasePoint) []closedform.Guarantee {
	c, ok := m.(*Chain)
	if !ok {
		return nil
	}
	s, ok := c.Sampler.(*SGLD)
	if !ok || s.Clip <= 0 || s.Step.Gamma != 0 || p.D == nil {
		return nil
	}
	n := s.sizeOf(p.D.Len())
	cfg, ok := sgldConfig(s, n, at.Iteration)
	if !ok {
		return nil
	}
	var out []closedform.Guarantee
	if p.Adjacency != dataset.ReplaceOne {
		gs, err := cfg.Guarantees()
		if err != nil {
			return []closedform.Guarantee{uncovered(addRemoveSource(cfg), err.Error())}
		}
		out = append(out, withVariant(gs, "replace-one (on D)")...)
		if s.N > 0 {
			return out // the scenario's own guarantees are the add/remove ones
		}
	}
	return append(out, withVariant(sgldAddRemove(s, n, at.Iteration), "add/remove (n public)")...)
}

// sgldConfig returns the subsampled-Gaussian accountant's configuration of
// clipped SGLD with a constant step on n records after it steps: Poisson
// batches, or batches drawn without replacement (full batches when
// batch = n); false for the other schemes.
func sgldConfig(s *SGLD, n, it int) (closedform.DPSGLD, bool) {
	var cfg closedform.DPSGLD
	switch {
	case s.Scheme == Poisson:
		cfg = closedform.DPSGLD{N: n, Sampling: closedform.Poisson, Rate: float64(s.Batch) / float64(n)}
	case s.Scheme == WithoutReplacement:
		cfg = closedform.DPSGLD{N: n, Sampling: closedform.WithoutReplacement, BatchSize: s.Batch}
	default:
		return cfg, false
	}
	eta := s.Step.Eta
	cfg.Clip, cfg.Drift, cfg.NoiseVar, cfg.Steps = s.Clip, eta/2, eta, it
	return cfg, true
}

// sgldAddRemove returns the add/remove guarantees of clipped SGLD on n
// records after it steps, with n, the gradient scale n/b and the rate b/n
// public: closedform.DPSGLD.AddRemoveGuarantees, and with full batches the
// exact GDP composition (fullBatchGDPAddRemove).
func sgldAddRemove(s *SGLD, n, it int) []closedform.Guarantee {
	cfg, ok := sgldConfig(s, n, it)
	switch {
	case s.Clip <= 0 || s.Step.Gamma != 0:
		return []closedform.Guarantee{uncovered(closedform.SGMPoissonAddRemoveTightestSource, "the add/remove accountant needs clipped SGLD (clip > 0) with a constant step (gamma 0)")}
	case !ok:
		return []closedform.Guarantee{uncovered(closedform.SGMPoissonAddRemoveTightestSource, fmt.Sprintf("the accountant needs Poisson or without-replacement sampling; scheme %s is neither", s.Scheme))}
	}
	gs, err := cfg.AddRemoveGuarantees()
	if err != nil {
		return []closedform.Guarantee{uncovered(addRemoveSource(cfg), err.Error())}
	}
	if cfg.Sampling == closedform.WithoutReplacement && s.Batch == n {
		gs = append(gs, fullBatchGDPAddRemove(s, n, it))
	}
	return gs
}

// withVariant sets the Variant of every guarantee.
func withVariant(gs []closedform.Guarantee, v string) []closedform.Guarantee {
	for i := range gs {
		gs[i].Variant = v
	}
	return gs
}

// fullBatchGDPAddRemove is fullBatchGDP under add/remove adjacency with n
// public: one record moves the clipped sum of a full batch by at most C,
// so each step is (η/2)·C/√η = C√η/2-GDP and T steps compose to
// μ = C·sqrt(Tη)/2 (Dong, Roth & Su 2019, Cor. 3.3).
func fullBatchGDPAddRemove(s *SGLD, n, iterations int) closedform.Guarantee {
	return fullBatchGDPOf(s, n, iterations, 0.5, "/2", ", n public", ", add/remove with n public")
}
