package audit

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// StoreBytes is the size in bytes of the store an audit of n trials keeps
// from its simulation to the end of its analysis (Trials): every trial's
// features at every release point as float32 (n × points × features × 4),
// its side (1 byte), and, when the audit looks for repeated runs, its hash
// (8 bytes) and probe values (8 bytes each). It saturates at the largest
// int64 instead of overflowing.
func (a *Audit) StoreBytes(n int) int64 {
	per := 4*len(a.points)*len(a.features) + 1
	if a.opts.Repeats != RepeatsIgnored {
		per += 8 + 8*a.probes()
	}
	return mulBytes(n, per)
}

// analysisBytesPerValue is what the analysis of one release point holds
// beyond the store, per trial and feature: the features as float64
// columns, the attacks' scores, sort keys and labels. Measured on the
// built-in scenario (threshold attack, one feature): 29 MiB a release point
// at 10⁶ trials (a heap profile during the analysis).
const analysisBytesPerValue = 32

// MemoryBytes estimates the heap an audit of n trials holds at its peak:
// its store (StoreBytes) and the working memory of the release points
// analysed at once (one per worker, analysisBytesPerValue per trial and
// feature each). The audit never changes process-wide settings itself: a
// command sizes its memory limit by this estimate (cmd/audit). Attacks
// that hold more per trial than a threshold scan (logistic regression,
// QDA) exceed it; the limit's slack and its soft nature cover them.
func (a *Audit) MemoryBytes(n int) int64 {
	points := min(Workers(a.exec.Workers), len(a.points))
	work := mulBytes(n, analysisBytesPerValue*len(a.features)*points)
	store := a.StoreBytes(n)
	if store > math.MaxInt64-work {
		return math.MaxInt64
	}
	return store + work
}

// mulBytes is n·per, 0 for n ≤ 0, saturated at the largest int64.
func mulBytes(n, per int) int64 {
	if n <= 0 {
		return 0
	}
	b, ok := mechanisms.MulCount(n, per)
	if !ok {
		return math.MaxInt64
	}
	return int64(b)
}
