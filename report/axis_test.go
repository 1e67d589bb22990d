package report

import (
	"bytes"
	"testing"
)

// The ε plot's x axis places the releases where the report knows them to
// be: by their iterations when the sampler gave them (whatever the
// labels), and — when it gave none (a program sampler or a samples file
// naming its releases, whose Iteration is only the rank 1, 2, 3) — by the
// epoch or iteration their labels count, by the number they are labelled,
// or by the labels themselves; never as "iteration 1, 2, 3".
func TestReleaseAxis(t *testing.T) {
	cases := []struct {
		name    string
		unknown bool
		iters   []int
		labels  []string
		axis    string
		ticks   []string // labelled ticks the axis must have
		notTick string   // a tick it must not have
	}{
		{"iterations given", false, []int{50, 100, 200}, []string{"early", "middle", "late"}, "iteration", []string{"100", "200"}, "early"},
		{"epoch labels", true, []int{1, 2, 3}, []string{"epoch 5", "epoch 10", "epoch 20"}, "epoch", []string{"10", "20"}, "3"},
		{"iteration labels", true, []int{1, 2, 3}, []string{"iter_50", "iter_100", "iter_200"}, "iteration", []string{"100", "200"}, "3"},
		{"number labels", true, []int{1, 2, 3}, []string{"50", "100", "200"}, "release label", []string{"100", "200"}, "3"},
		{"names", true, []int{1, 2, 3}, []string{"warmup", "middle", "a very long final label"}, "release (in order; the sampler gave no iterations)", []string{"warmup", "middle", "a very long…"}, "2"},
	}
	for _, c := range cases {
		r := fakeReport("axis", len(c.labels), false, 1, nil)
		r.IterationsUnknown = c.unknown
		for k := range r.Points {
			r.Points[k].Point.Iteration, r.Points[k].Point.Label = c.iters[k], c.labels[k]
		}
		var b bytes.Buffer
		if err := WritePlot(&b, "svg", r); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		runs := checkSVG(t, c.name, b.Bytes())
		// The x axis's ticks: the runs of text just above its name.
		ticks := map[string]bool{}
		var axis *textRunBox
		for i := range runs {
			if runs[i].text == c.axis {
				axis = &runs[i]
			}
		}
		if axis == nil {
			t.Errorf("%s: no x axis %q", c.name, c.axis)
			continue
		}
		for _, r := range runs {
			if r.y1 <= axis.y0 && r.y0 >= axis.y0-25 {
				ticks[r.text] = true
			}
		}
		for _, want := range c.ticks {
			if !ticks[want] {
				t.Errorf("%s: no tick %q among %v", c.name, want, ticks)
			}
		}
		if ticks[c.notTick] {
			t.Errorf("%s: a tick %q among %v", c.name, c.notTick, ticks)
		}
		if c.axis != "iteration" && hasText(runs, "iteration") {
			t.Errorf("%s: an axis of iterations the sampler never gave", c.name)
		}
	}
}
