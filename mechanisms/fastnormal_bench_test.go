package mechanisms

import (
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// BenchmarkFastNormalFill650 fills a 650-element buffer (the digits
// softmax's parameter count) per iteration and reports ns per normal.
func BenchmarkFastNormalFill650(b *testing.B) {
	f := newFastNormal(TrialRNG(1, dataset.SideD, 0, 0))
	z := make([]float64, 650)
	for i := 0; i < b.N; i++ {
		f.fill(z)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/650, "ns/normal")
}

// BenchmarkFastNormalSlow times the slow path alone: draws that leave the
// rectangles (collected beforehand from the generator's own stream, so
// that the layers appear with their natural frequencies), each handed to
// normSlow from the state that followed it.
func BenchmarkFastNormalSlow(b *testing.B) {
	f := newFastNormal(TrialRNG(2, dataset.SideD, 0, 0))
	type draw struct {
		j int32
		i uint64
	}
	var ds []draw
	for len(ds) < 1<<14 {
		u := f.next()
		j, i := int32(u>>32), u&127
		if uint32(j+j>>31^j>>31) >= zigK[i] {
			ds = append(ds, draw{j, i})
		}
	}
	var s float64
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		d := ds[k&(1<<14-1)]
		s += f.normSlow(d.j, d.i)
	}
	if s == 42 {
		b.Log(s)
	}
}
