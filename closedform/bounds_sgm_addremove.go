package closedform

import (
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Sources of the add/remove guarantees (pointwise minimum of the PLD and
// RDP accountants, as the replace-one ones are built).
const (
	SGMPoissonAddRemoveTightestSource = "Poisson subsampled Gaussian, add/remove: pointwise min of the PLD accountant " +
		"(remove pair and its swap) and the RDP accountant (Mironov, Talwar & Zhang 2019)"
	SGMWithoutReplacementAddRemoveTightestSource = "Subsampled Gaussian without replacement, add/remove: pointwise min of the " +
		"PLD accountant (remove pair with shift 2C and its swap) and the RDP accountant (Mironov, Talwar & Zhang 2019's " +
		"closed form at shift 2C)"
)

// AddRemoveStepRDP returns the one-step RDP at integer order α ≥ 2 of the
// subsampled Gaussian under add/remove adjacency: Poisson,
// PoissonSGMAddRemoveRDP(q, z, α) (exact; at q = 1 the Gaussian mechanism
// of sensitivity C, α/(2z²)); without replacement, the same closed form for
// the remove pair at shift 2C, PoissonSGMAddRemoveRDP(q, z/2, α): the
// coupling of docs/derivations/pld.md, §2.4 gives, conditioned on the rest
// of the batch, ((1−q)N(0) + qN(u), N(0)) with ‖u‖ ≤ 2C, E[(P/Q)^α] is jointly
// convex and grows with ‖u‖, and the remove orientation dominates the add
// one at every order (Mironov, Talwar & Zhang 2019, §3).
func AddRemoveStepRDP(s Sampling, q, z float64, alpha int) float64 {
	if s == WithoutReplacement {
		return PoissonSGMAddRemoveRDP(q, z/2, alpha)
	}
	return PoissonSGMAddRemoveRDP(q, z, alpha)
}

// AddRemoveRDP returns the RDP accountant's guarantee for all Steps
// releases under add/remove adjacency, for both sampling schemes
// (AddRemoveStepRDP, composed additively, converted as in ReplaceOne). For
// sampling without replacement Rate must be b/n of the larger dataset, or of
// the dataset at hand (conservative, §2.4).
func (m SGM) AddRemoveRDP() (Guarantee, error) {
	if err := m.Validate(); err != nil {
		return Guarantee{}, err
	}
	if m.Steps == 0 {
		return nothingReleased(SGMPoissonAddRemoveSource, "add/remove", sgmChecks(m)), nil
	}
	t, err := stats.NewRDPTable(sgmOrders, func(a int) float64 {
		return AddRemoveStepRDP(m.Sampling, m.Rate, m.NoiseMultiplier, a)
	})
	if err != nil {
		return Guarantee{}, err
	}
	t = t.Compose(float64(m.Steps))
	return rdpTableGuarantee(SGMPoissonAddRemoveSource, "add/remove", sgmChecks(m), t,
		fmt.Sprintf("add/remove; %v sampling, q = %g, z = σ/C = %g, T = %d", m.Sampling, m.Rate, m.NoiseMultiplier, m.Steps)), nil
}

// AddRemoveTightest returns, for all Steps releases under add/remove
// adjacency, the pointwise minimum of the PLD accountant's profile
// (AddRemovePLD: the remove pair ((1−q)N(0) + qN(s), N(0)) and its swap, s = C
// for Poisson, 2C without replacement; at q = 1 with Poisson sampling, the
// Gaussian mechanism of sensitivity C) and the RDP accountant's
// (AddRemoveRDP). It does not cover replace-one neighbours. When the PLD
// accountant cannot handle the noise level the RDP guarantee is returned
// alone, as in ReplaceOneTightest.
func (m SGM) AddRemoveTightest() (Guarantee, error) {
	rdp, err := m.AddRemoveRDP()
	if err != nil {
		return rdp, err
	}
	source := SGMWithoutReplacementAddRemoveTightestSource
	if m.Sampling == Poisson {
		source = SGMPoissonAddRemoveTightestSource
	}
	return m.tightest(rdp, source, "add/remove", AdjacencyAddRemove)
}

// AddRemoveGuarantees returns the add/remove guarantee of the
// configuration (SGM.AddRemoveTightest), under the assumption that N, and
// so the gradient scale s and the rate q, are public: the same numbers on
// both neighbours (the mapping of DPSGLD with constant s). A full batch
// (WithoutReplacement with BatchSize = N) is accounted as Poisson sampling
// at q = 1: every record is in every batch, so one record moves the sum by
// C, the Gaussian mechanism of sensitivity C (not the 2C of a fixed-size
// batch, which must drop a record to make room).
func (c DPSGLD) AddRemoveGuarantees() ([]Guarantee, error) {
	m, err := c.SGM()
	if err != nil {
		return nil, err
	}
	full := m.Sampling == WithoutReplacement && c.BatchSize == c.N
	if full {
		m.Sampling = Poisson
	}
	g, err := m.AddRemoveTightest()
	if err != nil {
		return nil, err
	}
	if full {
		g.appendNote("; a full batch is accounted as Poisson sampling at q = 1 (every record in every batch: sensitivity C)")
	}
	g.appendNote(fmt.Sprintf("; DP-SGLD mapped with s = %g, z = √v/(h·s·C) = %g; n, s and q public (the same on both neighbours)",
		c.GradientScale(), m.NoiseMultiplier))
	return []Guarantee{g}, nil
}
