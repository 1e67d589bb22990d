package radix

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Sort agrees with slices.Sort on keys of every shape the audits make:
// full 64-bit keys, keys sharing their low bits (float32 values widened),
// keys sharing their high bits, many ties, and sizes on both sides of the
// small-input cut-off.
func TestSortAgreesWithSlicesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var tmp []uint64
	for _, n := range []int{0, 1, 2, 511, 512, 513, 4097, 100_000} {
		for shape := range 7 {
			keys := make([]uint64, n)
			for i := range keys {
				switch shape {
				case 0:
					keys[i] = rng.Uint64()
				case 1:
					keys[i] = rng.Uint64() &^ (1<<29 - 1)
				case 2:
					keys[i] = 0xabc<<52 | rng.Uint64()>>20
				case 3:
					keys[i] = uint64(rng.IntN(7)) << 40
				case 4: // full-precision scores: wide span, ties in the top bits resolved below
					keys[i] = FloatKey(4.123456789 + float64(float32(3*rng.NormFloat64())))
				case 5: // crowded: most keys share their top 33 varying bits, a few outliers widen the span
					keys[i] = 1<<62 | uint64(rng.IntN(1<<20))
					if rng.IntN(100) == 0 {
						keys[i] = rng.Uint64()
					}
				default: // long runs of ties in the top bits, each of 2 to 40 keys
					keys[i] = uint64(rng.IntN(n/20+1))<<40 | uint64(rng.IntN(1<<20))
				}
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			tmp = Sort(keys, tmp)
			if !slices.Equal(keys, want) {
				t.Fatalf("n %d, shape %d: not sorted as slices.Sort sorts", n, shape)
			}
		}
	}
}

func BenchmarkSort(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]uint64, 250_000)
	for i := range src {
		src[i] = FloatKey(4.123456789 + float64(float32(3*rng.NormFloat64())))
	}
	w := make([]uint64, len(src))
	var tmp []uint64
	for b.Loop() {
		copy(w, src)
		tmp = Sort(w, tmp)
	}
}

// FloatKey orders floats as < does, with −0 and +0 one key, across signs,
// zeros, subnormals and infinities.
func TestFloatKeyOrder(t *testing.T) {
	vals := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, math.Copysign(0, -1), 0,
		math.SmallestNonzeroFloat64, 1e-300, 1, 2, math.MaxFloat64, math.Inf(1)}
	for i, a := range vals {
		for _, b := range vals[i:] {
			ka, kb := FloatKey(a), FloatKey(b)
			if (a < b) != (ka < kb) || (a == b) != (ka == kb) {
				t.Errorf("%g, %g: keys %x, %x do not keep their order", a, b, ka, kb)
			}
		}
	}
	for _, v := range vals {
		if back := KeyFloat(FloatKey(v)); back != v || (v != 0 && math.Signbit(back) != math.Signbit(v)) {
			t.Errorf("KeyFloat(FloatKey(%g)) = %g", v, back)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 10000 {
		a, b := rng.NormFloat64()*1e3, rng.NormFloat64()*1e-3
		if (a < b) != (FloatKey(a) < FloatKey(b)) {
			t.Fatalf("%g, %g: order lost", a, b)
		}
	}
}

// Sort32 agrees with slices.Sort, and Float32Key orders float32 values as
// < does (±0 one key) and Key32Float inverts it.
func TestSort32AndFloat32Keys(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var tmp []uint32
	for _, n := range []int{0, 1, 511, 512, 10_000} {
		keys := make([]uint32, n)
		for i := range keys {
			keys[i] = Float32Key(float32(rng.NormFloat64() * 3))
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		tmp = Sort32(keys, tmp)
		if !slices.Equal(keys, want) {
			t.Fatalf("n %d: Sort32 differs from slices.Sort", n)
		}
	}
	vals := []float32{float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 0,
		math.SmallestNonzeroFloat32, 1, math.MaxFloat32, float32(math.Inf(1))}
	for i, a := range vals {
		if back := Key32Float(Float32Key(a)); back != a {
			t.Errorf("Key32Float(Float32Key(%g)) = %g", a, back)
		}
		for _, b := range vals[i:] {
			if (a < b) != (Float32Key(a) < Float32Key(b)) || (a == b) != (Float32Key(a) == Float32Key(b)) {
				t.Errorf("%g, %g: keys out of order", a, b)
			}
		}
	}
}

func BenchmarkSort32(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]uint32, 250_000)
	for i := range src {
		src[i] = Float32Key(float32(rng.NormFloat64()))
	}
	w := make([]uint32, len(src))
	var tmp []uint32
	for b.Loop() {
		copy(w, src)
		tmp = Sort32(w, tmp)
	}
}

// Slot places positives from 0 and negatives from pos, each in order.
func TestSlot(t *testing.T) {
	labels := []int{1, 0, 0, 1, 0, 1, 1, 0}
	pos, ip, in := 4, 0, 0
	var got []int
	for _, b := range labels {
		got = append(got, Slot(pos, ip, in, b))
		ip, in = ip+b, in+1-b
	}
	if want := []int{0, 4, 5, 1, 6, 2, 3, 7}; !slices.Equal(got, want) {
		t.Fatalf("slots %v, want %v", got, want)
	}
}

// MedianKey is the key at rank ⌊n/2⌋ of the two sorted slices together:
// against sorting them together, with ties, one side empty, and the sides
// apart.
func TestMedianKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		na, nb := rng.IntN(40), rng.IntN(40)
		if na+nb == 0 {
			nb = 1
		}
		levels := uint64(1 + rng.IntN(60))
		a, b := make([]uint64, na), make([]uint64, nb)
		for i := range a {
			a[i] = rng.Uint64N(levels)
		}
		for i := range b {
			b[i] = rng.Uint64N(levels) + uint64(trial%3)*levels // apart for a third
		}
		slices.Sort(a)
		slices.Sort(b)
		all := slices.Sorted(slices.Values(append(slices.Clone(a), b...)))
		if got, want := MedianKey(a, b), all[len(all)/2]; got != want {
			t.Fatalf("trial %d: MedianKey(%v, %v) = %d, want %d", trial, a, b, got, want)
		}
	}
}
