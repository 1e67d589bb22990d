package synthetic_test

import (
	"errors"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/presets"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/synthetic"
)

// Every generator refuses bad input with an error naming the field.
func TestGeneratorsRefuseBadInput(t *testing.T) {
	m := presets.HeikkilaMixture()
	b := presets.RaisaBanana()
	for _, c := range []struct {
		name string
		err  error
		want string // the Go path of the field
	}{
		{"linreg n", second(synthetic.LinReg(0, []float64{1}, 1, 1, 1)), "n"},
		{"linreg theta", second(synthetic.LinReg(5, nil, 1, 1, 1)), "thetaStar"},
		{"linreg beta", second(synthetic.LinReg(5, []float64{1}, 0, 1, 1)), "beta"},
		{"linreg x scale", second(synthetic.LinReg(5, []float64{1}, 1, math.Inf(1), 1)), "xScale"},
		{"logistic n", second(synthetic.Logistic(0, []float64{1}, 1, 1)), "n"},
		{"logistic x scale", second(synthetic.Logistic(5, []float64{1}, math.NaN(), 1)), "xScale"},
		{"banana n", second(synthetic.Banana(0, [2]float64{0, 3}, b, 1)), "n"},
		{"banana model", second(synthetic.Banana(5, [2]float64{0, 3}, mechanisms.Banana{A: 1, PriorVar: 1, Var1: 0, Var2: 1}, 1)), "Var1"},
		{"banana theta", second(synthetic.Banana(5, [2]float64{0, math.NaN()}, b, 1)), "theta[1]"},
		{"gauss n", second(synthetic.Gauss(0, []float64{0}, []float64{1}, 1)), "n"},
		{"gauss theta length", second(synthetic.Gauss(3, []float64{0, 0}, []float64{1}, 1)), "theta"},
		{"gauss theta finite", second(synthetic.Gauss(3, []float64{math.Inf(-1)}, []float64{1}, 1)), "theta[0]"},
		{"gauss cov", second(synthetic.Gauss(3, []float64{0, 0}, []float64{1, 2, 2, 1}, 1)), "cov"},
		{"mixture n", second(synthetic.Mixture(0, []float64{0, 1}, m, 1)), "n"},
		{"mixture theta length", second(synthetic.Mixture(5, []float64{0}, m, 1)), "theta"},
		{"mixture theta finite", second(synthetic.Mixture(5, []float64{0, math.NaN()}, m, 1)), "theta[1]"},
		{"mixture model", second(synthetic.Mixture(5, []float64{0, 1}, mechanisms.Mixture{Var1: 1, Var2: 0, VarX: 1}, 1)), "Var2"},
	} {
		var fe *field.Error
		if c.err == nil || !errors.As(c.err, &fe) {
			t.Errorf("%s: error %v, want one naming %s", c.name, c.err, c.want)
			continue
		}
		if got := fe.Path.Go(); got != c.want {
			t.Errorf("%s: error names %q, want %q (%v)", c.name, got, c.want, c.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// Gauss draws from N(θ, Σ): the sample means, variances and covariance of
// 40,000 draws are within 4.5 standard errors of θ and Σ (SEs estimated
// from the same sample: sqrt(var/n) for a mean, sqrt((m4 − var²)/n) for a
// variance or a mean of centred products). Power: drawing with the
// transpose of the Cholesky factor would give var x₂ = 0.41 instead of
// 0.5, about 25 SE off (SE ≈ sqrt(2·0.5²/40000) = 0.0035).
func TestGaussMoments(t *testing.T) {
	theta := []float64{1, -2}
	cov := []float64{1, 0.3, 0.3, 0.5}
	d, err := synthetic.Gauss(40000, theta, cov, 9)
	if err != nil {
		t.Fatal(err)
	}
	x0, x1 := make([]float64, d.Len()), make([]float64, d.Len())
	for k, r := range d.Records {
		x0[k], x1[k] = r.X[0], r.X[1]
	}
	m0, v0, sm0, sv0 := testutil.SampleMoments(x0)
	m1, v1, sm1, sv1 := testutil.SampleMoments(x1)
	prod := make([]float64, len(x0))
	for k := range prod {
		prod[k] = (x0[k] - m0) * (x1[k] - m1)
	}
	c, _, sc, _ := testutil.SampleMoments(prod)
	for _, chk := range []struct {
		what          string
		got, want, se float64
	}{
		{"mean x₁", m0, theta[0], sm0}, {"mean x₂", m1, theta[1], sm1},
		{"var x₁", v0, cov[0], sv0}, {"var x₂", v1, cov[3], sv1}, {"cov", c, cov[1], sc},
	} {
		if z := (chk.got - chk.want) / chk.se; math.Abs(z) > 4.5 {
			t.Errorf("%s = %.5g, want %.5g (%.1f SE off)", chk.what, chk.got, chk.want, z)
		}
	}
	again, _ := synthetic.Gauss(40000, theta, cov, 9)
	for k := range d.Records {
		if again.Records[k].X[0] != d.Records[k].X[0] || again.Records[k].X[1] != d.Records[k].X[1] {
			t.Fatal("same seed, different data")
		}
	}
}

// Each generator names its dataset by its kind, size and seed.
func TestDatasetNames(t *testing.T) {
	lin, _ := synthetic.LinReg(3, []float64{1}, 1, 1, 4)
	mix, _ := synthetic.Mixture(3, []float64{0, 1}, presets.HeikkilaMixture(), 4)
	for _, n := range []string{lin.Name, mix.Name} {
		if !strings.Contains(n, "(n=3, seed=4)") {
			t.Errorf("dataset name %q", n)
		}
	}
}
