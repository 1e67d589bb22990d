package mechanisms

import (
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// splitmix64 is the finaliser of Steele, Lea & Flood's SplitMix64, used to
// turn structured seed tuples into well-mixed 64-bit words.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// TrialRNG returns the random source of one trial, a PCG generator seeded
// from (audit seed, side, trial index, stream) through SplitMix64, so that a
// trial's output depends only on these numbers — never on worker count,
// shard layout or resumption. Stream separates independent uses within a
// trial (0 for the sampler).
func TrialRNG(seed uint64, side dataset.Side, trial int, stream uint64) *rand.Rand {
	a := splitmix64(seed ^ splitmix64(uint64(side)+1))
	b := splitmix64(a ^ splitmix64(uint64(trial)+0x632be59bd9b4e019))
	c := splitmix64(b ^ splitmix64(stream+0x85157af5))
	return rand.New(rand.NewPCG(b, c))
}
