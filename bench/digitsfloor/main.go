// Command digitsfloor is the floor of the digits-sgld audit's CPU time:
// the work that audit cannot avoid, written as a bare Go program with no
// assembly and none of the project's packages, so that the tool's CPU
// time can be read against it (tool/floor).
//
// It does what testdata/digits-sgld.yaml asks for, in the plainest loops:
//
//   - the 8×8 digits (testdata/digits.csv.gz, read with compress/gzip and
//     encoding/csv, pixels divided by 16), split once into 1,438 training
//     and 359 test records (a seeded shuffle; the tool's split is
//     stratified, with the same sizes);
//   - D is the training set and D′ is D with record 0 replaced by a canary
//     of the same shape: record 0's image with every pixel moved up by
//     0.1 and clamped to [0, 1], with record 0's label (the tool crafts its
//     canary by DeepFool, once per audit, a cost left out here);
//   - 1,000 runs, the first 500 on D and the others on D′, each SGLD on
//     Bayesian multinomial logistic regression (10 classes × 64 features +
//     10 biases, prior N(0, I/α), α = 0.1) from a draw of the prior: 20
//     epochs of minibatches of 32 over a fresh shuffle of the records per
//     epoch (45 steps, the last batch of 30), each step the logits
//     F = X·Wᵀ + b of its records, their softmax residuals e_y − p, the
//     gradient Σ (e_y − p) ⊗ (x, 1), the prior term −α·θ, and 650 standard
//     normal draws (math/rand/v2's NormFloat64 on a PCG source), with
//     θ ← θ + (η/2)(−α·θ + (n/|B|)·Σ∇) + √η·z, η = 0.01 (Welling & Teh
//     2011, eq. 4);
//   - after each epoch (a release), the four log-probability features
//     ln p(y|x) for the canary and record 0 under both their labels, and
//     the accuracy on the 359 test records.
//
// Left out, as small beside the runs: the canary's crafting (20 models
// trained once), the linear attack fitted on the 1000 × 20 × 4 features
// and its thresholds and bounds, and the reports. The program prints what
// it counted (runs, steps, normals) and a checksum of every feature and
// accuracy, so that no part of the work can be optimised away.
//
// Usage, from the repository root:
//
//	go build -o /tmp/digitsfloor ./bench/digitsfloor
//	/usr/bin/time -f '%U %S' /tmp/digitsfloor
package main

import (
	"compress/gzip"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
)

const (
	features = 64
	classes  = 10 // even: logits takes two classes at a time
	dim      = classes*features + classes
	alpha    = 0.1
	eta      = 0.01
	batch    = 32
	epochs   = 20
	testSize = 359
)

// record is one digit: its pixels in [0, 1] and its class.
type record struct {
	x [features]float64
	y int
}

func main() {
	path := flag.String("data", "testdata/digits.csv.gz", "the digits data (gzipped CSV: 64 pixels in 0…16, then the label)")
	runs := flag.Int("runs", 1000, "runs, half on D and half on D′")
	seed := flag.Uint64("seed", 2024, "seed of the runs' random numbers")
	flag.Parse()
	if *runs < 2 || *runs > 1e7 {
		fmt.Fprintf(os.Stderr, "digitsfloor: -runs: must be in [2, 1e7], got %d\n", *runs)
		os.Exit(2)
	}
	all, err := load(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "digitsfloor: -data:", err)
		os.Exit(2)
	}
	if len(all) <= testSize {
		fmt.Fprintf(os.Stderr, "digitsfloor: -data: %s: %d records, need more than %d\n", *path, len(all), testSize)
		os.Exit(2)
	}
	split := rand.New(rand.NewPCG(1, 1))
	split.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	test, train := all[:testSize], all[testSize:]
	canary := train[0]
	for j := range canary.x {
		canary.x[j] = min(canary.x[j]+0.1, 1)
	}
	trainPrime := append([]record(nil), train...)
	trainPrime[0] = canary
	probes := [2]record{canary, train[0]}

	s := newSampler(len(train))
	var sum float64
	var correct, steps int
	for run := 0; run < *runs; run++ {
		d := train
		if run >= *runs/2 {
			d = trainPrime
		}
		rng := rand.New(rand.NewPCG(*seed, uint64(run)))
		st, f, c := s.run(d, test, probes, rng)
		steps += st
		sum += f
		correct += c
	}
	fmt.Printf("runs %d, steps %d, normals %d, releases %d, test predictions %d correct of %d, checksum %.17g\n",
		*runs, steps, steps*dim+*runs*dim, *runs*epochs, correct, *runs*epochs*len(test), sum)
}

// load reads the gzipped digits CSV: 64 pixel values in 0…16, then the
// label, per line.
func load(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := csv.NewReader(z)
	r.FieldsPerRecord = features + 1
	var out []record
	for line := 1; ; line++ {
		row, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var rec record
		for j := 0; j <= features; j++ {
			v, err := strconv.ParseFloat(row[j], 64)
			if err != nil || v < 0 || v > 16 || (j == features && (v > classes-1 || v != math.Trunc(v))) {
				return nil, fmt.Errorf("%s: line %d, column %d: %q is not a pixel in [0, 16] or a label in 0…9", path, line, j+1, row[j])
			}
			if j < features {
				rec.x[j] = v / 16
			} else {
				rec.y = int(v)
			}
		}
		out = append(out, rec)
	}
}

// sampler holds one run's arrays, reused from run to run.
type sampler struct {
	theta, grad, noise []float64
	order              []int
	f                  [batch][classes]float64
}

func newSampler(n int) *sampler {
	return &sampler{theta: make([]float64, dim), grad: make([]float64, dim), noise: make([]float64, dim), order: make([]int, n)}
}

// run trains one chain on d and returns its step count, the sum of its
// releases' features, and its correct test predictions over all releases.
func (s *sampler) run(d, test []record, probes [2]record, rng *rand.Rand) (steps int, sum float64, correct int) {
	theta := s.theta
	sd0 := 1 / math.Sqrt(alpha)
	for i := range theta {
		theta[i] = sd0 * rng.NormFloat64()
	}
	for i := range s.order {
		s.order[i] = i
	}
	n := len(d)
	sd := math.Sqrt(eta)
	for e := 0; e < epochs; e++ {
		rng.Shuffle(n, func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
		for b0 := 0; b0 < n; b0 += batch {
			idx := s.order[b0:min(b0+batch, n)]
			s.gradient(d, idx)
			for i := range s.noise {
				s.noise[i] = rng.NormFloat64()
			}
			sc := float64(n) / float64(len(idx))
			for i, t := range theta {
				theta[i] = t + eta/2*(-alpha*t+sc*s.grad[i]) + sd*s.noise[i]
			}
			steps++
		}
		for _, p := range probes {
			var f [classes]float64
			logits(theta, &p.x, &f)
			sum += logSoftmax(&f, probes[0].y) + logSoftmax(&f, probes[1].y)
		}
		for i := range test {
			var f [classes]float64
			logits(theta, &test[i].x, &f)
			best := 0
			for c, v := range f {
				if v > f[best] {
					best = c
				}
			}
			if best == test[i].y {
				correct++
			}
		}
	}
	return steps, sum, correct
}

// gradient writes Σ_r (e_{y_r} − softmax(f_r)) ⊗ (x_r, 1) over the records
// idx of d into s.grad (the weights row by row, then the biases).
func (s *sampler) gradient(d []record, idx []int) {
	g := s.grad
	clear(g)
	for r, i := range idx {
		f := &s.f[r]
		logits(s.theta, &d[i].x, f)
		mx := f[0]
		for _, v := range f[1:] {
			mx = max(mx, v)
		}
		var z float64
		for c, v := range f {
			f[c] = math.Exp(v - mx)
			z += f[c]
		}
		for c := range f {
			f[c] = -f[c] / z
		}
		f[d[i].y]++
	}
	// Σ_r g_rc·x_rj for each class c and eight columns j at a time, the
	// eight sums kept in registers across the records (one store per
	// entry, not one per record) and independent of each other, so that
	// the additions overlap.
	for c := 0; c < classes; c++ {
		row := (*[features]float64)(g[c*features : (c+1)*features])
		for j := 0; j < features; j += 8 {
			a := (*[8]float64)(row[j : j+8])
			a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
			for r, i := range idx {
				gc, x := s.f[r][c], (*[8]float64)(d[i].x[j:j+8])
				a0 += gc * x[0]
				a1 += gc * x[1]
				a2 += gc * x[2]
				a3 += gc * x[3]
				a4 += gc * x[4]
				a5 += gc * x[5]
				a6 += gc * x[6]
				a7 += gc * x[7]
			}
			*a = [8]float64{a0, a1, a2, a3, a4, a5, a6, a7}
		}
		var b float64
		for r := range idx {
			b += s.f[r][c]
		}
		g[classes*features+c] = b
	}
}

// logits writes f_c = w_c·x + b_c, two classes at a time, each dot
// product in four partial sums (j mod 4): eight independent chains of
// additions keep the processor busy where one would wait on every add.
func logits(theta []float64, x *[features]float64, f *[classes]float64) {
	for c := 0; c < classes; c += 2 {
		w := (*[features]float64)(theta[c*features : (c+1)*features])
		v := (*[features]float64)(theta[(c+1)*features : (c+2)*features])
		var t0, t1, t2, t3, u0, u1, u2, u3 float64
		for j := 0; j < features; j += 4 {
			t0 += w[j] * x[j]
			t1 += w[j+1] * x[j+1]
			t2 += w[j+2] * x[j+2]
			t3 += w[j+3] * x[j+3]
			u0 += v[j] * x[j]
			u1 += v[j+1] * x[j+1]
			u2 += v[j+2] * x[j+2]
			u3 += v[j+3] * x[j+3]
		}
		f[c] = (t0 + t1) + (t2 + t3) + theta[classes*features+c]
		f[c+1] = (u0 + u1) + (u2 + u3) + theta[classes*features+c+1]
	}
}

// logSoftmax returns ln softmax(f)_y.
func logSoftmax(f *[classes]float64, y int) float64 {
	mx := f[0]
	for _, v := range f[1:] {
		mx = max(mx, v)
	}
	var z float64
	for _, v := range f {
		z += math.Exp(v - mx)
	}
	return f[y] - mx - math.Log(z)
}
