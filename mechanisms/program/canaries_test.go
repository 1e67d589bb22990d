package program

import (
	"strings"
	"testing"
)

// The canary design's additions to mcmcaudit/1: "scores" in the
// handshake, "canaries" in a request, "scores" in an answer.
func TestCanaryWire(t *testing.T) {
	hs, f := parseHandshake([]byte(`{"mcmcaudit": 1, "dim": 5, "releases": ["a", "b"], "scores": true}`))
	if f != nil || !hs.Scores || hs.Dim != 5 {
		t.Fatalf("handshake %+v, %v", hs, f)
	}
	if old, f := parseHandshake([]byte(`{"mcmcaudit": 1, "dim": 5, "releases": ["a", "b"]}`)); f != nil || old.Scores || old.Equal(hs) {
		t.Errorf("a handshake without scores: %+v %v", old, f)
	}
	if _, f := parseHandshake([]byte(`{"mcmcaudit": 1, "dim": 5, "releases": ["a"], "scores": 1}`)); f == nil || !strings.Contains(f.detail, "handshake scores") {
		t.Errorf("scores: 1 accepted: %v", f)
	}

	line := string(appendRequest(nil, Request{Trial: 3, Side: SideD, Seed: 9, Canaries: "0110"}))
	if line != `{"trial": 3, "side": "D", "seed": 9, "canaries": "0110"}`+"\n" {
		t.Errorf("request line %q", line)
	}
	if old := string(appendRequest(nil, Request{Trial: 3, Side: SideD, Seed: 9})); strings.Contains(old, "canaries") {
		t.Errorf("a multi-run request carries canaries: %q", old)
	}
	if err := (Request{Side: SideD, Canaries: "01x"}).check(); err == nil {
		t.Error("a mask with another character accepted")
	}

	// With "scores": true, an answer holds one array of m scores per
	// release (hs.Dim is then m, as the pool sets it).
	sh := Handshake{Dim: 3, Releases: []string{"a", "b"}, Scores: true}
	res, _, _, f := parseAnswer([]byte(`{"trial": 3, "scores": [[1, 2, 3], [-4, 5.5, 0]], "info": {"iterations": 2}}`), 3, &sh)
	if f != nil || len(res.Releases) != 2 || res.Releases[1][1] != 5.5 {
		t.Errorf("scores answer: %+v %v", res, f)
	}
	if _, _, _, f := parseAnswer([]byte(`{"trial": 3, "releases": [[1, 2, 3], [4, 5, 6]]}`), 3, &sh); f == nil || !strings.Contains(f.detail, `"scores"`) {
		t.Errorf("releases from a scores program accepted: %v", f)
	}
	if _, _, _, f := parseAnswer([]byte(`{"trial": 3, "scores": [[1, 2], [4, 5]]}`), 3, &sh); f == nil {
		t.Error("scores of the wrong length accepted")
	}
}
