package canary

import (
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// benchCraft times CraftCanary on the digits for an ensemble of 20 SGLD
// draws (trained once, outside the timing), pixels kept in [0, 1].
func benchCraft(b *testing.B, m mechanisms.Classifier, epochs int) {
	d, err := dataset.ReadCSVFile(digitsPath, dataset.DigitsOptions())
	if err != nil {
		b.Fatal(err)
	}
	tr, _, err := dataset.StratifiedSplit(d, 10, 0.2, 1)
	if err != nil {
		b.Fatal(err)
	}
	thetas := trainEnsemble(b, m, tr, 20, epochs)
	agreed, err := AgreedRecords(m, thetas, tr, true)
	if err != nil || len(agreed) == 0 {
		b.Fatal(err)
	}
	opts := Options{Clamp: true, Upper: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Craft(m, thetas, tr, agreed[i%len(agreed)], opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCraftCanarySoftmax: exact canary for 20 softmax models.
func BenchmarkCraftCanarySoftmax(b *testing.B) {
	benchCraft(b, mechanisms.Softmax{Features: 64, Classes: 10, Alpha: 1}, 5)
}

// BenchmarkCraftCanaryMLP: iterative canary for 20 MLPs (64-16-10).
func BenchmarkCraftCanaryMLP(b *testing.B) {
	benchCraft(b, mechanisms.MLP{Features: 64, Hidden: 16, Classes: 10, Alpha: 1}, 10)
}

// BenchmarkAgreedRecords: agreement of 20 softmax models over 1,438 records.
func BenchmarkAgreedRecords(b *testing.B) {
	d, err := dataset.ReadCSVFile(digitsPath, dataset.DigitsOptions())
	if err != nil {
		b.Fatal(err)
	}
	m := mechanisms.Softmax{Features: 64, Classes: 10, Alpha: 1}
	thetas := trainEnsemble(b, m, d, 20, 2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		AgreedRecords(m, thetas, d, true)
	}
}
