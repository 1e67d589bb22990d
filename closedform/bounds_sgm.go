package closedform

import (
	"fmt"
	"math"
	"sync"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Sources of the subsampled Gaussian mechanism accountants.
const (
	SGMWithoutReplacementSource = "Subsampled Gaussian without replacement, replace-one: min of Wang, Balle & Kasiviswanathan 2019, Thm 9 and a direct moment bound"
	SGMPoissonReplaceOneSource  = "Poisson subsampled Gaussian, replace-one: min of a direct moment bound and Mironov 2017, Prop. 11 over Mironov, Talwar & Zhang 2019"
	SGMPoissonAddRemoveSource   = "Mironov, Talwar & Zhang 2019 (sampled Gaussian mechanism, add/remove)"

	// The tightest replace-one guarantees: the pointwise minimum of the PLD
	// accountant's profile (SGMPLDSource) and the RDP accountant's.
	SGMPoissonTightestSource = "Poisson subsampled Gaussian, replace-one: pointwise min of the PLD accountant " +
		"(antipodal dominating pair) and the RDP accountant (direct moment bound, Mironov 2017, Prop. 11)"
	SGMWithoutReplacementTightestSource = "Subsampled Gaussian without replacement, replace-one: pointwise min of the " +
		"PLD accountant (Balle, Barthe & Gaboardi 2018, Thm 2 pair) and the RDP accountant (Wang, Balle & " +
		"Kasiviswanathan 2019, Thm 9 and a direct moment bound)"
)

// Sampling names how a batch is drawn at every step.
type Sampling int

// The batch sampling schemes with an accountant.
const (
	// WithoutReplacement draws a fixed-size batch of b records uniformly
	// without replacement, afresh and independently at every step
	// (not shuffled epochs, not cyclic passes).
	WithoutReplacement Sampling = iota + 1
	// Poisson includes every record independently with probability q at
	// every step (the batch size is random).
	Poisson
)

// String returns the scheme's name.
func (s Sampling) String() string {
	switch s {
	case WithoutReplacement:
		return "without replacement"
	case Poisson:
		return "Poisson"
	}
	return fmt.Sprintf("Sampling(%d)", int(s))
}

// SGM is a subsampled Gaussian mechanism applied Steps times (adaptively):
// at every step a batch is drawn by Sampling at rate q, and the mechanism
// releases Σ_{i∈batch} g_i(θ) + N(0, σ²I) with every ‖g_i‖ ≤ C (per-record
// clipping) and NoiseMultiplier z = σ/C. Under replace-one adjacency the sum
// of a fixed batch has L2 sensitivity 2C; under add/remove, C.
type SGM struct {
	Sampling Sampling
	// Rate is q ∈ (0, 1]: b/n for sampling without replacement, the
	// inclusion probability for Poisson sampling.
	Rate float64
	// NoiseMultiplier is z = σ/C > 0.
	NoiseMultiplier float64
	// Steps is the number T ≥ 0 of releases.
	Steps int
}

// The noise multipliers accepted: 1/(2z²)·α² must stay a finite, normal
// float64 at every order of the grid.
const (
	minNoiseMultiplier = 1e-100
	maxNoiseMultiplier = 1e100
)

// sgmOrders are the integer Rényi orders the accountants tabulate: every
// order up to 256, then a 5% geometric grid up to 10⁴.
var sgmOrders = stats.IntegerOrders(256, 10000, 1.05)

// Validate checks the configuration; errors name the field and its range.
func (m SGM) Validate() error {
	if m.Sampling != WithoutReplacement && m.Sampling != Poisson {
		return fmt.Errorf("Sampling: must be WithoutReplacement or Poisson, got %v", m.Sampling)
	}
	if !(m.Rate > 0 && m.Rate <= 1) {
		return fmt.Errorf("Rate: must be in (0, 1], got %g", m.Rate)
	}
	if err := fieldPositiveFinite("NoiseMultiplier", m.NoiseMultiplier); err != nil {
		return err
	}
	if m.NoiseMultiplier < minNoiseMultiplier || m.NoiseMultiplier > maxNoiseMultiplier {
		return fmt.Errorf("NoiseMultiplier: must be in [%g, %g], got %g", minNoiseMultiplier, maxNoiseMultiplier, m.NoiseMultiplier)
	}
	if m.Steps < 0 {
		return fmt.Errorf("Steps: must be ≥ 0, got %d", m.Steps)
	}
	return nil
}

// ReplaceOneTable returns the RDP of all Steps releases under replace-one
// adjacency at the integer orders of the accountant (see ReplaceOne).
func (m SGM) ReplaceOneTable() (stats.RDPTable, error) {
	if err := m.Validate(); err != nil {
		return stats.RDPTable{}, err
	}
	t, err := sgmStepTable(m.Sampling, m.Rate, m.NoiseMultiplier)
	if err != nil {
		return t, err
	}
	return t.Compose(float64(m.Steps)), nil
}

// sgmTableKey identifies a cached one-step replace-one RDP table.
type sgmTableKey struct {
	s    Sampling
	q, z float64
}

var (
	sgmTableMu    sync.Mutex
	sgmTableCache = map[sgmTableKey]stats.RDPTable{}
)

// sgmStepTable returns the one-step replace-one RDP table, cached: an audit
// asks for it at every release point, and it costs tens of milliseconds.
func sgmStepTable(s Sampling, q, z float64) (stats.RDPTable, error) {
	key := sgmTableKey{s, q, z}
	sgmTableMu.Lock()
	defer sgmTableMu.Unlock()
	if t, ok := sgmTableCache[key]; ok {
		return t, nil
	}
	maxOrder := sgmOrders[len(sgmOrders)-1]
	d := newPoissonDirect(q, z, maxOrder)
	if s == WithoutReplacement {
		d = newWORDirect(q, z, maxOrder)
	}
	t, err := stats.NewRDPTable(sgmOrders, d.min)
	if err != nil {
		return t, err
	}
	if len(sgmTableCache) >= 64 {
		clear(sgmTableCache)
	}
	sgmTableCache[key] = t
	return t, nil
}

// ReplaceOne returns the RDP accountant's guarantee for all Steps releases
// under replace-one adjacency (the adjacency of every seed of the project):
//   - WithoutReplacement: WORSGMReplaceOneRDP, the smaller of Wang, Balle &
//     Kasiviswanathan 2019, Thm 9 on the Gaussian mechanism with sensitivity
//     2C and a direct moment bound;
//   - Poisson: PoissonSGMReplaceOneRDP, a valid (conservative) bound.
//
// RDP composes additively over the steps (Mironov 2017, Prop. 1); the
// profile and ε(δ) use the better of Mironov 2017, Prop. 3 and Balle,
// Barthe, Gaboardi, Hsu & Sato 2020, Thm 21 over integer orders 2…10⁴.
func (m SGM) ReplaceOne() (Guarantee, error) {
	if err := m.Validate(); err != nil {
		return Guarantee{}, err
	}
	source := SGMWithoutReplacementSource
	if m.Sampling == Poisson {
		source = SGMPoissonReplaceOneSource
	}
	if m.Steps == 0 {
		return nothingReleased(source, "replace-one", sgmChecks(m)), nil
	}
	t, err := m.ReplaceOneTable()
	if err != nil {
		return Guarantee{}, err
	}
	note := fmt.Sprintf("replace-one; fixed batches of b = q·n drawn uniformly without replacement, "+
		"afresh at every step; q = %g, z = σ/C = %g, T = %d", m.Rate, m.NoiseMultiplier, m.Steps)
	if m.Sampling == Poisson {
		note = fmt.Sprintf("replace-one; Poisson sampling at every step, sum scaled by a constant "+
			"(not by the realised batch size); conservative, not tight; q = %g, z = σ/C = %g, T = %d",
			m.Rate, m.NoiseMultiplier, m.Steps)
	}
	return rdpTableGuarantee(source, "replace-one", sgmChecks(m), t, note), nil
}

// AddRemove returns the guarantee of the sampled Gaussian mechanism under
// add/remove adjacency, exact at integer orders (Mironov, Talwar & Zhang
// 2019; PoissonSGMAddRemoveRDP). It exists for comparison with other
// accountants: it does not cover replace-one neighbours. Only Poisson
// sampling is supported.
func (m SGM) AddRemove() (Guarantee, error) {
	if err := m.Validate(); err != nil {
		return Guarantee{}, err
	}
	if m.Sampling != Poisson {
		return Guarantee{}, fmt.Errorf("Sampling: the add/remove accountant needs Poisson sampling, got %v", m.Sampling)
	}
	if m.Steps == 0 {
		return nothingReleased(SGMPoissonAddRemoveSource, "add/remove", sgmChecks(m)), nil
	}
	t, err := stats.NewRDPTable(sgmOrders, func(a int) float64 {
		return PoissonSGMAddRemoveRDP(m.Rate, m.NoiseMultiplier, a)
	})
	if err != nil {
		return Guarantee{}, err
	}
	t = t.Compose(float64(m.Steps))
	return rdpTableGuarantee(SGMPoissonAddRemoveSource, "add/remove", sgmChecks(m), t,
		fmt.Sprintf("ADD/REMOVE adjacency: does not bound replace-one neighbours; q = %g, z = %g, T = %d",
			m.Rate, m.NoiseMultiplier, m.Steps)), nil
}

// EpsilonOrder returns the RDP accountant's replace-one ε(δ) (converted as
// in ReplaceOne) and the Rényi order attaining it.
func (m SGM) EpsilonOrder(delta float64) (eps float64, order int, err error) {
	t, err := m.ReplaceOneTable()
	if err != nil {
		return math.NaN(), 0, err
	}
	return t.Epsilon(delta, stats.Improved)
}

// ReplaceOnePLD returns the PLD accountant's guarantee for all Steps
// releases under replace-one adjacency (default options; see SGM.PLD and
// PLDProfile): the pessimistic profile, an upper bound on δ(ε).
func (m SGM) ReplaceOnePLD() (Guarantee, error) {
	g, _, err := m.pldGuarantee(AdjacencyReplaceOne)
	return g, err
}

// AddRemovePLD returns the PLD accountant's guarantee for all Steps
// releases under add/remove adjacency (see SGM.PLD for the rate of sampling
// without replacement). It does not cover replace-one neighbours.
func (m SGM) AddRemovePLD() (Guarantee, error) {
	g, _, err := m.pldGuarantee(AdjacencyAddRemove)
	return g, err
}

// pldGuarantee builds the PLD guarantee and returns its profile too.
func (m SGM) pldGuarantee(adj Adjacency) (Guarantee, *PLDProfile, error) {
	if err := m.Validate(); err != nil {
		return Guarantee{}, nil, err
	}
	if m.Steps == 0 {
		return nothingReleased(SGMPLDSource, adj.String(), sgmChecks(m)), nil, nil
	}
	a, err := m.PLD(adj, nil)
	if err != nil {
		return Guarantee{}, nil, err
	}
	p, err := a.Profile(m.Steps)
	if err != nil {
		return Guarantee{}, nil, err
	}
	noteAt := func(delta float64) string {
		return fmt.Sprintf("%v, %v sampling, q = %g, z = σ/C = %g, T = %d; %s", adj, m.Sampling, m.Rate,
			m.NoiseMultiplier, m.Steps, pldSummary(p, delta))
	}
	spec := m.pldSpec(adj)
	return Guarantee{
		Source: SGMPLDSource, Variant: adj.String(), Release: "path", Checks: sgmChecks(m), Applies: true,
		Profile:   p.Delta,
		Spec:      &spec,
		EpsilonAt: p.Epsilon,
		Note:      noteAt(a.opt.ReferenceDelta),
		NoteAt:    noteAt,
	}, p, nil
}

// pldSummary states the discretisation of a profile and its error at δ.
func pldSummary(p *PLDProfile, delta float64) string {
	return fmt.Sprintf("PLD grid h = %.3g, %d points: ε(%g) = %.6g pessimistic, %.6g optimistic "+
		"(discretisation gap %.2g%%); δ ≥ %.2g everywhere (unresolved tail mass)",
		p.GridStep, p.WindowSize, delta, p.Epsilon(delta), p.OptimisticEpsilon(delta), 100*p.Gap(delta), p.Floor())
}

// ReplaceOneTightest returns, for all Steps releases under replace-one
// adjacency, the pointwise minimum of two valid upper bounds on δ(ε): the
// PLD accountant's (ReplaceOnePLD) and the RDP accountant's (ReplaceOne).
// The minimum of valid bounds is valid; the PLD is the tighter one except
// at δ near or below its floor (δ ≈ 1e-13), where the RDP bound decays
// further. The Note gives both ε at δ = 1e-5 (NoteAt at any δ) and the δ
// below which the RDP bound takes over. When the PLD accountant cannot handle the noise level
// (per-step losses beyond ±500), the RDP guarantee is returned alone.
func (m SGM) ReplaceOneTightest() (Guarantee, error) {
	rdp, err := m.ReplaceOne()
	if err != nil {
		return rdp, err
	}
	source := SGMWithoutReplacementTightestSource
	if m.Sampling == Poisson {
		source = SGMPoissonTightestSource
	}
	return m.tightest(rdp, source, "", AdjacencyReplaceOne)
}

// tightest is the pointwise minimum of the RDP guarantee rdp and the PLD
// accountant's guarantee for adjacency adj (ReplaceOneTightest and
// AddRemoveTightest): the RDP guarantee alone when the PLD accountant
// cannot handle the noise level, "nothing released" without steps.
func (m SGM) tightest(rdp Guarantee, source, variant string, adj Adjacency) (Guarantee, error) {
	if m.Steps == 0 {
		return nothingReleased(source, variant, rdp.Checks), nil
	}
	pld, prof, perr := m.pldGuarantee(adj)
	if perr != nil {
		rdp.Source = source
		rdp.appendNote("; PLD accountant unavailable (" + perr.Error() + "), RDP only")
		return rdp, nil
	}
	cross := crossover(pld, rdp)
	noteAt := func(delta float64) string {
		ep, er := pld.EpsilonAt(delta), rdp.EpsilonAt(delta)
		tighter := "the PLD"
		if er < ep {
			tighter = "the RDP"
		}
		return fmt.Sprintf("%s; at δ = %g %s bound is the tighter (PLD ε = %.6g, RDP ε = %.6g)%s; %s",
			rdp.NoteFor(delta), delta, tighter, ep, er, cross, pldSummary(prof, delta))
	}
	var spec *ProfileSpec
	if pld.Spec != nil && rdp.Spec != nil {
		s := MinSpec(*pld.Spec, *rdp.Spec)
		spec = &s
	}
	return Guarantee{
		Spec:   spec,
		Source: source, Variant: variant, Release: "path", Checks: rdp.Checks, Applies: true,
		Profile: func(eps float64) float64 { return math.Min(pld.Profile(eps), rdp.Profile(eps)) },
		EpsilonAt: func(delta float64) float64 {
			return math.Min(pld.EpsilonAt(delta), rdp.EpsilonAt(delta))
		},
		RDP:    rdp.RDP,
		Note:   noteAt(1e-5),
		NoteAt: noteAt,
	}, nil
}

// crossover describes where the RDP bound overtakes the PLD one: the
// largest δ (on a grid of 10^{−k/4}, 1e-1 … 1e-30) at which the RDP ε is the
// smaller.
func crossover(pld, rdp Guarantee) string {
	for k := 4; k <= 120; k++ {
		d := math.Pow(10, -float64(k)/4)
		if rdp.EpsilonAt(d) < pld.EpsilonAt(d) {
			return fmt.Sprintf("; the RDP bound is the tighter from δ ≈ %.2g down", d)
		}
	}
	return "; the PLD bound is the tighter down to δ = 1e-30"
}

// mustSGMArgs panics unless q ∈ (0, 1], z is an accepted noise multiplier
// and α ≥ 2: the per-step functions are called with validated values (SGM
// validates user input), so a violation is a programmer error.
func mustSGMArgs(fn string, q, z float64, alpha int) {
	if !(q > 0 && q <= 1) || !(z >= minNoiseMultiplier && z <= maxNoiseMultiplier) || alpha < 2 {
		panic(fmt.Sprintf("closedform: %s(q = %g, z = %g, α = %d) outside q ∈ (0, 1], z ∈ [%g, %g], α ≥ 2",
			fn, q, z, alpha, minNoiseMultiplier, maxNoiseMultiplier))
	}
}

func sgmChecks(m SGM) []Check {
	return []Check{
		{Name: "sampling rate q ∈ (0, 1]", Holds: true, Detail: fmt.Sprintf("q = %g (%v)", m.Rate, m.Sampling)},
		{Name: "noise multiplier z = σ/C > 0", Holds: true, Detail: fmt.Sprintf("z = %g", m.NoiseMultiplier)},
	}
}

// The per-step RDP functions below need q ∈ (0, 1], z ∈ [1e-100, 1e100] and
// an integer order α ≥ 2, and panic otherwise (see SGM.Validate).

// WORSGMThm9RDP returns the one-step RDP at integer order α ≥ 2 of the
// Gaussian mechanism on a batch of b = q·n records drawn uniformly without
// replacement, under replace-one adjacency, by Wang, Balle & Kasiviswanathan
// 2019, Thm 9 (stats.WORSubsampledRDP) applied to the Gaussian mechanism
// with sensitivity 2C and noise σ = zC, whose RDP is ε(j) = j(2C)²/(2σ²) =
// 2j/z² (Mironov 2017, Prop. 7). At q = 1 it is that Gaussian RDP, 2α/z².
func WORSGMThm9RDP(q, z float64, alpha int) float64 {
	mustSGMArgs("WORSGMThm9RDP", q, z, alpha)
	if q == 1 {
		return 2 * float64(alpha) / (z * z)
	}
	return stats.WORSubsampledRDP(func(j int) float64 { return 2 * float64(j) / (z * z) }, q, alpha)
}

// WORSGMReplaceOneRDP returns the smaller of two valid upper bounds on the
// one-step RDP at integer order α ≥ 2 of the Gaussian mechanism on a batch
// drawn uniformly without replacement at rate q, under replace-one
// adjacency: WORSGMThm9RDP, and the direct moment bound described at
// PoissonSGMReplaceOneRDP adapted to this sampling scheme.
//
// The adaptation: draw a random (b−1)-subset B′ of the other records, then
// add record i with probability q, or else a uniformly drawn record j ∉ B′;
// this produces a uniform b-subset. Conditioned on (B′, j) and shifted by
// Σ_{B′} g + g_j, the two outputs are (1−q)φ_0 + qφ_u and (1−q)φ_0 + qφ_v with
// u = g_i − g_j, v = g′_i − g_j, so ‖u‖, ‖v‖ ≤ 2C and ‖u − v‖ ≤ 2C. The expansion
// of PoissonSGMReplaceOneRDP then holds with B_2 ≤ 2e^{4/z²} − 2e^{2/z²}
// (maximise e^a + e^b − 2e^c over a, b ≤ 4/z², c ≥ (a+b)/2 − 2/z²: the bound
// increases in a and b) and with M_j taken at shift 2C.
//
// Thm 9 is about four times loose in the leading q² term for the Gaussian
// (its 4(e^{ε(2)} − 1) ≈ 16/z² against ≈ 4/z² here); the direct bound is in
// turn weaker at high orders. Neither is tight.
func WORSGMReplaceOneRDP(q, z float64, alpha int) float64 {
	mustSGMArgs("WORSGMReplaceOneRDP", q, z, alpha)
	return newWORDirect(q, z, alpha).min(alpha)
}

// PoissonSGMAddRemoveRDP returns the RDP at integer order α ≥ 2 of the
// sampled Gaussian mechanism (Poisson rate q, noise multiplier z) under
// add/remove adjacency, exactly: ε(α) = ln A_α/(α−1) with
//
//	A_α = Σ_{k=0..α} C(α,k)·(1−q)^{α−k}·q^k·exp((k²−k)/(2z²)),
//
// the closed form of E_{μ0}[(μ/μ0)^α] for μ0 = N(0, z²), μ = (1−q)μ0 +
// q·N(1, z²) (Mironov, Talwar & Zhang 2019, §3.3; Abadi et al. 2016). That
// direction dominates the other one and the one-dimensional pair is the worst
// case (MTZ 2019, §3). Terms are all positive and summed in log space.
func PoissonSGMAddRemoveRDP(q, z float64, alpha int) float64 {
	mustSGMArgs("PoissonSGMAddRemoveRDP", q, z, alpha)
	return poissonLogA(q, z, alpha) / float64(alpha-1)
}

// poissonLogA returns ln A_α of PoissonSGMAddRemoveRDP, computed as
// log1p(A_α − 1) with A_α − 1 = Σ_{k≥2} C(α,k)(1−q)^{α−k}q^k·(e^{(k²−k)/(2z²)} − 1)
// (the binomial weights sum to 1): every term is positive, so the result
// keeps its relative accuracy even when it is tiny.
func poissonLogA(q, z float64, alpha int) float64 {
	rho := 1 / (2 * z * z)
	a := float64(alpha)
	if q == 1 {
		return a * (a - 1) * rho
	}
	lq, l1q := math.Log(q), math.Log1p(-q)
	var acc numeric.LogSumAcc
	for k := 2; k <= alpha; k++ {
		kf := float64(k)
		acc.Add(numeric.LogBinomial(alpha, k) + (a-kf)*l1q + kf*lq + numeric.LogExpm1(kf*(kf-1)*rho))
	}
	return numeric.Log1pExp(acc.Log())
}

// PoissonSGMReplaceOneRDP returns a valid upper bound on the one-step RDP at
// integer order α ≥ 2 of the Poisson sampled Gaussian mechanism under
// replace-one adjacency (record i holds g in one dataset and g′ in the
// other, ‖g‖, ‖g′‖ ≤ C). No published closed form covers this case; the bound
// is the smaller of two, both derived for this package from standard facts:
//
// (a) Weak triangle inequality through the dataset without record i
// (Mironov 2017, Prop. 11, which follows from Hölder's inequality with
// exponents 2, 2): D_α(P‖Q) ≤ (α−½)/(α−1)·D_{2α}(P‖R) + D_{2α−1}(R‖Q), where
// P‖R and R‖Q are add/remove pairs, each bounded by PoissonSGMAddRemoveRDP.
//
// (b) A direct moment bound. Conditioned on the rest of the batch (joint
// convexity of ∫P^αQ^{1−α} lets one take the worst case), and with C = 1,
// σ = z: P = (1−q)φ_0 + qφ_u, Q = (1−q)φ_0 + qφ_v with φ_w = N(w, z²I),
// ‖u‖, ‖v‖ ≤ 1. With D = (φ_u − φ_v)/Q, P/Q = 1 + qD and E_Q[D] = 0, so
//
//	E_Q[(P/Q)^α] ≤ 1 + Σ_{j=2..α} C(α,j)·q^j·(1−q)^{1−j}·B_j,
//	B_j = ∫|φ_u − φ_v|^j φ_0^{1−j}  (using Q ≥ (1−q)φ_0).
//
// B_2 = e^{‖u‖²/z²} + e^{‖v‖²/z²} − 2e^{u·v/z²} ≤ 4·sinh(1/z²) (u = −v is
// worst). For even j, Minkowski's inequality in L^j(φ_0) applied to
// (φ_u − φ_v)/φ_0 = (φ_u/φ_0 − 1) − (φ_v/φ_0 − 1) gives B_j ≤ 2^j·M_j with
// M_j = E_{φ_0}[(φ_e/φ_0 − 1)^j], ‖e‖ = 1 (the moment grows with ‖w‖, since
// φ_w/φ_0 is an exponential martingale in ‖w‖²), and
// M_j = Σ_k C(j,k)(−1)^{j−k} e^{k(k−1)/(2z²)}. For odd j, Cauchy–Schwarz gives
// B_j ≤ √(B_{j−1}B_{j+1}).
//
// The alternating sum M_j is evaluated in float64 with a rounding-error bound
// added, and replaced by M_j ≤ 1 + e^{j(j−1)/(2z²)} (from |x − 1|^j ≤ 1 + x^j)
// when that is smaller. At q = 1 the result is the Gaussian's 2α/z².
func PoissonSGMReplaceOneRDP(q, z float64, alpha int) float64 {
	mustSGMArgs("PoissonSGMReplaceOneRDP", q, z, alpha)
	return newPoissonDirect(q, z, alpha).min(alpha)
}

// directMoment holds the direct moment bound of PoissonSGMReplaceOneRDP for
// one mixture weight q: ln B_2 and ln M_j (even j) for the relevant shift.
type directMoment struct {
	q     float64
	logB2 float64
	logM  []float64 // logM[j] = ln of an upper bound on M_j, even j ≥ 2
	// other is the competing bound at order α (weak triangle or Thm 9).
	other func(alpha int) float64
	// exact is the value at q = 1 (no subsampling).
	exact func(alpha int) float64
}

// newPoissonDirect returns the replace-one bounds for Poisson sampling.
func newPoissonDirect(q, z float64, maxOrder int) *directMoment {
	rho := 1 / (2 * z * z)
	d := newDirectMoment(q, rho, maxOrder)
	// ln(4 sinh(2ρ)) = ln 2 + 2ρ + ln(1 − e^{−4ρ}), 2ρ = 1/z².
	d.logB2 = math.Ln2 + 2*rho + numeric.Log1mExp(-4*rho)
	d.other = func(alpha int) float64 {
		a := float64(alpha)
		return (2*a-1)/(2*(a-1))*PoissonSGMAddRemoveRDP(q, z, 2*alpha) +
			PoissonSGMAddRemoveRDP(q, z, 2*alpha-1)
	}
	d.exact = func(alpha int) float64 { return 2 * float64(alpha) / (z * z) }
	return d
}

// newWORDirect returns the replace-one bounds for sampling without replacement.
func newWORDirect(q, z float64, maxOrder int) *directMoment {
	rho := 1 / (2 * z * z)
	d := newDirectMoment(q, 4*rho, maxOrder) // shift 2C: ρ(2C) = 4ρ
	// ln(2e^{8ρ} − 2e^{4ρ}) = ln 2 + 4ρ + ln(e^{4ρ} − 1), 4ρ = 2/z².
	d.logB2 = math.Ln2 + 4*rho + numeric.LogExpm1(4*rho)
	d.other = func(alpha int) float64 { return WORSGMThm9RDP(q, z, alpha) }
	d.exact = d.other
	return d
}

// altSumMaxJ and altSumMaxExp bound where the alternating sum for M_j is
// attempted: beyond them the cancellation or the term sizes make the crude
// bound the better one anyway.
const (
	altSumMaxJ   = 512
	altSumMaxExp = 60.0
)

// newDirectMoment tabulates ln M_j for the even j ≤ maxOrder+1, where
// M_j = Σ_k C(j,k)(−1)^{j−k} e^{ρk(k−1)} = E_{φ_0}[(φ_w/φ_0 − 1)^j] for a shift
// ‖w‖ with ‖w‖²/(2σ²) = ρ.
func newDirectMoment(q, rho float64, maxOrder int) *directMoment {
	d := &directMoment{q: q}
	n := maxOrder + 1 // odd j = maxOrder needs M_{j+1}
	d.logM = make([]float64, n+1)
	for j := range d.logM {
		d.logM[j] = math.NaN()
	}
	// Pascal's triangle in float64: every entry of row l carries a relative
	// rounding error of at most l·2⁻⁵³ (sums of positive numbers).
	row := []float64{1}
	for l := 1; l <= n; l++ {
		if l <= altSumMaxJ {
			next := make([]float64, l+1)
			next[0], next[l] = 1, 1
			for k := 1; k < l; k++ {
				next[k] = row[k-1] + row[k]
			}
			row = next
		}
		if l%2 != 0 {
			continue
		}
		lf := float64(l)
		crude := numeric.Log1pExp(rho * lf * (lf - 1))
		switch {
		case l == 2:
			d.logM[l] = numeric.LogExpm1(2 * rho) // M_2 = e^{2ρ} − 1 exactly
		case l <= altSumMaxJ && rho*lf*(lf-1) <= altSumMaxExp:
			d.logM[l] = math.Min(crude, altSumLogM(row, rho))
		default:
			d.logM[l] = crude
		}
	}
	return d
}

// altSumLogM returns ln of S + E, where S is the float64 value of
// Σ_k C(l,k)(−1)^{l−k} e^{ρk(k−1)} (row = Pascal row l) and E bounds its
// rounding error: every term is exact to (2l + 5x + 10)·2⁻⁵³ relative, with x
// the exponent (binomial from Pascal's triangle ≤ l·2⁻⁵³, the four roundings
// of the exponent amplified by x, exp's ulp and the product), and the
// summation adds (l+1)·2⁻⁵³ of the absolute sum; E doubles the total. It is
// +Inf when S + E is not positive (no information).
func altSumLogM(row []float64, rho float64) float64 {
	l := len(row) - 1
	var s, abs float64
	for k := 0; k <= l; k++ {
		kf := float64(k)
		t := row[k] * math.Exp(rho*kf*(kf-1))
		abs += t
		if (l-k)%2 == 0 {
			s += t
		} else {
			s -= t
		}
	}
	lf := float64(l)
	xmax := rho * lf * (lf - 1)
	e := 2 * abs * (2*lf + 5*xmax + 10 + lf + 1) * 0x1p-53
	if !(s+e > 0) {
		return math.Inf(1)
	}
	return math.Log(s + e)
}

// logB returns ln of the bound on B_j.
func (d *directMoment) logB(j int) float64 {
	jf := float64(j)
	switch {
	case j == 2:
		return d.logB2
	case j%2 == 0:
		return jf*math.Ln2 + d.logM[j]
	default:
		return jf*math.Ln2 + 0.5*(d.logM[j-1]+d.logM[j+1])
	}
}

// direct returns the direct moment bound at order α:
// ln(1 + Σ_j C(α,j) q^j (1−q)^{1−j} B_j)/(α−1), summed in log space.
func (d *directMoment) direct(alpha int) float64 {
	lq, l1q := math.Log(d.q), math.Log1p(-d.q)
	var acc numeric.LogSumAcc
	for j := 2; j <= alpha; j++ {
		jf := float64(j)
		acc.Add(numeric.LogBinomial(alpha, j) + jf*lq + (1-jf)*l1q + d.logB(j))
	}
	return numeric.Log1pExp(acc.Log()) / float64(alpha-1)
}

// min returns the smaller of the direct and the competing bound at order α
// (≤ the order the table was built for).
func (d *directMoment) min(alpha int) float64 {
	if alpha < 2 || alpha+1 >= len(d.logM) {
		panic(fmt.Sprintf("closedform: direct moment bound at order %d (table to %d)", alpha, len(d.logM)-2))
	}
	if d.q == 1 {
		return d.exact(alpha)
	}
	return math.Min(d.direct(alpha), d.other(alpha))
}

// DPSGLD is a DP-SGLD configuration with per-record gradient clipping. At
// every step a batch B is drawn (Sampling) and
//
//	θ ← θ + Drift·(∇ln p(θ) + s·Σ_{i∈B} clip_C(∇ln p(x_i|θ))) + N(0, NoiseVar·I),
//
// with the constant gradient scale s = N/BatchSize (without replacement) or
// 1/Rate (Poisson). The SGLD of the seeds (Heller & Fetaya eq. 3) has
// Drift = η/2 and NoiseVar = η.
//
// Mapping to the SGM: given θ (already released), the new θ is an invertible
// affine function of Σ_B clip(g_i) + N(0, σ²I) with σ = √NoiseVar/(Drift·s),
// so every step is a subsampled Gaussian mechanism with noise multiplier
// z = σ/C = √NoiseVar/(Drift·s·C); for the seeds' SGLD, z = 2b/(N·C·√η).
// The release covered is the whole path θ_1…θ_T (hence also the last state).
type DPSGLD struct {
	// N is the number of records (≥ 1).
	N int
	// Sampling is WithoutReplacement or Poisson.
	Sampling Sampling
	// BatchSize is b ∈ [1, N] (WithoutReplacement only; 0 for Poisson).
	BatchSize int
	// Rate is q ∈ (0, 1] (Poisson only; 0 for WithoutReplacement).
	Rate float64
	// Clip is the per-record gradient norm bound C > 0.
	Clip float64
	// Drift is the coefficient h > 0 of the gradient (η/2 for SGLD).
	Drift float64
	// NoiseVar is the variance v > 0 of the injected noise (η for SGLD).
	NoiseVar float64
	// Steps is the number T ≥ 0 of steps.
	Steps int
}

// Validate checks the configuration; errors name the field and its range.
func (c DPSGLD) Validate() error {
	if c.N < 1 {
		return fmt.Errorf("N: must be ≥ 1, got %d", c.N)
	}
	switch c.Sampling {
	case WithoutReplacement:
		if c.BatchSize < 1 || c.BatchSize > c.N {
			return fmt.Errorf("BatchSize: must be in [1, N = %d], got %d", c.N, c.BatchSize)
		}
		if c.Rate != 0 {
			return fmt.Errorf("Rate: must be 0 for sampling without replacement (set BatchSize), got %g", c.Rate)
		}
	case Poisson:
		if !(c.Rate > 0 && c.Rate <= 1) {
			return fmt.Errorf("Rate: must be in (0, 1], got %g", c.Rate)
		}
		if c.BatchSize != 0 {
			return fmt.Errorf("BatchSize: must be 0 for Poisson sampling (set Rate), got %d", c.BatchSize)
		}
	default:
		return fmt.Errorf("Sampling: must be WithoutReplacement or Poisson, got %v", c.Sampling)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Clip", c.Clip}, {"Drift", c.Drift}, {"NoiseVar", c.NoiseVar}} {
		if err := fieldPositiveFinite(f.name, f.v); err != nil {
			return err
		}
	}
	if c.Steps < 0 {
		return fmt.Errorf("Steps: must be ≥ 0, got %d", c.Steps)
	}
	return nil
}

// GradientScale returns s: N/b without replacement, 1/q for Poisson.
func (c DPSGLD) GradientScale() float64 {
	if c.Sampling == Poisson {
		return 1 / c.Rate
	}
	return float64(c.N) / float64(c.BatchSize)
}

// SamplingRate returns q: b/N without replacement, Rate for Poisson.
func (c DPSGLD) SamplingRate() float64 {
	if c.Sampling == Poisson {
		return c.Rate
	}
	return float64(c.BatchSize) / float64(c.N)
}

// NoiseMultiplier returns z = √NoiseVar/(Drift·s·C) (see DPSGLD).
func (c DPSGLD) NoiseMultiplier() float64 {
	return math.Sqrt(c.NoiseVar) / (c.Drift * c.GradientScale() * c.Clip)
}

// SGM returns the subsampled Gaussian mechanism the configuration runs.
func (c DPSGLD) SGM() (SGM, error) {
	if err := c.Validate(); err != nil {
		return SGM{}, err
	}
	m := SGM{Sampling: c.Sampling, Rate: c.SamplingRate(), NoiseMultiplier: c.NoiseMultiplier(), Steps: c.Steps}
	if err := m.Validate(); err != nil {
		return SGM{}, fmt.Errorf("DP-SGLD noise multiplier z = √NoiseVar/(Drift·s·Clip) out of range: %w", err)
	}
	return m, nil
}

// Guarantees returns the replace-one guarantee of the configuration: the
// pointwise minimum of the PLD and RDP accountants' profiles for its
// sampling scheme (SGM.ReplaceOneTightest). SGM.ReplaceOne and
// SGM.ReplaceOnePLD give each accountant alone.
func (c DPSGLD) Guarantees() ([]Guarantee, error) {
	m, err := c.SGM()
	if err != nil {
		return nil, err
	}
	g, err := m.ReplaceOneTightest()
	if err != nil {
		return nil, err
	}
	g.appendNote(fmt.Sprintf("; DP-SGLD mapped with s = %g, z = √v/(h·s·C) = %g", c.GradientScale(), m.NoiseMultiplier))
	return []Guarantee{g}, nil
}
