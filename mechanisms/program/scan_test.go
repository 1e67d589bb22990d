package program

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzScanReleases checks the hand-written releases scanner against
// encoding/json: on valid JSON without null they accept the same inputs
// and agree bit for bit; null (which encoding/json decodes as 0) is always
// refused.
func FuzzScanReleases(f *testing.F) {
	for _, s := range []string{
		`[[1, 2, 3], [4, 5, 6]]`, `[]`, `[[]]`, `[[], [1]]`, ` [ [ -0 , 1e-400 ,2.5E+3 ] ] `,
		"[[1,\t2]\n,[3\r]]", `[[1], [2, 3]]`, `[[[1]]]`, `[1]`, `[[null]]`, `[[1, null]]`, `[["NaN"]]`,
		`[[1e999]]`, `[[-1e999]]`, `[[true]]`, `[[{"a": 1}]]`, `{"a": [[1]]}`, `[[4.9e-324, 1.7976931348623157e308]]`,
		`[[0.1, 0.2], [0.30000000000000004]]`, `"x"`, `null`, `[[1],[2],]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		got, ok := scanReleases(raw, 2, 3)
		var want [][]float64
		jerr := json.Unmarshal(raw, &want)
		if bytes.Contains(raw, []byte("null")) {
			if ok {
				t.Fatalf("%s: null accepted", raw)
			}
			return
		}
		if ok != (jerr == nil) {
			t.Fatalf("%s: scanner ok = %v, encoding/json error %v", raw, ok, jerr)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, encoding/json %d", raw, len(got), len(want))
		}
		for i := range got {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("%s: row %d has %d values, encoding/json %d", raw, i, len(got[i]), len(want[i]))
			}
			for k := range got[i] {
				if math.Float64bits(got[i][k]) != math.Float64bits(want[i][k]) {
					t.Fatalf("%s: [%d][%d] = %v, encoding/json %v", raw, i, k, got[i][k], want[i][k])
				}
			}
		}
	})
}

func BenchmarkParseAnswer(b *testing.B) {
	rel := fakeReleases(5, SideD, 4, 20)
	line := append([]byte(`{"trial": 3, "releases": `), appendReleases(nil, rel)...)
	line = append(line, `, "info": {"pid": 1}}`...)
	hs := &Handshake{Dim: 4, Releases: make([]string, 20)}
	b.Run("scanner", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, f := parseAnswer(line, 3, hs); f != nil {
				b.Fatal(f)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		for b.Loop() {
			var w wireAnswer
			var r [][]float64
			if json.Unmarshal(line, &w) != nil || json.Unmarshal(w.Releases, &r) != nil {
				b.Fatal("decode")
			}
		}
	})
}
