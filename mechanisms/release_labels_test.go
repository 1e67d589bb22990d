package mechanisms

import (
	"reflect"
	"testing"
)

// A sampler known by labels gets its iterations from the handshake's list,
// else from labels "iteration K", else none (ranks, known = false).
func TestPointsFromLabels(t *testing.T) {
	for _, c := range []struct {
		labels []string
		its    []int
		want   []int
		known  bool
	}{
		{[]string{"a", "b"}, []int{4, 8}, []int{4, 8}, true},
		{[]string{"iteration 4", "iteration 8"}, nil, []int{4, 8}, true},
		{[]string{"iteration 4", "iteration 8"}, []int{5, 9}, []int{5, 9}, true},
		{[]string{"a", "b"}, nil, []int{1, 2}, false},
		{[]string{"iteration 8", "iteration 4"}, nil, []int{1, 2}, false},
		{[]string{"iteration 0", "iteration 4"}, nil, []int{1, 2}, false},
		{[]string{"epoch 1", "epoch 2"}, nil, []int{1, 2}, false},
		{[]string{"a", "b"}, []int{4}, []int{1, 2}, false},
		{[]string{"iteration 4", "final"}, nil, []int{1, 2}, false},
	} {
		pts, known := PointsFromLabels(c.labels, c.its)
		var got []int
		for k, p := range pts {
			got = append(got, p.Iteration)
			if p.Label != c.labels[k] {
				t.Errorf("%v: label %q", c.labels, p.Label)
			}
		}
		if known != c.known || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v %v: %v known %v, want %v %v", c.labels, c.its, got, known, c.want, c.known)
		}
	}
}
