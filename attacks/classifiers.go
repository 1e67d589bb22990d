package attacks

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/sajari/regression"
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
		sel, _, err := ch.ChooseRules(col, d.Label, delta, confidence)
		if err != nil {
			return nil, err
		}
		if sel.Epsilon > bestEps {
			best, bestEps = j, sel.Epsilon
		}
	}
	return func(x []float64) float64 { return x[best] }, nil
}

// sajariMaxRows bounds the training sets given to sajari/regression, whose
// solver forms the full N×N orthogonal factor of the design matrix (O(N²)
// memory); larger sets are solved as the same least-squares problem by
// gonum's QR solve, which never forms that factor.
const sajariMaxRows = 2000

// LinearLS is the "simple linear classifier" of Heller & Fetaya §V: least
// squares regression of the labels coded ±1 (D′ = +1) on the standardized
// features with an intercept; the score is the fitted value.
type LinearLS struct{}

// Name implements Classifier.
func (LinearLS) Name() string { return NameLinear }

// Fit implements Classifier.
func (LinearLS) Fit(d *Data, _, _ float64) (Scorer, error) {
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

// leastSquares returns the intercept and coefficients of the regression of
// ±1 labels on the (standardized) features. Columns that are constant on
// the training runs carry no information and get coefficient 0; when the
// remaining columns are collinear, a vanishing ridge (1e-9·N on the normal
// equations) picks the minimum-norm-like solution instead of failing.
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
	sub := &Data{N: z.N, F: len(keep), X: make([]float64, 0, z.N*len(keep)), Label: z.Label}
	for i := 0; i < z.N; i++ {
		row := z.Row(i)
		for _, j := range keep {
			sub.X = append(sub.X, row[j])
		}
	}
	var c []float64
	var err error
	if wellConditioned(sub) {
		c, err = solveLeastSquares(sub)
	}
	if c == nil || err != nil {
		if c, err = ridgeLeastSquares(sub, 1e-9*float64(sub.N)); err != nil {
			return nil, err
		}
	}
	coef[0] = c[0]
	for k, j := range keep {
		coef[j+1] = c[k+1]
	}
	return coef, nil
}

// wellConditioned reports whether the design [1, X] has a condition
// number below 1e6 (its Gram matrix below 1e12), so that QR-based least
// squares is accurate; collinear features fail it.
func wellConditioned(z *Data) bool {
	k := z.F + 1
	g := mat.NewSymDense(k, nil)
	row := make([]float64, k)
	for i := 0; i < z.N; i++ {
		row[0] = 1
		copy(row[1:], z.Row(i))
		g.SymRankOne(g, 1, mat.NewVecDense(k, row))
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, false) {
		return false
	}
	v := eig.Values(nil)
	return v[0] > 1e-12*v[len(v)-1]
}

// solveLeastSquares solves the regression with sajari/regression on small
// training sets and gonum's QR on large ones; a degenerate design is an
// error.
func solveLeastSquares(z *Data) ([]float64, error) {
	if z.N < z.F+1 {
		return nil, fmt.Errorf("attacks: linear classifier needs at least %d training runs, got %d", z.F+1, z.N)
	}
	if z.N <= sajariMaxRows {
		var r regression.Regression
		for i := 0; i < z.N; i++ {
			r.Train(regression.DataPoint(pm1(z.Label[i]), append([]float64(nil), z.Row(i)...)))
		}
		if err := r.Run(); err != nil {
			return nil, fmt.Errorf("attacks: linear classifier: %w", err)
		}
		c := r.GetCoeffs()
		for _, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("attacks: linear classifier: degenerate features (collinear)")
			}
		}
		return c, nil
	}
	return qrLeastSquares(z)
}

// qrLeastSquares solves the same problem as solveLeastSquares with gonum's
// QR, without forming the N×N orthogonal factor.
func qrLeastSquares(z *Data) ([]float64, error) {
	a := mat.NewDense(z.N, z.F+1, nil)
	y := mat.NewVecDense(z.N, nil)
	for i := 0; i < z.N; i++ {
		a.Set(i, 0, 1)
		for j, v := range z.Row(i) {
			a.Set(i, j+1, v)
		}
		y.SetVec(i, pm1(z.Label[i]))
	}
	var qr mat.QR
	qr.Factorize(a)
	var c mat.VecDense
	if err := qr.SolveVecTo(&c, false, y); err != nil {
		return nil, fmt.Errorf("attacks: linear classifier: %w", err)
	}
	return c.RawVector().Data, nil
}

// ridgeLeastSquares solves (AᵀA + λI)w = Aᵀy (intercept unpenalised) by
// Cholesky: the fallback for collinear features.
func ridgeLeastSquares(z *Data, lambda float64) ([]float64, error) {
	k := z.F + 1
	ata := mat.NewSymDense(k, nil)
	aty := make([]float64, k)
	row := make([]float64, k)
	for i := 0; i < z.N; i++ {
		row[0] = 1
		copy(row[1:], z.Row(i))
		ata.SymRankOne(ata, 1, mat.NewVecDense(k, row))
		for j, v := range row {
			aty[j] += v * pm1(z.Label[i])
		}
	}
	for j := 1; j < k; j++ {
		ata.SetSym(j, j, ata.At(j, j)+lambda)
	}
	var ch mat.Cholesky
	if !ch.Factorize(ata) {
		return nil, fmt.Errorf("attacks: linear classifier: degenerate features")
	}
	var w mat.VecDense
	if err := ch.SolveVecTo(&w, mat.NewVecDense(k, aty)); err != nil {
		return nil, err
	}
	return w.RawVector().Data, nil
}

// Logistic is L2-regularised logistic regression on the standardized
// features (penalty 1e-4·‖w‖², which keeps separable training sets finite),
// fitted by L-BFGS (gonum/optimize); the score is the linear predictor.
type Logistic struct{}

// Name implements Classifier.
func (Logistic) Name() string { return NameLogistic }

// Fit implements Classifier.
func (Logistic) Fit(d *Data, _, _ float64) (Scorer, error) {
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
