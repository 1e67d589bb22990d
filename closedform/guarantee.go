package closedform

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Check is one assumption of a theorem, evaluated for a configuration.
type Check struct {
	// Name states the assumption, e.g. "γ < 2a/L²".
	Name string `json:"name"`
	// Holds reports whether the configuration satisfies it.
	Holds bool `json:"holds"`
	// Detail gives the numbers compared, e.g. "γ = 0.1, 2a/L² = 2".
	Detail string `json:"detail"`
}

// Guarantee is an upper bound on the privacy loss of one mechanism
// configuration, as given by one theorem. When Applies is false the
// theorem's assumptions fail (Reason says which) and Profile is nil.
type Guarantee struct {
	// Source cites the theorem, e.g. "Bertazzi et al. 2025, Thm 5.2".
	Source string `json:"source"`
	// Variant distinguishes the printed constant from a conservative
	// reading where the paper may contain a slip
	// (docs/derivations/paper-readings.md §1).
	Variant string `json:"variant,omitempty"`
	// Release says what output is covered: "final state", "path", …
	Release string `json:"release"`
	// Checks lists every assumption with the numbers compared.
	Checks  []Check `json:"checks"`
	Applies bool    `json:"applies"`
	Reason  string  `json:"reason,omitempty"`
	// Profile returns δ(ε) ∈ [0, 1] for ε ≥ 0: the mechanism is
	// (ε, Profile(ε))-DP for every ε. It is the whole privacy profile
	// certified by the theorem (1 where the theorem certifies nothing).
	Profile func(eps float64) float64 `json:"-"`
	// Spec is Profile as data — the accountant and the numbers it is
	// rebuilt from — so that a claim built on the guarantee can be written
	// to a file: Spec.Profile() equals Profile bit for bit at every ε. It
	// is nil where the profile is only Go code (a guarantee built by hand).
	Spec *ProfileSpec `json:"profile,omitempty"`
	// EpsilonAt, when set, gives ε(δ) in closed form; otherwise Epsilon
	// inverts Profile numerically.
	EpsilonAt func(delta float64) float64 `json:"-"`
	// RDP is the Rényi-DP curve when the theorem gives one, else nil.
	RDP stats.RDPCurve `json:"-"`
	// Note carries anything a reader needs, e.g. "order α = 27 used".
	// A note that states figures at some δ gives them at 1e-5; NoteAt
	// gives it at any δ.
	Note string `json:"note,omitempty"`
	// NoteAt, when set, returns the note with its figures at δ (Note is
	// NoteAt(1e-5)). Use NoteFor.
	NoteAt func(delta float64) string `json:"-"`
}

// NoteFor returns the note with its figures at δ: NoteAt(δ) when the note
// depends on δ, else Note.
func (g Guarantee) NoteFor(delta float64) string {
	if g.NoteAt != nil {
		return g.NoteAt(delta)
	}
	return g.Note
}

// appendNote adds text to the note, at every δ.
func (g *Guarantee) appendNote(text string) {
	g.Note += text
	if at := g.NoteAt; at != nil {
		g.NoteAt = func(delta float64) string { return at(delta) + text }
	}
}

// NotApplicable returns a Guarantee recording the failed checks.
func NotApplicable(source, variant, release string, checks []Check) Guarantee {
	g := Guarantee{Source: source, Variant: variant, Release: release, Checks: checks}
	for _, c := range checks {
		if !c.Holds {
			g.Reason = c.Name + " fails: " + c.Detail
			break
		}
	}
	return g
}

// allHold reports whether every check holds and, if not, the first failure.
func allHold(checks []Check) (bool, string) {
	for _, c := range checks {
		if !c.Holds {
			return false, c.Name + " fails: " + c.Detail
		}
	}
	return true, ""
}

// Epsilon returns the smallest ε ≥ 0 with Profile(ε) ≤ δ, or the closed
// form EpsilonAt(δ) when the theorem gives one. It is an error to ask a
// guarantee that does not apply.
func (g Guarantee) Epsilon(delta float64) (float64, error) {
	if !g.Applies {
		return math.NaN(), fmt.Errorf("%s does not apply: %s", g.Source, g.Reason)
	}
	if !(delta > 0 && delta < 1) {
		return math.NaN(), fmt.Errorf("delta: must be in (0, 1), got %g", delta)
	}
	if g.EpsilonAt != nil {
		return g.EpsilonAt(delta), nil
	}
	return InvertProfile(g.Profile, delta)
}

// InvertProfile returns the smallest ε ≥ 0 with profile(ε) ≤ δ for a
// non-increasing profile, which may jump and may be flat (a step profile
// such as the (ε₀, δ₀) claim, δ₀ for ε ≥ ε₀ and 1 below, inverts to ε₀
// exactly; a profile equal to δ on an interval inverts to the interval's
// left end). After bracketing the crossing by doubling, it bisects on the
// float64 bit patterns, which are ordered like the non-negative values, so it
// stops at two adjacent floats lo < hi with profile(lo) > δ ≥ profile(hi) and
// returns hi: at most 64 further evaluations, and no assumption of
// continuity. It returns +Inf when no finite ε reaches δ, and an error when
// the profile is NaN at a point it visits.
func InvertProfile(profile func(float64) float64, delta float64) (float64, error) {
	at := func(e float64) (bool, error) {
		v := profile(e)
		if math.IsNaN(v) {
			return false, fmt.Errorf("closedform: profile(%g) is NaN", e)
		}
		return v <= delta, nil
	}
	ok, err := at(0)
	if err != nil || ok {
		return 0, err
	}
	lo, hi := 0.0, 1.0
	for {
		if ok, err = at(hi); err != nil {
			return math.NaN(), err
		}
		if ok {
			break
		}
		lo = hi
		if hi *= 2; hi > 1e300 {
			return math.Inf(1), nil
		}
	}
	// Invariant: profile(lo) > δ ≥ profile(hi), 0 ≤ lo < hi.
	a, b := math.Float64bits(lo), math.Float64bits(hi)
	for b-a > 1 {
		m := a + (b-a)/2
		if ok, err = at(math.Float64frombits(m)); err != nil {
			return math.NaN(), err
		}
		if ok {
			b = m
		} else {
			a = m
		}
	}
	return math.Float64frombits(b), nil
}

// CommonFormProfile is the (ε, δ) family shared by the Girsanov-based
// bounds of Bertazzi et al. 2025 (Lemma 4.1; Props 4.5–4.6, Thms 5.2–5.8):
// ε_δ = C/4 + sqrt(C·ln(1/δ)) for every δ ∈ (0, 1), equivalently
// δ(ε) = exp(−(ε − C/4)²/C) for ε ≥ C/4 and 1 below.
func CommonFormProfile(c float64) func(float64) float64 {
	return func(eps float64) float64 {
		if eps <= c/4 {
			return 1
		}
		d := eps - c/4
		return math.Exp(-d * d / c)
	}
}
