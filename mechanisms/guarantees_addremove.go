package mechanisms

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
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
		"on D and D′; the add/remove accountant needs n, the scale and the rate public (the same on both)", adj, s.Scheme)
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
	n := p.D.Len()
	var cfg closedform.DPSGLD
	switch s.Scheme {
	case WithoutReplacement:
		cfg = closedform.DPSGLD{N: n, Sampling: closedform.WithoutReplacement, BatchSize: s.Batch}
	case Poisson:
		cfg = closedform.DPSGLD{N: n, Sampling: closedform.Poisson, Rate: float64(s.Batch) / float64(n)}
	default:
		return nil
	}
	eta := s.Step.Eta
	cfg.Clip, cfg.Drift, cfg.NoiseVar, cfg.Steps = s.Clip, eta/2, eta, at.Iteration
	var out []closedform.Guarantee
	if p.Adjacency != dataset.ReplaceOne {
		gs, err := cfg.Guarantees()
		if err != nil {
			return []closedform.Guarantee{uncovered(addRemoveSource(cfg), err.Error())}
		}
		out = append(out, withVariant(gs, "replace-one (on D)")...)
	}
	gs, err := cfg.AddRemoveGuarantees()
	if err != nil {
		return append(out, uncovered(addRemoveSource(cfg), err.Error()))
	}
	if s.Scheme == WithoutReplacement && s.Batch == n {
		gs = append(gs, fullBatchGDPAddRemove(s, n, at.Iteration))
	}
	return append(out, withVariant(gs, "add/remove (n public)")...)
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
	eta := s.Step.Eta
	mu := s.Clip * math.Sqrt(float64(iterations)*eta) / 2
	return closedform.Guarantee{
		Source:  "Gaussian mechanism composition (Dong, Roth & Su 2019, Cor. 3.3), full batches",
		Release: "path (hence every state)", Applies: true,
		Checks: []closedform.Check{{Name: "full batches (batch = n, without replacement), n public", Holds: true,
			Detail: fmt.Sprintf("n = %d, clip C = %g, η = %g, T = %d: μ = C·sqrt(Tη)/2 = %.6g", n, s.Clip, eta, iterations, mu)}},
		Profile: func(e float64) float64 { return stats.GDPDelta(mu, e) },
		Spec:    gdpSpec(mu),
		RDP:     stats.GaussianRDP(mu),
		Note:    fmt.Sprintf("exactly %.6g-GDP for the nominal noise variance η, add/remove with n public", mu),
	}
}
