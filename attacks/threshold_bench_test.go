package attacks

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/radix"
)

// BenchmarkChooseRules times both rule choices on m training runs (half on
// each side) for three signal strengths: "separated" (N(0,1) against
// N(5,1), where the capped search lost power), "overlap" (shift 1) and
// "null" (no signal, where every candidate ties at 0). Variants:
//
//   - exact: one Chooser reused over four score sets of the same size, as an
//     audit reuses it over release points (the Clopper–Pearson tables carry
//     over);
//   - exact-fresh: a new Chooser per call (tables and buffers rebuilt);
//   - old: the transcription of the previous capped search in
//     threshold_test.go (one closure sort of the scores, then per objective
//     a closure sort of all candidates and at most 4096 bound evaluations).
//     It allocates its buffers on every call where the old Chooser reused
//     some of them, so its allocation counts are an upper bound.
func BenchmarkChooseRules(b *testing.B) {
	shapes := []struct {
		name  string
		shift float64
	}{{"separated", 5}, {"overlap", 1}, {"null", 0}}
	for _, sh := range shapes {
		for _, m := range []int{10_000, 100_000, 500_000} {
			sets := make([][]float64, 4)
			var labels []bool
			for i := range sets {
				sets[i], labels = separated(m/2, sh.shift, uint64(11+i))
			}
			name := fmt.Sprintf("%s/m=%d", sh.name, m)
			b.Run(name+"/exact", func(b *testing.B) {
				var ch Chooser
				for _, s := range sets { // steady state: buffers grown, tables filled
					ch.ChooseRules(s, labels, 1e-3, 0.95)
				}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, _, err := ch.ChooseRules(sets[i%4], labels, 1e-3, 0.95); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/exact-fresh", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, _, err := ChooseRules(sets[i%4], labels, 1e-3, 0.95); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/old", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					sp := newOldSplits(sets[i%4], labels, 1e-3, 0.95)
					sp.best(regionObjective, 4096)
					sp.best(gdpObjective, 4096)
				}
			})
		}
	}
}

// BenchmarkSortKeys compares the radix sort of float keys with slices.Sort
// on the same keys, at 2.5·10⁵ keys (one side of a 5·10⁵-run training set).
func BenchmarkSortKeys(b *testing.B) {
	s, _ := separated(125_000, 1, 5)
	keys := make([]uint64, len(s))
	for i, v := range s {
		keys[i] = sortKey(v)
	}
	work := make([]uint64, len(keys))
	b.Run("radix", func(b *testing.B) {
		var tmp []uint64
		for b.Loop() {
			copy(work, keys)
			tmp = radix.Sort(work, tmp)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(work, keys)
			slices.Sort(work)
		}
	})
}
