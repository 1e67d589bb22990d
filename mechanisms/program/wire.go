package program

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Version is the protocol version this package speaks: the value of the
// handshake's "mcmcaudit" key.
const Version = 1

// Sides of a trial, as written in requests.
const (
	SideD      = "D"
	SideDPrime = "D'"
)

// Handshake is what a program declares when it starts: the dimension of
// every release and the labels of its release points, in order.
type Handshake struct {
	Dim      int
	Releases []string
	// Scores is the handshake's optional "scores": true: in the canary
	// design the program answers with one score per canary and release
	// point ("scores") instead of its releases.
	Scores bool
	// Iterations, optional, is the iteration each release follows (one
	// per label, ≥ 1, increasing): the utility figures count the
	// iterations between releases from it (mechanisms.PointsFromLabels).
	Iterations []int `json:",omitempty"`
}

// Equal reports whether two handshakes declare the same dimension, the
// same release labels and the same iterations.
func (h Handshake) Equal(o Handshake) bool {
	return h.Dim == o.Dim && slices.Equal(h.Releases, o.Releases) && h.Scores == o.Scores && slices.Equal(h.Iterations, o.Iterations)
}

// String renders the handshake for messages.
func (h Handshake) String() string {
	b, _ := json.Marshal(h.Releases)
	return fmt.Sprintf("{dim %d, releases %s}", h.Dim, b)
}

// Request asks for one trial: the program runs its sampler on dataset Side
// with all its randomness derived from Seed.
type Request struct {
	// Trial is the trial's index (≥ 0), echoed in the answer.
	Trial int
	// Side is SideD or SideDPrime.
	Side string
	// Seed is the trial's seed; any uint64 travels exactly.
	Seed uint64
	// Canaries is the inclusion mask of a canary design's run: one
	// character per canary, '1' when it is in the training data ("" in
	// the multi-run design: the key is then not sent).
	Canaries string
}

// String names the trial for messages: trial 7 (side D', seed 42).
func (r Request) String() string {
	return fmt.Sprintf("trial %d (side %s, seed %d)", r.Trial, r.Side, r.Seed)
}

// check validates a request before it is sent.
func (r Request) check() error {
	if r.Trial < 0 {
		return fmt.Errorf("program: request trial: must be ≥ 0, got %d", r.Trial)
	}
	if strings.Trim(r.Canaries, "01") != "" {
		return fmt.Errorf("program: request canaries: must hold only '0' and '1'")
	}
	if r.Side != SideD && r.Side != SideDPrime {
		return fmt.Errorf("program: request side: must be %q or %q, got %q", SideD, SideDPrime, r.Side)
	}
	return nil
}

// appendRequest appends r's protocol line, newline included. Side is one of
// the two checked constants, so it needs no escaping; the seed is written
// as an exact unsigned integer.
func appendRequest(b []byte, r Request) []byte {
	b = append(b, `{"trial": `...)
	b = strconv.AppendInt(b, int64(r.Trial), 10)
	b = append(b, `, "side": "`...)
	b = append(b, r.Side...)
	b = append(b, `", "seed": `...)
	b = strconv.AppendUint(b, r.Seed, 10)
	if r.Canaries != "" {
		b = append(b, `, "canaries": "`...)
		b = append(b, r.Canaries...)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// Result is a trial's answer: one slice of Handshake.Dim finite values per
// release point, in the handshake's order, and the program's optional
// "info" object, raw (nil when absent).
type Result struct {
	Releases [][]float64
	Info     json.RawMessage
}

// lineFault is a protocol violation found in a line, before it is
// attributed to a trial and a process.
type lineFault struct{ detail string }

func (f *lineFault) Error() string { return f.detail }

func lineFaultf(format string, a ...any) *lineFault {
	return &lineFault{fmt.Sprintf(format, a...)}
}

// isBlank reports whether a line holds only white space (such lines are
// skipped).
func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// notJSON explains a line that does not parse, with a hint when it holds
// the non-JSON tokens NaN or Infinity (which Python's json.dumps writes
// unless allow_nan=False).
func notJSON(line []byte, what string) *lineFault {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && (bytes.Contains(line, []byte("NaN")) || bytes.Contains(line, []byte("Infinity"))) {
		return lineFaultf("%s is not JSON: NaN and Infinity are not JSON numbers, and releases must be finite", what)
	}
	return lineFaultf("%s is not JSON (stdout must carry protocol lines only; print anything else to stderr)", what)
}

// wireHandshake is the handshake line with its fields kept raw, so that each
// is checked with its own message.
type wireHandshake struct {
	Version  json.RawMessage `json:"mcmcaudit"`
	Dim      json.RawMessage `json:"dim"`
	Releases json.RawMessage `json:"releases"`
	Scores   json.RawMessage `json:"scores"`
	// Iterations is optional.
	Iterations json.RawMessage `json:"iterations"`
}

// parseHandshake checks a handshake line {"mcmcaudit": 1, "dim": D,
// "releases": [labels]}. Unknown keys are ignored.
func parseHandshake(line []byte) (Handshake, *lineFault) {
	line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	var w wireHandshake
	if err := json.Unmarshal(line, &w); err != nil || bytes.TrimSpace(line)[0] != '{' {
		if !json.Valid(line) {
			return Handshake{}, notJSON(line, `the first stdout line (the handshake {"mcmcaudit": 1, "dim": D, "releases": [...]})`)
		}
		return Handshake{}, lineFaultf(`the first stdout line must be the handshake object {"mcmcaudit": 1, "dim": D, "releases": [...]}`)
	}
	if len(w.Version) == 0 {
		return Handshake{}, lineFaultf(`the first stdout line must be the handshake {"mcmcaudit": 1, "dim": D, "releases": [...]}; it has no "mcmcaudit" key`)
	}
	if string(w.Version) != strconv.Itoa(Version) {
		return Handshake{}, lineFaultf("handshake mcmcaudit: must be %d (this tool speaks mcmcaudit/%d), got %s", Version, Version, w.Version)
	}
	dim, err := strconv.ParseInt(string(w.Dim), 10, 64)
	if err != nil || dim < 1 || dim > MaxValues {
		got := string(w.Dim)
		if got == "" {
			got = "nothing"
		}
		return Handshake{}, lineFaultf("handshake dim: must be an integer in [1, %d] (each answer carries dim × releases numbers on one line, which may not exceed 2^28 bytes), got %s", MaxValues, truncate(got, 40))
	}
	var labels []string
	if len(w.Releases) == 0 || json.Unmarshal(w.Releases, &labels) != nil || w.Releases[0] != '[' {
		got := string(w.Releases)
		if got == "" {
			got = "nothing"
		}
		return Handshake{}, lineFaultf("handshake releases: must be an array of release-point labels (strings), got %s", truncate(got, 80))
	}
	if len(labels) == 0 || int64(len(labels))*dim > MaxValues {
		return Handshake{}, lineFaultf("handshake releases: must hold 1 to %d labels (dim × releases ≤ %d, so that an answer fits in a line of 2^28 bytes), got %d", MaxValues/dim, MaxValues, len(labels))
	}
	its, fault := parseIterations(w.Iterations, len(labels))
	if fault != nil {
		return Handshake{}, fault
	}
	hs := Handshake{Dim: int(dim), Releases: labels, Iterations: its}
	switch string(w.Scores) {
	case "", "null", "false":
	case "true":
		hs.Scores = true
	default:
		return Handshake{}, lineFaultf("handshake scores: must be true or false, got %s", truncate(string(w.Scores), 40))
	}
	return hs, nil
}

// parseIterations checks the handshake's optional "iterations": one
// integer per release label, ≥ 1 and increasing.
func parseIterations(raw json.RawMessage, n int) ([]int, *lineFault) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var its []int
	if err := json.Unmarshal(raw, &its); err != nil || raw[0] != '[' || len(its) != n {
		return nil, lineFaultf("handshake iterations: must be an array of %d integers (the iteration each release follows, one per label), got %s", n, truncate(string(raw), 80))
	}
	for k, it := range its {
		if it < 1 || (k > 0 && it <= its[k-1]) {
			return nil, lineFaultf("handshake iterations: must be integers ≥ 1 in increasing order, got %s", truncate(string(raw), 80))
		}
	}
	return its, nil
}

// wireAnswer is an answer line with its fields kept raw.
type wireAnswer struct {
	Trial    json.RawMessage `json:"trial"`
	Releases json.RawMessage `json:"releases"`
	Scores   json.RawMessage `json:"scores"`
	Error    json.RawMessage `json:"error"`
	Info     json.RawMessage `json:"info"`
}

// parseAnswer checks an answer line for trial `trial` against the
// handshake. It returns the result, or the program's error message
// (isErr), or a protocol fault. Unknown keys are ignored. A program whose
// handshake says "scores": true answers a canary request with "scores"
// (read into Result.Releases; hs.Dim is then the number of canaries).
func parseAnswer(line []byte, trial int, hs *Handshake) (res Result, msg string, isErr bool, f *lineFault) {
	w, f := decodeAnswer(line, trial, hs)
	if f != nil {
		return res, "", false, f
	}
	hasRel, hasErr := given(w.Releases), given(w.Error)
	switch {
	case hasRel && hasErr:
		return res, "", false, lineFaultf(`answer: must hold "releases" or "error", not both`)
	case hasErr:
		var m string
		if json.Unmarshal(w.Error, &m) != nil {
			return res, "", false, lineFaultf("answer error: must be a string, got %s", truncate(string(w.Error), 80))
		}
		return res, m, true, nil
	case !hasRel:
		return res, "", false, lineFaultf(`answer: must hold "releases" (or "error"), got neither`)
	}
	if given(w.Info) {
		if w.Info[0] != '{' {
			return res, "", false, lineFaultf("answer info: must be a JSON object, got %s", truncate(string(w.Info), 80))
		}
		res.Info = w.Info
	}
	if res.Releases, f = answerReleases(w.Releases, hs); f != nil {
		return Result{}, "", false, f
	}
	return res, "", false, nil
}

// given reports whether an answer's field is there and not null.
func given(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// decodeAnswer reads an answer line as a JSON object for trial `trial`:
// anything else on stdout is a fault, and so is an answer for another
// trial. A program that answers with scores (hs.Scores) has them moved to
// Releases, and must not send "releases".
func decodeAnswer(line []byte, trial int, hs *Handshake) (wireAnswer, *lineFault) {
	var w wireAnswer
	if err := json.Unmarshal(line, &w); err != nil || bytes.TrimSpace(line)[0] != '{' {
		if !json.Valid(line) {
			return w, notJSON(line, "a stdout line")
		}
		return w, lineFaultf(`a stray line on stdout, not an answer {"trial": %d, "releases": [...]} (stdout must carry protocol lines only; print anything else to stderr)`, trial)
	}
	if hs.Scores {
		if given(w.Releases) {
			return w, lineFaultf(`answer: the handshake says "scores": true, so a canary run is answered with "scores" (one array of %d scores per release point), not "releases"`, hs.Dim)
		}
		w.Releases = w.Scores
	}
	if len(w.Trial) == 0 {
		return w, lineFaultf(`a stray line on stdout: a JSON object without "trial" (stdout must carry protocol lines only; print anything else to stderr)`)
	}
	got, err := strconv.ParseInt(string(w.Trial), 10, 64)
	if err != nil {
		return w, lineFaultf("answer trial: must be an integer, got %s", truncate(string(w.Trial), 40))
	}
	if got != int64(trial) {
		return w, lineFaultf("the answer is for trial %d while trial %d was asked", got, trial)
	}
	return w, nil
}

// answerReleases reads an answer's releases: one array of hs.Dim finite
// numbers per release point of the handshake.
func answerReleases(raw json.RawMessage, hs *Handshake) ([][]float64, *lineFault) {
	rel, ok := scanReleases(raw, len(hs.Releases), hs.Dim)
	if !ok {
		return nil, diagnoseReleases(raw, hs)
	}
	if len(rel) != len(hs.Releases) {
		return nil, lineFaultf("answer releases: must hold %d arrays (one per release point of the handshake), got %d", len(hs.Releases), len(rel))
	}
	for i, r := range rel {
		if len(r) != hs.Dim {
			return nil, lineFaultf("release %d of %d (%q): must have dim = %d coordinates, got %d", i+1, len(hs.Releases), hs.Releases[i], hs.Dim, len(r))
		}
	}
	return rel, nil
}

// scanReleases reads raw — valid JSON, already checked by encoding/json —
// as an array of arrays of finite numbers, into one backing slice when the
// shape is nrel × dim. It reports false for anything else (another token
// than a number, such as null, which encoding/json would silently decode
// as 0; a number beyond the float64 range; another nesting), which
// diagnoseReleases then explains; a well-formed array of another shape is
// returned for the caller's length checks. It is several times faster
// than decoding into [][]float64 with encoding/json.
func scanReleases(raw []byte, nrel, dim int) ([][]float64, bool) {
	sc := releaseScanner{raw: raw}
	if !sc.expect('[') {
		return nil, false
	}
	if sc.expect(']') {
		return [][]float64{}, true
	}
	back := make([]float64, 0, nrel*dim)
	starts := make([]int, 0, nrel+1)
	for {
		starts = append(starts, len(back))
		var ok bool
		if back, ok = sc.row(back); !ok {
			return nil, false
		}
		if sc.expect(']') {
			break
		}
		if !sc.expect(',') {
			return nil, false
		}
	}
	starts = append(starts, len(back))
	rows := make([][]float64, len(starts)-1)
	for r := range rows {
		rows[r] = back[starts[r]:starts[r+1]:starts[r+1]]
	}
	return rows, true
}

// releaseScanner is scanReleases's position in its input.
type releaseScanner struct {
	raw []byte
	i   int
}

// skip passes JSON whitespace.
func (sc *releaseScanner) skip() {
	for sc.i < len(sc.raw) && isJSONSpace(sc.raw[sc.i]) {
		sc.i++
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// expect passes c, after whitespace, reporting whether it was there.
func (sc *releaseScanner) expect(c byte) bool {
	sc.skip()
	if sc.i < len(sc.raw) && sc.raw[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// row reads one array of numbers, "[" included, appending them to back.
func (sc *releaseScanner) row(back []float64) ([]float64, bool) {
	if !sc.expect('[') {
		return back, false
	}
	if sc.expect(']') {
		return back, true
	}
	for {
		x, ok := sc.number()
		if !ok {
			return back, false
		}
		back = append(back, x)
		if sc.expect(']') {
			return back, true
		}
		if !sc.expect(',') {
			return back, false
		}
	}
}

// number reads one number token: a token that does not start like a
// number (null, a string), or does not parse as a float64, is refused.
func (sc *releaseScanner) number() (float64, bool) {
	sc.skip()
	raw, j := sc.raw, sc.i
	if j >= len(raw) || !(raw[j] == '-' || raw[j] >= '0' && raw[j] <= '9') {
		return 0, false
	}
	for sc.i < len(raw) && raw[sc.i] != ',' && raw[sc.i] != ']' && !isJSONSpace(raw[sc.i]) {
		sc.i++
	}
	x, err := strconv.ParseFloat(string(raw[j:sc.i]), 64)
	return x, err == nil
}

// diagnoseReleases explains why "releases" did not decode as arrays of
// float64: the first element that is not a finite number.
func diagnoseReleases(raw json.RawMessage, hs *Handshake) *lineFault {
	shape := fmt.Sprintf("answer releases: must be an array of %d arrays of %d numbers", len(hs.Releases), hs.Dim)
	var outer []json.RawMessage
	if json.Unmarshal(raw, &outer) != nil {
		return lineFaultf("%s, got %s", shape, truncate(string(raw), 80))
	}
	for i, r := range outer {
		label := ""
		if i < len(hs.Releases) {
			label = fmt.Sprintf(" (%q)", hs.Releases[i])
		}
		var inner []json.RawMessage
		if string(r) == "null" || json.Unmarshal(r, &inner) != nil {
			return lineFaultf("%s; release %d%s is %s", shape, i+1, label, truncate(string(r), 80))
		}
		for k, v := range inner {
			var x float64
			if string(v) != "null" && json.Unmarshal(v, &x) == nil {
				continue
			}
			what := "not a number"
			switch {
			case v[0] == '"':
				what = "a string, and JSON has no NaN or Infinity: releases must be finite numbers"
			case string(v) == "null":
				what = "null (Python's json writes None as null): releases must be finite numbers"
			case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
				what = "beyond the float64 range"
			}
			return lineFaultf("release %d%s, coordinate %d: %s is %s", i+1, label, k+1, truncate(string(v), 40), what)
		}
	}
	return lineFaultf("%s, got %s", shape, truncate(string(raw), 80))
}

// truncate keeps at most n bytes of s, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Compare checks that two results hold bitwise the same releases (the same
// number of releases, of coordinates, and the same float64 bits, so 0 and
// −0 differ). It returns nil, or an error naming the first release and
// coordinate (1-based) that differ with both values. Info is not compared:
// it may legitimately hold timings.
func Compare(a, b Result) error {
	if len(a.Releases) != len(b.Releases) {
		return fmt.Errorf("the results have %d and %d releases", len(a.Releases), len(b.Releases))
	}
	for i := range a.Releases {
		x, y := a.Releases[i], b.Releases[i]
		if len(x) != len(y) {
			return fmt.Errorf("release %d of %d has %d and %d coordinates", i+1, len(a.Releases), len(x), len(y))
		}
		for k := range x {
			if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
				return fmt.Errorf("release %d of %d, coordinate %d of %d differs: %s vs %s",
					i+1, len(a.Releases), k+1, len(x),
					strconv.FormatFloat(x[k], 'g', -1, 64), strconv.FormatFloat(y[k], 'g', -1, 64))
			}
		}
	}
	return nil
}

// Equal reports whether Compare(a, b) finds no difference.
func Equal(a, b Result) bool { return Compare(a, b) == nil }

// errLineTooLong is the reader's error for a line beyond MaxLineBytes.
var errLineTooLong = errors.New("line too long")
