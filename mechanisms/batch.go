package mechanisms

import (
	"fmt"
	"math"
	"sync"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BatchGradModel is implemented by models that sum the log-likelihood
// gradients of a minibatch as matrix products, never materialising one
// record's gradient. SGLD uses it when the model offers it; the sum is
// the one record-by-record GradLogLik calls give, up to the rounding of a
// different summation order inside the products.
type BatchGradModel interface {
	Model
	// NewGradBatch returns a workspace that processes minibatches in
	// blocks of at most rows records (any minibatch length is accepted).
	// A workspace belongs to one goroutine.
	NewGradBatch(rows int) GradBatch
}

// GradBatch sums the (optionally clipped) log-likelihood gradients of
// minibatches; it is a workspace whose methods allocate nothing.
type GradBatch interface {
	// SumGradLogLik writes Σ_{i∈batch} clip(∇_θ ln p(recs[i] | θ)) into
	// sum (overwriting it), where clip(g) = g / max(1, ‖g‖/clip) when
	// clip > 0 (the per-example clipping of Heller & Fetaya eq. 66) and
	// g itself otherwise, and returns the number of gradients clipped.
	SumGradLogLik(theta []float64, recs []dataset.Record, batch []int, clip float64, sum []float64) (clipped int)
}

// BatchClassifier is implemented by classifiers that compute the logits of
// many records at once as matrix products.
type BatchClassifier interface {
	Classifier
	// BatchLogitsScratch is the scratch length BatchLogits needs for n
	// records.
	BatchLogitsScratch(n int) int
	// BatchLogits writes the logits of the n records of x (n×DataDim,
	// row-major) into f (n×NumClasses, row-major).
	BatchLogits(theta, x []float64, n int, f, scratch []float64)
}

// blasImpl is gonum's own BLAS, used directly rather than through
// blas64's replaceable global so that results never depend on which
// implementation a program registered.
var blasImpl gonum.Implementation

// Tile bounds of gemm: gonum's Dgemm runs a product whose C spans at least
// four 64×64 blocks on GOMAXPROCS goroutines, which would compete with the
// audit's own workers; a tile of at most 64 rows and 192 columns spans at
// most three and stays on the calling goroutine.
const (
	gemmTileRows = 64
	gemmTileCols = 192
)

// gemm computes C = op(A)·op(B) + beta·C for row-major matrices, where
// op(A) is m×k (A itself, or Aᵀ stored k×m when tA) and op(B) is k×n (B,
// or Bᵀ stored n×k when tB). C is computed in tiles (see gemmTileRows);
// tiling never splits the sum over k, so every entry is summed in the
// order of one whole product.
func gemm(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	// The two shapes of the minibatch gradients run as one matrix–vector
	// product per row of C (C = A·Bᵀ: logits and pre-activations) and one
	// rank-1 update per row of A (C += Aᵀ·B: the sums of outer products).
	// At these sizes (32 × 64 × 10) gonum's Dgemv and Dger kernels, which
	// block over several rows of the matrix, are 1.5× faster than dot or
	// axpy calls per entry and avoid Dgemm's per-call setup. A rank-1
	// update adds r·x to each entry exactly as an axpy does, so the sums
	// of outer products keep their bits; a row of logits is summed in
	// Dgemv's order.
	switch {
	case !tA && tB && (beta == 0 || beta == 1):
		for i := 0; i < m; i++ {
			blasImpl.Dgemv(blas.NoTrans, n, k, 1, b, ldb, a[i*lda:i*lda+k], 1, beta, c[i*ldc:i*ldc+n], 1)
		}
		return
	case tA && !tB && beta == 1:
		for l := 0; l < k; l++ {
			blasImpl.Dger(m, n, 1, a[l*lda:l*lda+m], 1, b[l*ldb:l*ldb+n], 1, c, ldc)
		}
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	for i0 := 0; i0 < m; i0 += gemmTileRows {
		mi := min(gemmTileRows, m-i0)
		ai := a[i0*lda:]
		if tA {
			ai = a[i0:]
		}
		for j0 := 0; j0 < n; j0 += gemmTileCols {
			nj := min(gemmTileCols, n-j0)
			bj := b[j0:]
			if tB {
				bj = b[j0*ldb:]
			}
			blasImpl.Dgemm(ta, tb, mi, nj, k, 1, ai, lda, bj, ldb, beta, c[i0*ldc+j0:], ldc)
		}
	}
}

// gather copies the features of recs[idx[r]] into row r of x (width d).
func gather(x []float64, recs []dataset.Record, idx []int, d int) {
	for r, i := range idx {
		copy(x[r*d:(r+1)*d], recs[i].X)
	}
}

// addRow adds v to every row of the n×len(v) row-major matrix f.
func addRow(f []float64, n int, v []float64) {
	w := len(v)
	for r := 0; r < n; r++ {
		row := f[r*w : (r+1)*w]
		for c, x := range v {
			row[c] += x
		}
	}
}

// scoreRows is the number of test records a Scorer scores per product
// (a test set of up to 1024 records is one product), which bounds its
// scratch memory.
const scoreRows = 1024

// TestSet is a labelled dataset packed for scoring many parameter vectors
// of one classifier: the features as one row-major matrix, the labels as
// class indices. It is immutable and shared by goroutines; each goroutine
// scores through a Scorer of its own.
type TestSet struct {
	c    Classifier
	x    []float64
	y    []int
	n, d int
}

// NewTestSet packs d for scoring with c; the labels must be class indices
// of c.
func NewTestSet(c Classifier, d *dataset.Dataset) (*TestSet, error) {
	if err := d.Validate(c.DataDim()); err != nil {
		return nil, err
	}
	k := c.NumClasses()
	ts := &TestSet{c: c, n: d.Len(), d: c.DataDim(), x: make([]float64, d.Len()*c.DataDim()), y: make([]int, d.Len())}
	for i, r := range d.Records {
		y, ok := dataset.ClassIndex(r.Y, k)
		if !ok {
			return nil, fmt.Errorf("test set %s: record %d has label %g, not a class index in [0, %d)", d.Name, i, r.Y, k)
		}
		ts.y[i] = y
		copy(ts.x[i*ts.d:], r.X)
	}
	return ts, nil
}

// Len is the number of records.
func (ts *TestSet) Len() int { return ts.n }

// Scorer counts the test records a parameter vector classifies correctly,
// scoring blocks of records as one product each (for a BatchClassifier)
// with scratch memory of its own: one Scorer per goroutine, no allocation
// per call.
type Scorer struct {
	ts         *TestSet
	f, scratch []float64
	bc         BatchClassifier
}

// NewScorer returns a Scorer of ts for one goroutine.
func (ts *TestSet) NewScorer() *Scorer {
	rows := min(ts.n, scoreRows)
	s := &Scorer{ts: ts, f: make([]float64, rows*ts.c.NumClasses())}
	if bc, ok := ts.c.(BatchClassifier); ok {
		s.bc = bc
		s.scratch = make([]float64, bc.BatchLogitsScratch(rows))
	}
	return s
}

// Correct returns the number of test records whose most probable class
// under θ (the smallest index among ties, as PredictClass) is their label.
func (s *Scorer) Correct(theta []float64) int {
	ts, k := s.ts, s.ts.c.NumClasses()
	correct := 0
	for r0 := 0; r0 < ts.n; r0 += scoreRows {
		nr := min(scoreRows, ts.n-r0)
		f := s.f[:nr*k]
		x := ts.x[r0*ts.d : (r0+nr)*ts.d]
		if s.bc != nil {
			s.bc.BatchLogits(theta, x, nr, f, s.scratch)
		} else {
			for r := 0; r < nr; r++ {
				ts.c.Logits(theta, x[r*ts.d:(r+1)*ts.d], f[r*k:(r+1)*k])
			}
		}
		for r := 0; r < nr; r++ {
			if argmaxOf(f[r*k:(r+1)*k]) == ts.y[r0+r] {
				correct++
			}
		}
	}
	return correct
}

// LogLikSet holds labelled records packed for computing their
// log-likelihoods under many parameter vectors of a BatchClassifier: the
// logits of a block of records as one product (BatchLogits, the kernels of
// the samplers' minibatch gradients), then each row's log-softmax with
// fastExp. The products sum in another order than Classifier.Logits and
// the exponentials are within 2 ulp of math.Exp's, so a value can differ
// from Model.LogLik's in its last bits (TestLogLikSetMatchesLogLik). Safe for concurrent use: each call takes a Scorer from a pool.
type LogLikSet struct {
	ts   *TestSet
	pool sync.Pool
}

// NewLogLikSet packs recs (labels: class indices of c) for LogLiks.
func NewLogLikSet(c BatchClassifier, recs []dataset.Record) (*LogLikSet, error) {
	ts, err := NewTestSet(c, &dataset.Dataset{Name: "canaries", Records: recs})
	if err != nil {
		return nil, err
	}
	l := &LogLikSet{ts: ts}
	l.pool.New = func() any { return ts.NewScorer() }
	return l, nil
}

// Len is the number of records.
func (l *LogLikSet) Len() int { return l.ts.n }

// LogLiks writes ln p(y_i | x_i, θ) of record i into out[i] (len Len()).
func (l *LogLikSet) LogLiks(theta, out []float64) {
	s := l.pool.Get().(*Scorer)
	defer l.pool.Put(s)
	ts, k := s.ts, s.ts.c.NumClasses()
	for r0 := 0; r0 < ts.n; r0 += scoreRows {
		nr := min(scoreRows, ts.n-r0)
		f := s.f[:nr*k]
		s.bc.BatchLogits(theta, ts.x[r0*ts.d:(r0+nr)*ts.d], nr, f, s.scratch)
		for r := 0; r < nr; r++ {
			out[r0+r] = logSoftmaxFast(f[r*k:(r+1)*k], ts.y[r0+r])
		}
	}
}

// logSoftmaxFast is logSoftmaxAt with fastExp (within 2 ulp of math.Exp)
// for the exponentials: the same branches, the same order of sums.
func logSoftmaxFast(f []float64, y int) float64 {
	mx := f[0]
	for _, v := range f[1:] {
		mx = max(mx, v)
	}
	var s float64
	if f[y] == mx {
		for k, v := range f {
			if k != y {
				s += fastExp(v - mx)
			}
		}
		return -math.Log1p(s)
	}
	for _, v := range f {
		s += fastExp(v - mx)
	}
	return (f[y] - mx) - math.Log(s)
}
