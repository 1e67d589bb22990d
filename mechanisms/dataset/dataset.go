package dataset

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
)

// Record is one data point: a feature vector X and, for supervised models,
// a label Y (0 and unused for unsupervised ones).
type Record struct {
	X []float64 `json:"x" yaml:"x"`
	Y float64   `json:"y" yaml:"y"`
}

// Dataset is an ordered list of records.
type Dataset struct {
	Name    string
	Records []Record
	// Virtual, when > 0, is the size of a dataset too large to hold whose
	// law is known analytically (the interim-region counterexample at
	// n = 17,864,389): Records then lists its distinct records only, and
	// only analytical mechanisms accept it.
	Virtual int
}

// Len returns the number of records.
func (d *Dataset) Len() int {
	if d.Virtual > 0 {
		return d.Virtual
	}
	return len(d.Records)
}

// Validate checks that the dataset is non-empty, that every record has
// dim features and that every value is finite.
func (d *Dataset) Validate(dim int) error {
	if len(d.Records) == 0 {
		return fmt.Errorf("dataset %q: must have at least 1 record, got 0", d.Name)
	}
	for i, r := range d.Records {
		if len(r.X) != dim {
			return fmt.Errorf("dataset %q: record %d has %d features, the model needs %d", d.Name, i, len(r.X), dim)
		}
		for j, x := range r.X {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("dataset %q: record %d feature %d must be finite, got %g", d.Name, i, j, x)
			}
		}
		if math.IsNaN(r.Y) || math.IsInf(r.Y, 0) {
			return fmt.Errorf("dataset %q: record %d label must be finite, got %g", d.Name, i, r.Y)
		}
	}
	return nil
}

// Clone returns a deep copy of d.
func (d *Dataset) Clone() *Dataset {
	out := &Dataset{Name: d.Name, Records: make([]Record, len(d.Records))}
	for i, r := range d.Records {
		out.Records[i] = Record{X: append([]float64(nil), r.X...), Y: r.Y}
	}
	return out
}

// Adjacency names the neighbouring relation between two datasets.
type Adjacency string

const (
	// ReplaceOne: D′ is D with one record replaced (same size). All
	// scenarios of the papers use it.
	ReplaceOne Adjacency = "replace-one"
	// RemoveOne: D′ is D with one record removed.
	RemoveOne Adjacency = "remove-one"
	// AddOne: D′ is D with one record appended.
	AddOne Adjacency = "add-one"
)

// Pair is two adjacent datasets and how they differ.
type Pair struct {
	D, DPrime *Dataset
	Adjacency Adjacency
	// Index is the position of the differing record in D (for AddOne, its
	// position in D′).
	Index int
	// Note describes the construction, for reports.
	Note string
}

// Neighbour builds D′ from D under the given adjacency: for ReplaceOne it
// replaces record i by r, for RemoveOne it removes record i, for AddOne it
// appends r (i is ignored).
func Neighbour(d *Dataset, adj Adjacency, i int, r Record) (Pair, error) {
	out := d.Clone()
	out.Name = d.Name + "′"
	switch adj {
	case ReplaceOne:
		if i < 0 || i >= d.Len() {
			return Pair{}, field.Errorf(field.At("i", "index"), "must be in [0, %d], got %d", d.Len()-1, i)
		}
		out.Records[i] = Record{X: append([]float64(nil), r.X...), Y: r.Y}
	case RemoveOne:
		if i < 0 || i >= d.Len() {
			return Pair{}, field.Errorf(field.At("i", "index"), "must be in [0, %d], got %d", d.Len()-1, i)
		}
		if d.Len() < 2 {
			return Pair{}, field.Errorf(field.At("d", "dataset"), "remove-one needs at least 2 records, got %d", d.Len())
		}
		out.Records = append(out.Records[:i], out.Records[i+1:]...)
	case AddOne:
		out.Records = append(out.Records, Record{X: append([]float64(nil), r.X...), Y: r.Y})
		i = out.Len() - 1
	default:
		return Pair{}, field.Errorf(field.At("adj", "adjacency"), "must be one of replace-one, remove-one, add-one, got %q", adj)
	}
	return Pair{D: d, DPrime: out, Adjacency: adj, Index: i}, nil
}

// Canary returns the replace-one pair in which record i of d is replaced by
// the chosen outlier (the "canary"), the construction of Heller & Fetaya §V
// (D′ = D \ {(x⁰, y⁰)} ∪ {(x*, y*)}).
func Canary(d *Dataset, i int, canary Record) (Pair, error) {
	p, err := Neighbour(d, ReplaceOne, i, canary)
	if err != nil {
		return Pair{}, err
	}
	p.Note = fmt.Sprintf("record %d replaced by the canary (x = %v, y = %g)", i, canary.X, canary.Y)
	return p, nil
}

// CounterexamplePair returns Heller & Fetaya's datasets (eq. 8): D1 holds n
// copies of (x_h, c·x_h); D2 replaces one of them (the last) by
// (x_h/2, c·x_h/2).
func CounterexamplePair(n int, xh, c float64) (Pair, error) {
	if n < 1 {
		return Pair{}, field.Errorf(field.At("n", "n"), "must be ≥ 1, got %d", n)
	}
	if !(xh > 0) || math.IsInf(xh, 0) {
		return Pair{}, field.Errorf(field.At("xh", "xh"), "must be finite and > 0, got %g", xh)
	}
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return Pair{}, field.Errorf(field.At("c", "c"), "must be finite, got %g", c)
	}
	d := &Dataset{Name: "D1", Records: make([]Record, n)}
	for i := range d.Records {
		d.Records[i] = Record{X: []float64{xh}, Y: c * xh}
	}
	p, err := Neighbour(d, ReplaceOne, n-1, Record{X: []float64{xh / 2}, Y: c * xh / 2})
	if err != nil {
		return Pair{}, err
	}
	p.DPrime.Name = "D2"
	p.Note = fmt.Sprintf("Heller-Fetaya eq. 8: %d copies of (x_h, c x_h), one replaced by (x_h/2, c x_h/2), x_h = %g, c = %g", n, xh, c)
	return p, nil
}

// VirtualCounterexamplePair is Heller & Fetaya's pair (eq. 8) for n too
// large to hold: virtual datasets of n records listing their distinct
// records (for features and model constants).
func VirtualCounterexamplePair(n int, xh, c float64) (Pair, error) {
	if n < 2 {
		return Pair{}, field.Errorf(field.At("n", "n"), "must be ≥ 2, got %d", n)
	}
	if !(xh > 0) || math.IsInf(xh, 0) {
		return Pair{}, field.Errorf(field.At("xh", "xh"), "must be finite and > 0, got %g", xh)
	}
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return Pair{}, field.Errorf(field.At("c", "c"), "must be finite, got %g", c)
	}
	d1 := &Dataset{Name: "D1", Virtual: n, Records: []Record{{X: []float64{xh}, Y: c * xh}}}
	d2 := &Dataset{Name: "D2", Virtual: n, Records: []Record{{X: []float64{xh}, Y: c * xh}, {X: []float64{xh / 2}, Y: c * xh / 2}}}
	return Pair{D: d1, DPrime: d2, Adjacency: ReplaceOne, Index: n - 1,
		Note: fmt.Sprintf("Heller-Fetaya eq. 8 (not materialised): %d copies of (x_h, c x_h), one replaced by (x_h/2, c x_h/2), x_h = %g, c = %g", n, xh, c)}, nil
}
