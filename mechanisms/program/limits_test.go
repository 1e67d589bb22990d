package program

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// The longest finite float64 of a JSON answer, as encoders write it with
// the fewest digits that round-trip, is MaxValueBytes: Go's encoding/json
// (like JavaScript's JSON.stringify, checked with node: 25 bytes for the
// same number, and at most 25 over 3·10⁶ random doubles) writes
// -1.2345678901234567e-06 in fixed notation; strconv and Python's repr
// stay at 24 ("-2.2250738585072014e-308"). Random doubles, half of them in
// [10⁻⁶, 2·10⁻⁵) where fixed notation is longest, never exceed it.
func TestMaxValueBytes(t *testing.T) {
	b, _ := json.Marshal(-1.2345678901234567e-06)
	if string(b) != "-0.0000012345678901234567" || len(b) != MaxValueBytes {
		t.Errorf("encoding/json wrote %s (%d bytes), want the %d-byte fixed notation", b, len(b), MaxValueBytes)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		x := math.Float64frombits(r.Uint64())
		if i%2 == 0 {
			x = -math.Pow(10, -6+r.Float64()) * (1 + r.Float64())
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		b, _ := json.Marshal(x)
		if g := strconv.FormatFloat(x, 'g', -1, 64); len(b) > MaxValueBytes || len(g) > MaxValueBytes {
			t.Fatalf("%s / %s: longer than %d bytes", b, g, MaxValueBytes)
		}
	}
}

// worstAnswer writes the longest answer of nrel releases of dim values
// each, as Python's json.dumps separates items (", " and ": "), every value
// MaxValueBytes long, for the largest trial number.
func worstAnswer(nrel, dim int) string {
	var rel []string
	for range nrel {
		rel = append(rel, "["+strings.TrimSuffix(strings.Repeat("-0.0000012345678901234567, ", dim), ", ")+"]")
	}
	return fmt.Sprintf(`{"trial": %d, "releases": [%s]}`, math.MaxInt64, strings.Join(rel, ", "))
}

// The limits are consistent: an answer of V = dim × releases values takes
// at most 27·V + 2·releases + 44 ≤ 29·V + 44 bytes (docs/protocol.md), and
// at V = MaxValues that fits in MaxLineBytes while twice as many values
// would not. The formula is checked on real answers of small shapes, which
// the parser accepts.
func TestAnswerFitsLine(t *testing.T) {
	for _, s := range [][2]int{{1, 1}, {7, 1}, {1, 9}, {3, 4}, {5, 2}} {
		nrel, dim := s[0], s[1]
		line := worstAnswer(nrel, dim)
		v := nrel * dim
		if want := 27*v + 2*nrel + 44; len(line) != want || len(line) > 29*v+44 {
			t.Errorf("%d × %d: %d bytes, want 27·V + 2·releases + 44 = %d ≤ 29·V + 44", nrel, dim, len(line), want)
		}
		hs := Handshake{Dim: dim, Releases: make([]string, nrel)}
		if _, _, _, f := parseAnswer([]byte(line), math.MaxInt64, &hs); f != nil {
			t.Errorf("%d × %d: %v", nrel, dim, f)
		}
	}
	if worst := 29*MaxValues + 44; worst > MaxLineBytes {
		t.Errorf("an answer of MaxValues = %d values may take %d bytes, beyond MaxLineBytes = %d", MaxValues, worst, MaxLineBytes)
	}
	if 29*2*MaxValues+44 <= MaxLineBytes {
		t.Errorf("MaxValues = %d could be doubled", MaxValues)
	}
}

// A handshake whose answers could not fit in a line is refused with the
// reason: dim 2^26 (accepted before, its answers at least 2^26·26 bytes
// long), dim above 2^23, or dim × releases above it.
func TestHandshakeDimFitsLine(t *testing.T) {
	for _, c := range []struct {
		dim, nrel int
		want      string
	}{
		{1 << 26, 1, "handshake dim: must be an integer in [1, 8388608] (each answer carries dim × releases numbers on one line, which may not exceed 2^28 bytes), got 67108864"},
		{MaxValues + 1, 1, "handshake dim: must be an integer in [1, 8388608]"},
		{2, MaxValues/2 + 1, "handshake releases: must hold 1 to 4194304 labels (dim × releases ≤ 8388608, so that an answer fits in a line of 2^28 bytes), got 4194305"},
		{MaxValues, 1, ""},
		{2, MaxValues / 2, ""},
	} {
		if c.nrel > 1 && !testutil.SlowSuite {
			continue // millions of labels to encode and parse: the slow suite's
		}
		labels, _ := json.Marshal(make([]string, c.nrel))
		line := fmt.Sprintf(`{"mcmcaudit": 1, "dim": %d, "releases": %s}`, c.dim, labels)
		hs, f := parseHandshake([]byte(line))
		switch {
		case c.want == "" && f != nil:
			t.Errorf("dim %d × %d releases: %v", c.dim, c.nrel, f)
		case c.want == "" && (hs.Dim != c.dim || len(hs.Releases) != c.nrel):
			t.Errorf("dim %d × %d releases: got %v", c.dim, c.nrel, hs.Dim)
		case c.want != "" && (f == nil || !strings.HasPrefix(f.detail, c.want)):
			t.Errorf("dim %d × %d releases: %v, want %q", c.dim, c.nrel, f, c.want)
		}
	}
}
