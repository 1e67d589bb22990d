package closedform

import (
	"fmt"
	"math"
	"sync"
)

// Adjacency names the neighbouring relation an accountant covers.
type Adjacency int

// The neighbouring relations of the subsampled Gaussian accountants.
const (
	// AdjacencyReplaceOne: one record is replaced by another (same n).
	AdjacencyReplaceOne Adjacency = iota + 1
	// AdjacencyAddRemove: one record is added or removed.
	AdjacencyAddRemove
)

// String returns the relation's name.
func (a Adjacency) String() string {
	switch a {
	case AdjacencyReplaceOne:
		return "replace-one"
	case AdjacencyAddRemove:
		return "add/remove"
	}
	return fmt.Sprintf("Adjacency(%d)", int(a))
}

// Sources of the PLD accountants.
const (
	SGMPLDSource = "PLD accountant of the subsampled Gaussian (dominating pairs: docs/derivations/pld.md; " +
		"FFT composition, Koskela, Jälkö & Honkela 2020; pessimistic discretisation, Doroshenko et al. 2022)"
)

// normSF returns P(N(0,1) > t) and normCDF P(N(0,1) ≤ t), both accurate in
// relative terms in their small tails.
func normSF(t float64) float64  { return 0.5 * math.Erfc(t/math.Sqrt2) }
func normCDF(t float64) float64 { return 0.5 * math.Erfc(-t/math.Sqrt2) }

// mixturePair is P = (1−q)·N(0, z²) + q·N(s, z²) against Q = N(0, z²) (the
// clip C is the unit, s the sensitivity in units of C): the "remove"
// direction of a subsampled Gaussian. Its loss
// L(x) = ln(1 − q + q·e^{(s·x − s²/2)/z²}) increases in x, from ln(1−q).
type mixturePair struct{ q, z, s float64 }

// x inverts the loss: L(x) = l ⇔ x = (z²/s)·ln((e^l − 1 + q)/q) + s/2;
// −Inf at or below ln(1−q).
func (p mixturePair) x(l float64) float64 {
	v := math.Expm1(l) + p.q
	if !(v > 0) {
		return math.Inf(-1)
	}
	return p.z*p.z/p.s*(math.Log(v)-math.Log(p.q)) + p.s/2
}

func (p mixturePair) tails(l float64) (sp, fp, sq, fq float64) {
	x := p.x(l)
	a, b := x/p.z, (x-p.s)/p.z
	sp = (1-p.q)*normSF(a) + p.q*normSF(b)
	fp = (1-p.q)*normCDF(a) + p.q*normCDF(b)
	return sp, fp, normSF(a), normCDF(a)
}

// antipodalPair is P = (1−q)N(0, z²) + qN(1, z²) against
// Q = (1−q)N(0, z²) + qN(−1, z²): the dominating pair of the Poisson
// subsampled Gaussian under replace-one adjacency (docs/derivations/pld.md,
// §2.2). With a = q·e^{−1/(2z²)}/(1−q) and y = x/z² the likelihood ratio is
// (1 + a·e^y)/(1 + a·e^{−y}), so L(x) = l ⇔ y = l/2 + asinh(sinh(l/2)/a).
type antipodalPair struct{ q, z float64 }

func (p antipodalPair) x(l float64) float64 {
	z2 := p.z * p.z
	if p.q == 1 {
		return z2 * l / 2
	}
	if l == 0 {
		return 0
	}
	v := math.Abs(l) / 2
	// ln sinh(v) − ln a, then asinh(e^t) without overflow.
	lnSinh := v + math.Log1p(-math.Exp(-2*v)) - math.Ln2
	lnA := math.Log(p.q) - 1/(2*z2) - math.Log1p(-p.q)
	t := lnSinh - lnA
	var as float64
	if t > 20 {
		as = t + math.Ln2 + math.Exp(-2*t)/4
	} else {
		as = math.Asinh(math.Exp(t))
	}
	return math.Copysign(z2*(v+as), l)
}

func (p antipodalPair) tails(l float64) (sp, fp, sq, fq float64) {
	x := p.x(l)
	a, bp, bq := x/p.z, (x-1)/p.z, (x+1)/p.z
	sp = (1-p.q)*normSF(a) + p.q*normSF(bp)
	fp = (1-p.q)*normCDF(a) + p.q*normCDF(bp)
	sq = (1-p.q)*normSF(a) + p.q*normSF(bq)
	fq = (1-p.q)*normCDF(a) + p.q*normCDF(bq)
	return
}

// swappedPair is (Q, P) for a pair (P, Q) with a continuous loss: its loss
// is −L, P′(L′ > l) = Q(L < −l), and so on.
type swappedPair struct{ base lossPair }

func (p swappedPair) tails(l float64) (sp, fp, sq, fq float64) {
	bsp, bfp, bsq, bfq := p.base.tails(-l)
	return bfq, bsq, bfp, bsp
}

// symmetricPair is the symmetrisation of a pair with a continuous loss:
// the PLD under P of the positive losses is kept, the negative losses are
// its mirror image weighted by e^{−l}, and the rest of the mass sits at 0.
// Its hockey-stick divergences for e^ε ≥ 1 are those of the base pair, and
// it is symmetric, so it dominates a symmetric relation for all orders when
// the base pair dominates it for e^ε ≥ 1 (docs/derivations/pld.md, §2.1).
type symmetricPair struct{ base lossPair }

func (p symmetricPair) tails(l float64) (sp, fp, sq, fq float64) {
	if l >= 0 {
		sp, _, sq, _ = p.base.tails(l)
		return sp, 1 - sp, sq, 1 - sq
	}
	bsp, bfp, bsq, bfq := p.base.tails(-l)
	// P*(L ≤ l) = Q(L ≥ −l), Q*(L ≤ l) = P(L ≥ −l).
	return bfq, bsq, bfp, bsp
}

// sgmPairs returns the dominating pairs (one per direction) of one step of
// the subsampled Gaussian with rate q and noise multiplier z.
//   - Poisson, replace-one: the antipodal pair (symmetric).
//   - Without replacement, replace-one: the symmetrisation of
//     ((1−q)N(0) + qN(2C), N(0)), Balle, Barthe & Gaboardi 2018, Thm 2 with
//     sensitivity 2C.
//   - Add/remove: ((1−q)N(0) + qN(s), N(0)) and its swap, s = C for Poisson
//     and 2C without replacement (the batch keeps its size b, so adding a
//     record replaces one in the batch).
func sgmPairs(s Sampling, adj Adjacency, q, z float64) []lossPair {
	sens := 1.0
	if s == WithoutReplacement {
		sens = 2
	}
	switch {
	case adj == AdjacencyReplaceOne && s == Poisson:
		return []lossPair{symmetricPair{antipodalPair{q, z}}}
	case adj == AdjacencyReplaceOne:
		return []lossPair{symmetricPair{mixturePair{q, z, 2}}}
	}
	rm := mixturePair{q, z, sens}
	return []lossPair{rm, swappedPair{rm}}
}

// PLDOptions tunes the PLD accountant; zero fields take the defaults.
type PLDOptions struct {
	// GridStep fixes the loss grid width h; 0 chooses it (a tenth of the
	// per-step loss's standard deviation, halved until the gap target is
	// met at ReferenceDelta, at most four times).
	GridStep float64
	// TailMass is the probability mass left unresolved in each truncation:
	// per step above the grid (moved to +∞) and below it, and per
	// composition outside the window; default 1e-17 per step and 1e-16
	// per composition (this value scales both).
	TailMass float64
	// GapTarget is the relative gap (ε_pess − ε_opt)/ε_pess aimed at;
	// default 0.005.
	GapTarget float64
	// ReferenceDelta is the δ at which the gap is measured; default 1e-5.
	ReferenceDelta float64
}

func (o PLDOptions) withDefaults() PLDOptions {
	if o.TailMass == 0 {
		o.TailMass = 1e-16
	}
	if o.GapTarget == 0 {
		o.GapTarget = 0.005
	}
	if o.ReferenceDelta == 0 {
		o.ReferenceDelta = 1e-5
	}
	return o
}

// Validate checks the options; errors name the field and its range.
func (o PLDOptions) Validate() error {
	switch {
	case !(o.GridStep >= 0) || math.IsInf(o.GridStep, 1):
		return fmt.Errorf("GridStep: must be finite and ≥ 0 (0 = automatic), got %g", o.GridStep)
	case !(o.TailMass >= 0 && o.TailMass <= 1e-6):
		return fmt.Errorf("TailMass: must be in [0, 1e-6] (0 = 1e-16), got %g", o.TailMass)
	case !(o.GapTarget >= 0 && o.GapTarget < 1):
		return fmt.Errorf("GapTarget: must be in [0, 1) (0 = 0.005), got %g", o.GapTarget)
	case !(o.ReferenceDelta >= 0 && o.ReferenceDelta < 1):
		return fmt.Errorf("ReferenceDelta: must be in [0, 1) (0 = 1e-5), got %g", o.ReferenceDelta)
	}
	return nil
}

// Limits of the automatic grid.
const (
	pldMaxCells   = 1 << 20 // cells of one step
	pldMinStep    = 1e-10   // smallest grid width
	pldRefinement = 4       // halvings of the automatic width
)

// PLDAccountant composes the PLD of one step of a mechanism; it caches the
// discretised steps and the profiles it has computed, and is safe for
// concurrent use.
type PLDAccountant struct {
	pairs []lossPair
	opt   PLDOptions
	// lo, hi bound the per-step loss (truncation mass TailMass/10 each side).
	lo, hi float64
	h0     float64 // automatic grid width

	mu       sync.Mutex
	steps    map[float64][]*stepPLD
	profiles map[int]*PLDProfile
}

// newPLDAccountant prepares the accountant of the given pairs (one per
// direction; the profile is the maximum over them).
func newPLDAccountant(pairs []lossPair, opt PLDOptions) (*PLDAccountant, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	a := &PLDAccountant{pairs: pairs, opt: opt, steps: map[float64][]*stepPLD{}, profiles: map[int]*PLDProfile{}}
	a.lo, a.hi = math.Inf(1), math.Inf(-1)
	for _, p := range pairs {
		lo, hi, err := lossBounds(p, opt.TailMass/10)
		if err != nil {
			return nil, err
		}
		a.lo, a.hi = math.Min(a.lo, lo), math.Max(a.hi, hi)
	}
	if opt.GridStep > 0 {
		a.h0 = opt.GridStep
	} else {
		// A coarse pass measures the per-step loss spread.
		h := (a.hi - a.lo) / 4096
		sd := math.Inf(1)
		for _, p := range pairs {
			s := discretise(p, h, int(math.Floor(a.lo/h)), int(math.Ceil(a.hi/h)))
			_, d := moments(s.pess, s.lo, s.h)
			sd = math.Min(sd, d)
		}
		a.h0 = math.Max(math.Max(sd/10, (a.hi-a.lo)/pldMaxCells), pldMinStep)
	}
	if (a.hi-a.lo)/a.h0 > pldMaxCells*4 {
		return nil, fmt.Errorf("GridStep: %g gives %g cells per step (limit %d)", a.h0, (a.hi-a.lo)/a.h0, pldMaxCells*4)
	}
	return a, nil
}

// step returns the discretised steps (one per direction) at width h.
func (a *PLDAccountant) step(h float64) []*stepPLD {
	if s, ok := a.steps[h]; ok {
		return s
	}
	var out []*stepPLD
	for _, p := range a.pairs {
		out = append(out, discretise(p, h, int(math.Floor(a.lo/h)), int(math.Ceil(a.hi/h))))
	}
	a.steps[h] = out
	return out
}

// compose returns the profile of T compositions at width h.
func (a *PLDAccountant) compose(T int, h float64) (*PLDProfile, error) {
	p := &PLDProfile{Steps: T, GridStep: h}
	for _, s := range a.step(h) {
		c, err := composeStep(s, T, a.opt.TailMass)
		if err != nil {
			return nil, err
		}
		p.dirs = append(p.dirs, c)
		p.WindowSize = max(p.WindowSize, len(c.pess.A))
	}
	return p, nil
}

// Profile returns the profile of T ≥ 1 compositions (cached per T).
func (a *PLDAccountant) Profile(T int) (*PLDProfile, error) {
	if T < 1 {
		return nil, fmt.Errorf("Steps: the PLD profile needs T ≥ 1, got %d", T)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.profiles[T]; ok {
		return p, nil
	}
	h := a.h0
	var p *PLDProfile
	for i := 0; ; i++ {
		q, err := a.compose(T, h)
		if err != nil {
			if p != nil { // a finer grid would not fit: keep the last one
				break
			}
			return nil, err
		}
		p = q
		if a.opt.GridStep > 0 || i == pldRefinement || p.Gap(a.opt.ReferenceDelta) <= a.opt.GapTarget ||
			h/2 < pldMinStep || (a.hi-a.lo)/(h/2) > pldMaxCells {
			break
		}
		h /= 2
	}
	if len(a.profiles) >= 256 {
		clear(a.profiles)
	}
	a.profiles[T] = p
	return p, nil
}

// sgmPLDKey identifies a cached accountant.
type sgmPLDKey struct {
	s    Sampling
	adj  Adjacency
	q, z float64
	opt  PLDOptions
}

var (
	sgmPLDMu    sync.Mutex
	sgmPLDCache = map[sgmPLDKey]*PLDAccountant{}
)

// PLD returns the PLD accountant of one step of the mechanism under the
// given adjacency, with the given options (nil: defaults). Accountants are
// cached per (Sampling, adjacency, q, z, options), so the release points of
// one audit share the discretised step. For sampling without replacement
// under add/remove, Rate must be b/n of the larger of the two datasets;
// b/n of the dataset at hand is conservative for both neighbours.
func (m SGM) PLD(adj Adjacency, opt *PLDOptions) (*PLDAccountant, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if adj != AdjacencyReplaceOne && adj != AdjacencyAddRemove {
		return nil, fmt.Errorf("adjacency: must be AdjacencyReplaceOne or AdjacencyAddRemove, got %v", adj)
	}
	var o PLDOptions
	if opt != nil {
		o = *opt
	}
	key := sgmPLDKey{m.Sampling, adj, m.Rate, m.NoiseMultiplier, o}
	sgmPLDMu.Lock()
	defer sgmPLDMu.Unlock()
	if a, ok := sgmPLDCache[key]; ok {
		return a, nil
	}
	a, err := newPLDAccountant(sgmPairs(m.Sampling, adj, m.Rate, m.NoiseMultiplier), o)
	if err != nil {
		return nil, err
	}
	if len(sgmPLDCache) >= 64 {
		clear(sgmPLDCache)
	}
	sgmPLDCache[key] = a
	return a, nil
}
