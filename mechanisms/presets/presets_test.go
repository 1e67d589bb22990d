package presets_test

import (
	"errors"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/presets"
	"gonum.org/v1/gonum/mat"
)

// The presets carry the settings the papers state: Räisä et al. §4.1
// (a = 20, σ₀ = 1000, σ₁² = 2000, σ₂² = 2500) and Heikkilä et al. §4
// (σ₁² = 10, σ₂² = 1, σ_x² = 2); both pass their model's check.
func TestPaperSettings(t *testing.T) {
	b := presets.RaisaBanana()
	if b.A != 20 || math.Sqrt(b.PriorVar) != 1000 || b.Var1 != 2000 || b.Var2 != 2500 {
		t.Errorf("RaisaBanana = %+v", b)
	}
	if err := b.Check(); err != nil {
		t.Error(err)
	}
	m := presets.HeikkilaMixture()
	if m.Var1 != 10 || m.Var2 != 1 || m.VarX != 2 {
		t.Errorf("HeikkilaMixture = %+v", m)
	}
	if err := m.Check(); err != nil {
		t.Error(err)
	}
}

// RaisaCovariance: the same seed gives the same matrix, symmetric and
// positive definite; bad sizes and shapes are refused naming the field.
func TestRaisaCovariance(t *testing.T) {
	a, err := presets.RaisaCovariance(6, 0.5, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := presets.RaisaCovariance(6, 0.5, 7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different matrices")
		}
		if a[i] != a[(i%6)*6+i/6] {
			t.Fatal("not symmetric")
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(6, a)) {
		t.Error("not positive definite")
	}
	for _, c := range []struct {
		d     int
		shape float64
		want  string
	}{{0, 0.5, "d"}, {1001, 0.5, "d"}, {3, 0, "shape"}, {3, math.Inf(1), "shape"}} {
		_, err := presets.RaisaCovariance(c.d, c.shape, 1)
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Path.Go() != c.want {
			t.Errorf("RaisaCovariance(%d, %g): error %v, want one naming %s", c.d, c.shape, err, c.want)
		}
	}
}
