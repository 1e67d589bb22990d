package mechanisms

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Guarantor is implemented by mechanisms that know theoretical upper
// bounds on their privacy loss: for the release at point at of a run on
// the pair p, every theorem that speaks about it, with its assumptions
// checked for this configuration and its whole privacy profile. Bounds
// whose assumptions fail are returned with Applies false and the reason.
// An audit can test them all (audit.Options.Theorems).
type Guarantor interface {
	Guarantees(p dataset.Pair, at ReleasePoint) []closedform.Guarantee
}

// SamplerGuarantor is implemented by samplers that know their guarantees in
// a Setting; Chain turns it into a Guarantor.
type SamplerGuarantor interface {
	Guarantees(s Setting) []closedform.Guarantee
}

// Setting is what a sampler's guarantee depends on besides the sampler.
type Setting struct {
	// Model is the target whose gradients the sampler follows.
	Model Model
	// Records are those whose gradients matter: the records of D and D′
	// (or a representative set of them, for datasets too large to hold,
	// such as the counterexample at n = 17,864,389). Model constants are
	// evaluated over them: the statements are about this pair, which is
	// all an audit of the pair can test.
	Records []dataset.Record
	// Adjacency relates D and D′.
	Adjacency dataset.Adjacency
	// N is the size of D.
	N int
	// Iterations is the number of updates before the release.
	Iterations int
	// Pair is the audited pair itself, when known: Balle et al.'s bounds
	// take the sensitivity from the two records that differ, and Cor 7
	// the exact posteriors of D and D′.
	Pair dataset.Pair
	// Init is the chain's starting point (data-independent, as every
	// theorem here assumes); a bound on a domain must contain it.
	Init Init
}

// SettingOf returns the setting of a model over the pair p, for the state
// released after the given number of iterations.
func SettingOf(m Model, p dataset.Pair, iterations int) Setting {
	var records []dataset.Record
	for _, d := range []*dataset.Dataset{p.D, p.DPrime} {
		if d != nil {
			records = append(records, d.Records...)
		}
	}
	n := 0
	if p.D != nil {
		n = p.D.Len()
	}
	return Setting{Model: m, Records: records, Adjacency: p.Adjacency, N: n, Iterations: iterations, Pair: p}
}

// constants evaluates the model's gradient constants over the records.
func (s Setting) constants() GradientConstants {
	if cm, ok := s.Model.(ConstantsModel); ok {
		return cm.GradientConstants(s.Records)
	}
	return GradientConstants{Reason: fmt.Sprintf("no gradient constants are known for %s", s.Model.Name())}
}

// Guarantees returns the guarantees a mechanism declares for the release
// at point at of a run on p, or one entry saying that none is known.
func Guarantees(m Mechanism, p dataset.Pair, at ReleasePoint) []closedform.Guarantee {
	if g, ok := m.(Guarantor); ok {
		return g.Guarantees(p, at)
	}
	return []closedform.Guarantee{uncovered("(none)", fmt.Sprintf("%s declares no theoretical guarantee", NameOf(m)))}
}

// SamplerGuarantees returns the guarantees a sampler declares in the
// setting, or one entry saying that no theorem covers it.
//
// Every list ends with why Balle et al.'s amplification by mixing (Thm 1)
// does not apply: it needs a data-independent kernel after the release.
func SamplerGuarantees(s Sampler, st Setting) []closedform.Guarantee {
	if g, ok := s.(SamplerGuarantor); ok {
		return append(g.Guarantees(st), balleMixing(s))
	}
	return []closedform.Guarantee{uncovered("(none)", fmt.Sprintf("no theorem of the papers covers %s", s.Name())), balleMixing(s)}
}

// Guarantees implements SamplerGuarantor: Bertazzi et al.'s noisy-SGD
// bounds for unclipped SGLD, the subsampled-Gaussian accountants (and the
// exact GDP composition for full batches) for clipped SGLD.
// Balle et al.'s Thm 5 for one pass over a shuffled order and Cor 7 for
// full batches on an isotropic Gaussian target (balle.go).
func (s *SGLD) Guarantees(st Setting) []closedform.Guarantee {
	return append(sgldGuarantees(s, st.constants(), st.Adjacency, st.N, st.Iterations), balleSGLD(s, st)...)
}

// Guarantees implements SamplerGuarantor: Bertazzi et al. Thms 5.2 and
// 5.4; Balle et al. Cor 7 on an isotropic Gaussian target and Thm 5 (which
// needs one pass); the Gaussian composition for projected ULA (balle.go).
func (u *ULA) Guarantees(st Setting) []closedform.Guarantee {
	return append(ulaGuarantees(u, st.constants(), st.N, st.Iterations), balleULA(u, st)...)
}

// Guarantees implements SamplerGuarantor: the exact GDP of a clipped sum.
func (g *GaussianQuery) Guarantees(st Setting) []closedform.Guarantee {
	return []closedform.Guarantee{gaussianQueryGuarantee(g, st.Adjacency)}
}

// Guarantees implements SamplerGuarantor: Heikkilä et al. Thms 1–2.
func (b *DPBarker) Guarantees(st Setting) []closedform.Guarantee {
	return append(barkerGuarantees(b, st.N, st.Iterations), balleAcceptReject())
}

// Guarantees implements SamplerGuarantor: Räisä et al. Thm 3.5 (penalty).
func (s *DPPenalty) Guarantees(st Setting) []closedform.Guarantee {
	if s.NoNoise {
		return []closedform.Guarantee{uncovered("Räisä et al. 2021, Thm 3.5 (DP-penalty)", "no_noise: true makes the sampler plain Metropolis-Hastings, which has no privacy guarantee"), balleAcceptReject()}
	}
	return append(wrap(closedform.RaisaPenalty{TauL: s.PaperTau(st.N), Iterations: st.Iterations}.Guarantees()), balleAcceptReject())
}

// Guarantees implements SamplerGuarantor: Räisä et al. Thm 3.5 (DP-HMC).
func (s *DPHMC) Guarantees(st Setting) []closedform.Guarantee {
	if s.NoNoise {
		return []closedform.Guarantee{uncovered("Räisä et al. 2021, Thm 3.5 (DP-HMC)", "no_noise: true makes the sampler plain HMC, which has no privacy guarantee"), balleAcceptReject()}
	}
	tl, tg := s.PaperTaus(st.N)
	return append(wrap(closedform.RaisaHMC{TauL: tl, TauG: tg, Leapfrog: s.LeapfrogSteps, Iterations: st.Iterations}.Guarantees()), balleAcceptReject())
}

// uncovered is a guarantee entry that does not apply, with its reason.
func uncovered(source, reason string) closedform.Guarantee {
	return closedform.Guarantee{Source: source, Release: "final state", Reason: reason,
		Checks: []closedform.Check{{Name: "covered by the theorem", Holds: false, Detail: reason}}}
}

func wrap(gs []closedform.Guarantee, err error) []closedform.Guarantee {
	if err != nil {
		return []closedform.Guarantee{uncovered("(configuration)", err.Error())}
	}
	return gs
}

// sgldGuarantees: unclipped SGLD gets Bertazzi et al.'s noisy-SGD bounds,
// clipped SGLD the subsampled-Gaussian accountant. Both need a constant
// step; both are computed for the nominal noise variance η (a
// NoiseVariance ≠ 1 is a deliberately planted deviation that the bounds
// do not know about).
func sgldGuarantees(s *SGLD, k GradientConstants, adj dataset.Adjacency, n, iterations int) []closedform.Guarantee {
	if s.Step.Gamma != 0 {
		return []closedform.Guarantee{uncovered("Bertazzi et al. 2025 / subsampled Gaussian accountant",
			"the bounds assume a constant step size (sampler.step.gamma must be 0)")}
	}
	eta := s.Step.Eta
	if s.Clip > 0 && s.N > 0 && adj != dataset.ReplaceOne {
		// n, the scale and the rate are public: the add/remove
		// accountants apply.
		return withVariant(sgldAddRemove(s, s.N, iterations), "add/remove (n public)")
	}
	n = s.sizeOf(n)
	if s.Clip > 0 {
		var cfg closedform.DPSGLD
		switch s.Scheme {
		case WithoutReplacement:
			cfg = closedform.DPSGLD{N: n, Sampling: closedform.WithoutReplacement, BatchSize: s.Batch}
		case Poisson:
			cfg = closedform.DPSGLD{N: n, Sampling: closedform.Poisson, Rate: float64(s.Batch) / float64(n)}
		default:
			return []closedform.Guarantee{uncovered("subsampled Gaussian accountant",
				fmt.Sprintf("the accountant needs Poisson or without-replacement sampling; scheme %s is neither", s.Scheme))}
		}
		if adj != dataset.ReplaceOne {
			return []closedform.Guarantee{uncovered(addRemoveSource(cfg), addRemoveReason(s, adj))}
		}
		cfg.Clip, cfg.Drift, cfg.NoiseVar, cfg.Steps = s.Clip, eta/2, eta, iterations
		gs := wrap(cfg.Guarantees())
		if s.Scheme == WithoutReplacement && s.Batch == n {
			gs = append(gs, fullBatchGDP(s, n, iterations))
		}
		return gs
	}
	if s.Scheme == WithReplacement || s.Scheme == Poisson {
		return []closedform.Guarantee{uncovered("Bertazzi et al. 2025, Thms 5.6–5.8",
			fmt.Sprintf("eq. 15 draws each batch as a set of s distinct records; scheme %s can repeat a record or vary the batch size", s.Scheme))}
	}
	if k.LikGradBound == 0 {
		reason := k.Reason
		if reason == "" {
			reason = "no bound on the likelihood gradient is known"
		}
		return []closedform.Guarantee{uncovered("Bertazzi et al. 2025, Thms 5.6–5.8 (Assumption 5.5: |∇v| ≤ c)", reason)}
	}
	w := closedform.WellingTehSGLD{Eta: eta, N: iterations, BatchSize: s.Batch, DatasetSize: n,
		LikGradBound: k.LikGradBound, LikGradDiff: k.LikGradDiff, ConstantLikGrad: k.ConstantLikGrad,
		PriorLipschitz: k.PriorLipschitz, PriorConvexity: k.PriorConvexity}
	var out []closedform.Guarantee
	for _, v := range []closedform.Variant{closedform.Printed, closedform.Conservative} {
		gs, err := closedform.SGLDGuarantees(w.Params(), v)
		if err != nil {
			return wrap(nil, err)
		}
		out = append(out, gs...)
	}
	return out
}

// barkerGuarantees: Heikkilä et al. Thm 1 / Cor 1 for the full-data test
// (every per-record term of Δ is τ·clip at most) and Thm 2 / Cor 2 for the
// subsampled test (llrs clipped at the resolved bound, tempering N0).
func barkerGuarantees(s *DPBarker, n, iterations int) []closedform.Guarantee {
	src := "Heikkilä et al. 2019"
	if s.Exact {
		return []closedform.Guarantee{uncovered(src, "the exact Barker test (exact: true) adds no noise and has no privacy guarantee")}
	}
	p, err := s.resolve(n)
	if err != nil {
		return []closedform.Guarantee{uncovered(src, err.Error())}
	}
	if math.IsInf(p.clip, 1) {
		return []closedform.Guarantee{uncovered(src+", Thms 1–2", "the log-likelihood ratios are not clipped (set sampler.clip), so no bound B on them is known")}
	}
	if p.full {
		return wrap(closedform.BarkerFull{LLRBound: p.scale * p.clip, C: p.c, Iterations: iterations}.Guarantees())
	}
	return wrap(closedform.BarkerSubsampled{N: n, BatchSize: s.Batch, Iterations: iterations, C: p.c,
		LLRBound: p.clip, N0: p.n0}.Guarantees())
}

// fullBatchGDP is the exact accountant of clipped SGLD with full batches:
// every step adds (η/2)·Σ clip(g_i) + N(0, η), whose clipped sum moves by
// at most 2C when one record is replaced, so each step is a Gaussian
// mechanism with μ_step = (η/2)·2C/√η = C√η, and T adaptive steps compose
// to μ = C·sqrt(Tη)-GDP (Dong, Roth & Su 2019, Cor. 3.3). No subsampling is
// involved, so nothing is lost to an RDP conversion.
func fullBatchGDP(s *SGLD, n, iterations int) closedform.Guarantee {
	return fullBatchGDPOf(s, n, iterations, 1, "", "", "")
}

// fullBatchGDPOf is the full-batch GDP composition with μ = scale·C·sqrt(Tη)
// (scale 1 under replace-one, ½ under add/remove), its texts completed by
// the suffixes of μ's formula, of the check's name and of the note.
func fullBatchGDPOf(s *SGLD, n, iterations int, scale float64, formula, check, note string) closedform.Guarantee {
	eta := s.Step.Eta
	mu := scale * s.Clip * math.Sqrt(float64(iterations)*eta)
	return closedform.Guarantee{
		Source:  "Gaussian mechanism composition (Dong, Roth & Su 2019, Cor. 3.3), full batches",
		Release: "path (hence every state)", Applies: true,
		Checks: []closedform.Check{{Name: "full batches (batch = n, without replacement)" + check, Holds: true,
			Detail: fmt.Sprintf("n = %d, clip C = %g, η = %g, T = %d: μ = C·sqrt(Tη)%s = %.6g", n, s.Clip, eta, iterations, formula, mu)}},
		Profile: func(e float64) float64 { return stats.GDPDelta(mu, e) },
		Spec:    gdpSpec(mu),
		RDP:     stats.GaussianRDP(mu),
		Note:    fmt.Sprintf("exactly %.6g-GDP for the nominal noise variance η%s", mu, note),
	}
}

func ulaGuarantees(u *ULA, k GradientConstants, n, iterations int) []closedform.Guarantee {
	if u.Radius > 0 {
		return []closedform.Guarantee{uncovered("Bertazzi et al. 2025, Thms 5.2, 5.4",
			"projected ULA is not the chain of eq. 12 (the projection changes the dynamics)")}
	}
	if k.LikGradBound == 0 {
		reason := k.Reason
		if reason == "" {
			reason = "no bound on the likelihood gradient is known"
		}
		return []closedform.Guarantee{uncovered("Bertazzi et al. 2025, Thms 5.2, 5.4 (Assumptions 5.1, 5.3)", reason)}
	}
	diff := k.LikGradDiff
	if diff == 0 {
		diff = 2 * k.LikGradBound
	}
	p := closedform.ULAParams{Gamma: u.Gamma, N: iterations, GradBound: float64(n) * k.LikGradBound,
		Lipschitz: k.PriorLipschitz, Convexity: k.PriorConvexity, DiffBound: diff}
	var out []closedform.Guarantee
	for _, v := range []closedform.Variant{closedform.Printed, closedform.Conservative} {
		gs, err := closedform.ULAGuarantees(p, v)
		if err != nil {
			return wrap(nil, err)
		}
		out = append(out, gs...)
	}
	return out
}

// gaussianQueryGuarantee: with clipping at C, one record moves the sum by
// at most 2C (replace-one) or C (add/remove), and the release is exactly
// μ-GDP with μ = sensitivity/σ (Dong, Roth & Su 2019, Thm 2.7).
func gaussianQueryGuarantee(g *GaussianQuery, adj dataset.Adjacency) closedform.Guarantee {
	src := "Gaussian mechanism (Dong, Roth & Su 2019, Thm 2.7)"
	if g.Clip == 0 {
		return uncovered(src, "the sum is not clipped (sampler.clip = 0), so its sensitivity is unbounded")
	}
	sens := 2 * g.Clip
	if adj != dataset.ReplaceOne {
		sens = g.Clip
	}
	mu := sens / g.Sigma
	return closedform.Guarantee{
		Source: src, Release: "the noisy sum", Applies: true,
		Checks: []closedform.Check{{Name: "clipped sum", Holds: true,
			Detail: fmt.Sprintf("sensitivity %g (%s), σ = %g, μ = %g", sens, adj, g.Sigma, mu)}},
		Profile: func(eps float64) float64 { return stats.GDPDelta(mu, eps) },
		Spec:    gdpSpec(mu),
		RDP:     stats.GaussianRDP(mu),
		Note:    fmt.Sprintf("exactly %.6g-GDP", mu),
	}
}

// gdpSpec is the μ-GDP profile as data.
func gdpSpec(mu float64) *closedform.ProfileSpec {
	s := closedform.GDPSpec(mu)
	return &s
}

// GuaranteeLabel names a guarantee for reports: source and variant.
func GuaranteeLabel(g closedform.Guarantee) string {
	if g.Variant != "" {
		return g.Source + " [" + g.Variant + "]"
	}
	return g.Source
}
