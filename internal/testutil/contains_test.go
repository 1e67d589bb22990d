package testutil

import "testing"

func TestContainsInOrder(t *testing.T) {
	s := `line 15: audit.features: must be theta, norm, coord:K or logprobs, got "gradient"`
	for _, c := range []struct {
		want string
		ok   bool
	}{
		{`audit.features: must be theta, … or logprobs, got "gradient"`, true},
		{`audit.features: must be theta, norm`, true},
		{`or logprobs … audit.features`, false}, // out of order
		{`must be theta, … or qda`, false},
	} {
		if got := ContainsInOrder(s, c.want); got != c.ok {
			t.Errorf("ContainsInOrder(%q) = %v, want %v", c.want, got, c.ok)
		}
	}
}
