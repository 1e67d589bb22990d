package main

import (
	"math"
	"os"
	"runtime/debug"
)

// The command's memory policy. Garbage collection keeps Go's default
// target (GOGC 100: the heap may grow to twice what is live before a
// collection), which costs small runs nothing; a large audit's peak is
// held instead by a soft memory limit (runtime/debug.SetMemoryLimit) sized
// to the work once it is known: the audit's estimate of its peak heap
// (audit.Audit.MemoryBytes: the feature store and the analysis of one
// release point per worker) plus memSlack, never below memFloor.
//
// At 10⁶ runs of the built-in scenario (20 releases, one feature, two
// workers: an 81 MB store, 138 MiB estimated, 136 MiB live at the peak)
// the limit is 162 MiB: 15 collections and 176–184 MB resident at the
// peak, where GOGC 100 alone would let the heap grow to twice what is
// live. The earlier setting, GOGC 10 for every run, held the same peak
// (51 collections) but cost 30–45% more CPU at 3·10⁴ runs. The limit is
// soft: should the live heap exceed it (an attack holding far more per
// run than a threshold scan), the runtime collects more often but caps
// the collector's share of the CPU (about half) rather than fail.
// GOMEMLIMIT, when set, replaces the limit; GOGC still sets the target.
const (
	// memFloor is the least limit: below it no audit's heap at GOGC 100
	// is held back (a run whose store is small collects by GOGC alone).
	memFloor = 128 << 20
	// memSlack is the limit's part beyond the estimated heap: the
	// runtime's own memory (about 10 MiB), goroutine stacks, the
	// scenario's data, and room for garbage between two collections.
	memSlack = 24 << 20
)

// memoryLimit is the soft memory limit of a command whose heap peaks at
// about est bytes: est + memSlack, at least memFloor.
func memoryLimit(est int64) int64 {
	if est < 0 || est > math.MaxInt64-memSlack {
		return math.MaxInt64
	}
	return max(memFloor, est+memSlack)
}

// sizeMemory sets the process's memory limit for a heap estimated to peak
// at the given size (memoryLimit). It does nothing unless the process is the command
// (main, or a test's child that stands for it, sets it to
// setMemoryLimit): tests that call run in their own process keep their
// settings.
var sizeMemory = func(est int64) {}

// setMemoryLimit sets the memory limit for a heap estimated to peak at
// est bytes, unless the user set GOMEMLIMIT.
func setMemoryLimit(est int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(memoryLimit(est))
}
