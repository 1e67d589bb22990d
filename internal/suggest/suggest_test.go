package suggest

import "testing"

// Reference distances computed by hand (optimal string alignment): each
// case names the edits.
func TestDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},           // three insertions
		{"kitten", "sitting", 3}, // k→s, e→i, insert g
		{"trails", "trials", 1},  // swap "ai" → "ia"
		{"d", "dim", 2},          // insert i, m
		{"ε", "εx", 1},           // runes, not bytes
		{"ca", "abc", 3},         // OSA (not unrestricted Damerau): 3, not 2
		{"iterations", "itertaions", 1},
	}
	for _, c := range cases {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	flags := []string{"json", "csv", "plot", "html", "workers", "trials", "seed", "claim-epsilon", "claim-delta", "claim-gdp"}
	cases := []struct {
		word, want string
		ok         bool
	}{
		{"trails", "trials", true},
		{"claim_gdp", "claim-gdp", true}, // "_" and "-" alike
		{"Seed", "seed", true},
		{"worker", "workers", true},
		{"claim-e", "claim-epsilon", true}, // unique prefix
		{"claim", "", false},               // prefix of three
		{"frobnicate", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		got, ok := Nearest(c.word, flags)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", c.word, got, ok, c.want, c.ok)
		}
	}
	if got, ok := Nearest("d", []string{"dim", "alpha", "beta"}); !ok || got != "dim" {
		t.Errorf("Nearest(d) = %q, %v; want dim", got, ok)
	}
}
