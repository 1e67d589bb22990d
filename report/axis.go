package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"gonum.org/v1/plot"
)

// releaseAxis is the x axis of the ε plot: where each release is drawn,
// the axis's name and its ticks.
type releaseAxis struct {
	x     []float64
	label string
	ticks plot.Ticker
}

// reCountedLabel reads a release label that counts epochs, iterations or
// steps: "epoch 7", "iteration 50", "iter_200", "step=3".
var reCountedLabel = regexp.MustCompile(`^(?i)(epoch|iteration|iter|step)[\s_=:#-]*(\d+)$`)

// releaseAxisOf places the releases of r on the x axis by what the report
// knows of them: their epochs when every release ends one; their
// iterations when the sampler gave them; otherwise — a program sampler or
// a samples file that only names its releases, whose Iteration is the
// release's rank 1, 2, … — what their labels say: the epoch, iteration
// or step each label counts ("epoch 7"), the number each label is
// ("50", "100", "200"), or else the labels themselves, evenly spaced.
func releaseAxisOf(r *audit.Report) releaseAxis {
	pts := releasePoints(r)
	n := len(pts)
	ax := releaseAxis{x: make([]float64, n), ticks: IntegerTicks{}}
	epochs := n > 0
	for _, pt := range pts {
		epochs = epochs && pt.Epoch > 0
	}
	switch {
	case epochs:
		for k, pt := range pts {
			ax.x[k] = float64(pt.Epoch)
		}
		ax.label = "epoch"
		return ax
	case !r.IterationsUnknown:
		for k, pt := range pts {
			ax.x[k] = float64(pt.Iteration)
		}
		ax.label = "iteration"
		return ax
	}
	labels := make([]string, n)
	for k, pt := range pts {
		labels[k] = strings.TrimSpace(pt.Label)
	}
	if word, ks, ok := countedLabels(labels); ok {
		ax.x, ax.label = ks, word
		return ax
	}
	if vs, integers, ok := numberLabels(labels); ok {
		ax.x, ax.label = vs, "release label"
		if !integers {
			ax.ticks = LinearTicks{Target: 8}
		}
		return ax
	}
	for k := range ax.x {
		ax.x[k] = float64(k + 1)
	}
	ax.label, ax.ticks = "release (in order; the sampler gave no iterations)", labelTicks{labels}
	return ax
}

// countedLabels reads labels that all count the same unit ("epoch K"),
// with K increasing; it returns the unit's name and the counts.
func countedLabels(labels []string) (string, []float64, bool) {
	var word string
	out := make([]float64, len(labels))
	for k, l := range labels {
		m := reCountedLabel.FindStringSubmatch(l)
		if m == nil {
			return "", nil, false
		}
		w := strings.ToLower(m[1])
		if w == "iter" {
			w = "iteration"
		}
		v, err := strconv.Atoi(m[2])
		if err != nil || (k > 0 && (w != word || float64(v) <= out[k-1])) {
			return "", nil, false
		}
		word, out[k] = w, float64(v)
	}
	return word, out, len(labels) > 0
}

// numberLabels reads labels that are all finite numbers, increasing; it
// reports whether they are all whole.
func numberLabels(labels []string) (vs []float64, integers, ok bool) {
	integers = true
	for k, l := range labels {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || (k > 0 && v <= vs[k-1]) {
			return nil, false, false
		}
		integers = integers && v == math.Trunc(v)
		vs = append(vs, v)
	}
	return vs, integers, len(labels) > 0
}

// labelTicks marks releases drawn at 1, 2, … with their labels (a
// plot.Ticker): about ten labelled, evenly, the others unlabelled, each
// label clipped to a tick's room.
type labelTicks struct{ labels []string }

// Ticks implements plot.Ticker.
func (t labelTicks) Ticks(lo, hi float64) []plot.Tick {
	step := max(1, (len(t.labels)+9)/10)
	var ticks []plot.Tick
	for k, l := range t.labels {
		x := float64(k + 1)
		if x < lo || x > hi {
			continue
		}
		tick := plot.Tick{Value: x}
		if k%step == 0 {
			tick.Label = clipTick(l)
		}
		ticks = append(ticks, tick)
	}
	return ticks
}

// clipTick shortens a tick label to 12 runes, marking the cut with "…".
func clipTick(l string) string {
	r := []rune(l)
	if len(r) <= 12 {
		return l
	}
	return string(r[:11]) + "…"
}
