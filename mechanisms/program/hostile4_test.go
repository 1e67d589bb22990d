package program

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shProgram is a program whose handshake and first answer are the files
// hs and answer, sent with cat; it then waits for end of input.
func shProgram(t *testing.T, hs, answer string) Config {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hs"), []byte(hs+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "answer"), []byte(answer+"\n"), 0o644)
	return Config{
		Command:  []string{"sh", "-c", "cat hs; read r; cat answer; while read r; do :; done"},
		Dir:      dir,
		MaxProcs: 1,
	}
}

// An answer is held to what its handshake allows — 29 bytes a number, the
// frame, the per-release "correct" counts and 1 MiB — and a longer line is
// refused as soon as it is read past that, naming the limit and what it
// is for. The line limit was 2^28 bytes whatever the request, so that a
// program asked for 1000 scores could send 6·10⁷ of them on a 240 MB line
// and have it read, copied and parsed (2 GB, 10 s of CPU) before the
// count was checked.
func TestAnswerLineHeldToTheHandshake(t *testing.T) {
	if n := answerLineLimit(Handshake{Dim: 2, Releases: []string{"final"}, Scores: true}, 1000); n != 1_077_642 {
		t.Errorf("1 release × 1000 scores: limit %d, docs/protocol.md says 1,077,642", n)
	}
	if n := answerLineLimit(Handshake{Dim: 1, Releases: make([]string, MaxValues)}, 0); n != MaxLineBytes {
		t.Errorf("2^23 releases of dim 1: limit %d, want MaxLineBytes", n)
	}
	huge := strings.Repeat("0.5,", 500_000) // 2 MB of scores, 500 times the 1000 asked
	for _, c := range []struct {
		name, hs, answer string
		canaries         int
		limit            int64
		what             string
	}{
		{"scores", `{"mcmcaudit": 1, "dim": 2, "releases": ["final"], "scores": true}`,
			`{"trial": 0, "scores": [[` + huge + `0.5]]}`, 1000, 1_077_642, "1 release point(s) × 1000 scores"},
		{"releases", `{"mcmcaudit": 1, "dim": 3, "releases": ["a", "b"]}`,
			`{"trial": 0, "releases": [[1, 2, 3], [4, 5, 6]], "info": {"note": "` + strings.Repeat("x", 2<<20) + `"}}`, 0, 1_048_838, "2 release point(s) × 3 coordinates"},
	} {
		cfg := shProgram(t, c.hs, c.answer)
		cfg.Canaries = c.canaries
		pl, _, err := Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = pl.Run(context.Background(), Request{Trial: 0, Side: SideD, Seed: 1, Canaries: strings.Repeat("1", c.canaries)})
		var e *Error
		want := fmt.Sprintf("wrote a stdout line longer than %d bytes, the most an answer of %s may take", c.limit, c.what)
		if !errors.As(err, &e) || e.Fault != FaultProtocol || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "command: sh -c") {
			t.Errorf("%s: got %v\n  want a protocol fault naming the command and %q", c.name, err, want)
		}
		if err != nil && strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("%s: the error is not one line", c.name)
		}
		pl.Close()
	}
}

// The limit leaves room for every answer the protocol allows: 1000 scores
// of the longest spelling (25 bytes), "correct" counts of 20 digits and
// an info object of other counters are read.
func TestAnswerLineLimitFitsTheLongestAnswer(t *testing.T) {
	long := "-0.0000012345678901234567"
	if len(long) != MaxValueBytes {
		t.Fatalf("%q is not MaxValueBytes long", long)
	}
	var b strings.Builder
	b.WriteString(`{"trial": 9223372036854775807, "scores": [`)
	for r := 0; r < 3; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("[" + strings.TrimSuffix(strings.Repeat(long+", ", 1000), ", ") + "]")
	}
	b.WriteString(`], "info": {"correct": [18446744073709551615, 18446744073709551615, 18446744073709551615], "iterations": 1000, "note": "` + strings.Repeat("n", 1<<19) + `"}}`)
	hs := `{"mcmcaudit": 1, "dim": 7, "releases": ["a", "b", "c"], "scores": true}`
	if limit := answerLineLimit(Handshake{Dim: 7, Releases: []string{"a", "b", "c"}, Scores: true}, 1000); int64(b.Len()) > limit {
		t.Fatalf("the longest answer takes %d bytes, beyond its limit %d", b.Len(), limit)
	}
	cfg := shProgram(t, hs, strings.Replace(b.String(), "9223372036854775807", "0", 1))
	cfg.Canaries = 1000
	pl, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	res, err := pl.Run(context.Background(), Request{Trial: 0, Side: SideD, Seed: 1, Canaries: strings.Repeat("0", 1000)})
	if err != nil || len(res.Releases) != 3 || len(res.Releases[2]) != 1000 {
		t.Fatalf("the longest answer: %v (%d releases)", err, len(res.Releases))
	}
}
