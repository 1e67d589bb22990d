// Command fig1floor does only the work that any implementation of the
// fig1-exact audit (testdata/fig1-exact.yaml) has to do, in plain Go, so
// that bench/compare.py can show how far the tool is from it:
//
//   - per run, the same variates as the tool's exact sampler: a fair coin
//     for the side, on D2 the special record's position r (uniform on
//     1..n), the starting fluctuation and one normal per release (15 or 16
//     draws), each run from its own PCG generator seeded by SplitMix64 as
//     the tool seeds its trials;
//   - the same products: the Gaussian AR(1) of the fluctuation between
//     releases and the release θ = μ_K (− d_r(K) on D2) + fluctuation,
//     stored as float32 like the tool's feature store;
//   - per release, one sort of its values (all runs, with their side in
//     the lowest bit), by a least-significant-digit radix sort on 32-bit
//     keys, and one pass over the sorted values counting each side below
//     every split (what a threshold scan reads).
//
// It leaves out what the tool adds beyond that: the Clopper–Pearson tables
// and bounds, the held-out evaluation, the descriptive statistics, the
// exact ε of every release, checkpoints and reports. The release means and
// transitions come from closedform, as the tool's do (computed once, a few
// microseconds). It runs on one goroutine; the tool's CPU time is compared
// with this program's, not their wall times.
//
// Usage: go run ./bench/fig1floor [-runs N] [-seed S]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/mcmcaudit/mcmcaudit/closedform"
)

// The setting of testdata/fig1-exact.yaml.
const (
	n      = 17864389
	alpha  = 2.0
	beta   = 1.0
	xh     = 1.8
	c      = 2e7
	epochs = 70
	every  = 5
)

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// key maps a float32 to a uint32 whose unsigned order is the float's
// order, with the side in the lowest bit (one bit of mantissa given up:
// the floor needs the work, not the last bit).
func key(v float32, side uint32) uint32 {
	b := math.Float32bits(v)
	if b>>31 == 1 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return b&^1 | side
}

// radixSort sorts keys by three passes of 11 bits (tmp: scratch).
func radixSort(keys, tmp []uint32) {
	var hist [3][1 << 11]int32
	for _, k := range keys {
		hist[0][k&0x7ff]++
		hist[1][(k>>11)&0x7ff]++
		hist[2][k>>22]++
	}
	src, dst := keys, tmp
	for d := range 3 {
		var sum int32
		h := &hist[d]
		for i := range h {
			h[i], sum = sum, sum+h[i]
		}
		shift := uint(11 * d)
		for _, k := range src {
			x := (k >> shift) & 0x7ff
			dst[h[x]] = k
			h[x]++
		}
		src, dst = dst, src
	}
	copy(keys, src) // three passes: the result is in tmp
}

func main() {
	runs := flag.Int("runs", 1_000_000, "runs")
	seed := flag.Uint64("seed", 48, "seed")
	flag.Parse()
	t0 := time.Now()
	model := closedform.Counterexample{N: n, Alpha: alpha, Beta: beta, XH: xh, C: c}
	model.Eta = model.EtaScaled(1)
	var moments []closedform.Moments
	var trans []closedform.Transition
	prev := 0
	for k := every; k <= epochs; k += every {
		m, err := model.Moments(k)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		tr, err := model.Transition(k - prev)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		moments, trans = append(moments, m), append(trans, tr)
		prev = k
	}
	nr := len(moments)
	sd1 := make([]float64, nr)
	for k, tr := range trans {
		sd1[k] = math.Sqrt(tr.Var1)
	}
	priorSD := 1 / math.Sqrt(alpha)
	// values[k*runs+i] is run i's release k, as the feature store holds it.
	values := make([]float32, nr**runs)
	sides := make([]uint8, *runs)
	var pcg rand.PCG
	rng := rand.New(&pcg)
	for i := range *runs {
		pcg.Seed(splitmix(*seed^uint64(i)), splitmix(*seed^uint64(i)^0x632be59bd9b4e019))
		onD2 := rng.Uint64()>>63 == 1
		u := 0.0
		if onD2 {
			sides[i] = 1
			u = moments[0].U(1 + rng.IntN(n))
		}
		fl := priorSD * rng.NormFloat64()
		for k, m := range moments {
			tr := &trans[k]
			var th float64
			if onD2 {
				fl = tr.Factor2*fl + math.Sqrt(tr.VarConst+tr.VarSlope*u*u)*rng.NormFloat64()
				th = m.Mean - (m.DiffConst + m.DiffSlope*u) + fl
			} else {
				fl = tr.Factor1*fl + sd1[k]*rng.NormFloat64()
				th = m.Mean + fl
			}
			values[k**runs+i] = float32(th)
		}
	}
	keys := make([]uint32, *runs)
	tmp := make([]uint32, *runs)
	var check int64
	for k := range nr {
		for i, v := range values[k**runs : (k+1)**runs] {
			keys[i] = key(v, uint32(sides[i]))
		}
		radixSort(keys, tmp)
		// One pass counting each side below every split: the counts a
		// threshold scan reads.
		var below [2]int64
		best := int64(0)
		for _, kk := range keys {
			below[kk&1]++
			if d := below[0] - below[1]; d > best {
				best = d
			}
		}
		check += best
	}
	fmt.Printf("fig1 floor: %d runs, %d releases, %.2f s wall, checksum %d\n", *runs, nr, time.Since(t0).Seconds(), check)
}
