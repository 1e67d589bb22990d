package attacks

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Scorer scores one feature vector: larger means "more like a run on D′"
// (the decision rule's orientation is chosen on training runs anyway).
type Scorer func(x []float64) float64

// Classifier is an attack: trained on labelled runs, it returns a Scorer.
type Classifier interface {
	Name() string
	// Fit trains on d; it must not keep references to d.
	Fit(d *Data, delta, confidence float64) (Scorer, error)
}

// Names of the built-in classifiers, as written in configs.
const (
	NameThreshold = "threshold"
	NameLinear    = "linear"
	NameLogistic  = "logistic"
	NameQDA       = "qda"
)

// ByName returns the built-in classifier with this name.
func ByName(name string) (Classifier, error) {
	switch name {
	case NameThreshold:
		return BestCoordinate{}, nil
	case NameLinear:
		return LinearLS{}, nil
	case NameLogistic:
		return Logistic{}, nil
	case NameQDA:
		return QDA{}, nil
	}
	return nil, fmt.Errorf("attacks: must be one of threshold, linear, logistic, qda, got %q", name)
}

// BestCoordinate is the best single-coordinate threshold attack: the score
// is one feature, the one whose best threshold gives the largest region
// bound on the training runs.
type BestCoordinate struct{}

// Name implements Classifier.
func (BestCoordinate) Name() string { return NameThreshold }

// Fit implements Classifier.
func (BestCoordinate) Fit(d *Data, delta, confidence float64) (Scorer, error) {
	if err := (BestCoordinate{}).CheckSize(d.N, d.F); err != nil {
		return nil, fmt.Errorf("attacks: %w", err)
	}
	if d.F == 1 {
		return func(x []float64) float64 { return x[0] }, nil
	}
	col := make([]float64, d.N)
	var ch Chooser
	best, bestEps := 0, -1.0
	for j := 0; j < d.F; j++ {
		for i := 0; i < d.N; i++ {
			col[i] = d.X[i*d.F+j]
		}
		if err := ch.Prepare(col, d.Label, delta, confidence); err != nil {
			return nil, err
		}
		sel := ch.Best(RegionObjective)
		if sel.Epsilon > bestEps {
			best, bestEps = j, sel.Epsilon
		}
	}
	return func(x []float64) float64 { return x[best] }, nil
}

// LinearLS is the "simple linear classifier" of Heller & Fetaya §V: least
// squares regression of the labels coded ±1 (D′ = +1) on the standardized
// features with an intercept; the score is the fitted value.
type LinearLS struct{}

// Name implements Classifier.
func (LinearLS) Name() string { return NameLinear }

// Fit implements Classifier.
func (LinearLS) Fit(d *Data, _, _ float64) (Scorer, error) {
	if err := (LinearLS{}).CheckSize(d.N, d.F); err != nil {
		return nil, fmt.Errorf("attacks: %w", err)
	}
	std := newStandardizer(d)
	z := std.transform(d)
	coef, err := leastSquares(z)
	if err != nil {
		return nil, err
	}
	buf := make([]float64, d.F)
	return func(x []float64) float64 {
		std.apply(x, buf)
		s := coef[0]
		for j, v := range buf {
			s += coef[j+1] * v
		}
		return s
	}, nil
}

func pm1(l bool) float64 {
	if l {
		return 1
	}
	return -1
}

// svdCutoff is the relative size below which a singular value of the
// linear attack's design is treated as zero.
const svdCutoff = 1e-6

// leastSquares returns the intercept and coefficients of the regression of
// ±1 labels on the (standardized) features: the minimum-norm least-squares
// solution over the well-determined directions: a thin SVD of the design
// [1, X] with singular values below 1e-6·σ_max treated as zero (truncated
// SVD; Golub & Van Loan, Matrix Computations, §5.5). Directions the
// training runs determine this poorly (a condition number above 10⁶) would
// only fit their noise. Columns that are constant on the training runs
// carry no information and get coefficient 0; collinear columns share
// their weight instead of failing.
func leastSquares(z *Data) ([]float64, error) {
	keep := make([]int, 0, z.F)
	for j := 0; j < z.F; j++ {
		first := z.X[j]
		for i := 1; i < z.N; i++ {
			if z.X[i*z.F+j] != first {
				keep = append(keep, j)
				break
			}
		}
	}
	coef := make([]float64, z.F+1)
	if len(keep) == 0 {
		return coef, nil // nothing varies: a constant score
	}
	k := len(keep) + 1
	a := mat.NewDense(z.N, k, nil)
	y := mat.NewVecDense(z.N, nil)
	for i := 0; i < z.N; i++ {
		row := z.Row(i)
		a.Set(i, 0, 1)
		for c, j := range keep {
			a.Set(i, c+1, row[j])
		}
		y.SetVec(i, pm1(z.Label[i]))
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, fmt.Errorf("attacks: linear classifier: the SVD of the design did not converge")
	}
	sv := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	tol := svdCutoff * sv[0]
	var uty mat.VecDense
	uty.MulVec(u.T(), y)
	w := make([]float64, k)
	for r, s := range sv {
		if s <= tol {
			break // singular values are in decreasing order
		}
		f := uty.AtVec(r) / s
		for c := range w {
			w[c] += v.At(c, r) * f
		}
	}
	coef[0] = w[0]
	for c, j := range keep {
		coef[j+1] = w[c+1]
	}
	return coef, nil
}

// Logistic is L2-regularised logistic regression on the standardized
// features (penalty 1e-4·‖w‖², which keeps separable training sets finite),
// fitted by L-BFGS (gonum/optimize); the score is the linear predictor.
type Logistic struct{}

// Name implements Classifier.
func (Logistic) Name() string { return NameLogistic }

// Fit implements Classifier.
func (Logistic) Fit(d *Data, _, _ float64) (Scorer, error) {
	if err := (Logistic{}).CheckSize(d.N, d.F); err != nil {
		return nil, fmt.Errorf("attacks: %w", err)
	}
	std := newStandardizer(d)
	z := std.transform(d)
	const lambda = 1e-4
	nf := float64(z.N)
	f := func(w []float64) float64 {
		var s float64
		for i := 0; i < z.N; i++ {
			eta := w[0] + dot(w[1:], z.Row(i))
			s -= mechanisms.LogSigmoid(pm1(z.Label[i]) * eta)
		}
		return s/nf + lambda*dot(w[1:], w[1:])
	}
	g := func(grad, w []float64) {
		for k := range grad {
			grad[k] = 0
		}
		for i := 0; i < z.N; i++ {
			y := pm1(z.Label[i])
			row := z.Row(i)
			// d/dη of −ln σ(yη) = −y·σ(−yη).
			c := -y * mechanisms.Sigmoid(-y*(w[0]+dot(w[1:], row))) / nf
			grad[0] += c
			for j, v := range row {
				grad[j+1] += c * v
			}
		}
		for j := 1; j < len(w); j++ {
			grad[j] += 2 * lambda * w[j]
		}
	}
	res, err := optimize.Minimize(optimize.Problem{Func: f, Grad: g}, make([]float64, z.F+1), nil, &optimize.LBFGS{})
	if err != nil && res == nil {
		return nil, fmt.Errorf("attacks: logistic regression: %w", err)
	}
	w := res.X
	buf := make([]float64, d.F)
	return func(x []float64) float64 {
		std.apply(x, buf)
		return w[0] + dot(w[1:], buf)
	}, nil
}

// QDA is the Gaussian likelihood-ratio attack: class-conditional Gaussians
// N(m₁, S₁) for D′ and N(m₀, S₀) for D fitted on the standardized training
// features (covariances shrunk by 1e-6·I for stability); the score is
// ln N(x; m₁, S₁) − ln N(x; m₀, S₀).
type QDA struct{}

// Name implements Classifier.
func (QDA) Name() string { return NameQDA }

// Fit implements Classifier.
func (QDA) Fit(d *Data, _, _ float64) (Scorer, error) {
	if err := (QDA{}).CheckSize(d.N, d.F); err != nil {
		return nil, fmt.Errorf("attacks: %w", err)
	}
	std := newStandardizer(d)
	z := std.transform(d)
	var gs [2]gaussFit
	for c := 0; c < 2; c++ {
		g, err := fitGauss(z, c == 1)
		if err != nil {
			return nil, err
		}
		gs[c] = g
	}
	buf := make([]float64, d.F)
	return func(x []float64) float64 {
		std.apply(x, buf)
		return gs[1].logPDF(buf) - gs[0].logPDF(buf)
	}, nil
}

type gaussFit struct {
	mean   []float64
	chol   mat.Cholesky
	logDet float64
}

func fitGauss(z *Data, label bool) (gaussFit, error) {
	f := z.F
	mean := make([]float64, f)
	n := 0
	for i := 0; i < z.N; i++ {
		if z.Label[i] == label {
			n++
			for j, v := range z.Row(i) {
				mean[j] += v
			}
		}
	}
	if n < 2 {
		return gaussFit{}, fmt.Errorf("attacks: qda needs at least 2 training runs per side, got %d", n)
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	cov := mat.NewSymDense(f, nil)
	diff := make([]float64, f)
	for i := 0; i < z.N; i++ {
		if z.Label[i] != label {
			continue
		}
		for j, v := range z.Row(i) {
			diff[j] = v - mean[j]
		}
		cov.SymRankOne(cov, 1/float64(n-1), mat.NewVecDense(f, diff))
	}
	for j := 0; j < f; j++ {
		cov.SetSym(j, j, cov.At(j, j)+1e-6)
	}
	g := gaussFit{mean: mean}
	if !g.chol.Factorize(cov) {
		return gaussFit{}, fmt.Errorf("attacks: qda: covariance of the %v runs is not positive definite", label)
	}
	g.logDet = g.chol.LogDet()
	return g, nil
}

func (g *gaussFit) logPDF(x []float64) float64 {
	diff := make([]float64, len(x))
	for j, v := range x {
		diff[j] = v - g.mean[j]
	}
	var sol mat.VecDense
	if err := g.chol.SolveVecTo(&sol, mat.NewVecDense(len(x), diff)); err != nil {
		return math.NaN()
	}
	return -0.5 * (dot(diff, sol.RawVector().Data) + g.logDet)
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
