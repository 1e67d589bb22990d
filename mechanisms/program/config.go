package program

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcmcaudit/mcmcaudit/internal/clip"
)

// Defaults applied by Start to the zero values of Config.
const (
	// DefaultTimeout bounds a trial's answer (and a process's handshake)
	// when Config.Timeout is 0.
	DefaultTimeout = 60 * time.Second
	// DefaultRetries is the number of retries after a crash or a timeout
	// when Config.Retries is 0.
	DefaultRetries = 2
	// DefaultGrace is how long Close waits for a process to exit after its
	// stdin is closed, before killing its process group, when Config.Grace
	// is 0.
	DefaultGrace = 5 * time.Second
	// DefaultName prefixes stderr lines ("[sampler 2] ...") when
	// Config.Name is empty.
	DefaultName = "sampler"
)

// Limits of the protocol, so that a broken program cannot exhaust memory.
const (
	// MaxLineBytes bounds one stdout line of a program (its handshake or an
	// answer), newline excluded.
	MaxLineBytes = 1 << 28
	// MaxValueBytes is the longest a finite float64 takes in an answer
	// written as JSON encoders write it, with the fewest digits that
	// round-trip: a sign and 17 significant digits, with a point and an
	// exponent ("-2.2250738585072014e-308", 24 bytes: Python's repr and
	// json, Go's strconv) or in fixed notation down to 10⁻⁶
	// ("-0.0000012345678901234567", 25 bytes: JavaScript, Go's
	// encoding/json). Longer spellings (more digits than round-trip
	// needs) are valid JSON but not budgeted for.
	MaxValueBytes = 25
	// MaxValues bounds dim × number of releases in a handshake, so that
	// every answer fits in MaxLineBytes: a value takes at most
	// MaxValueBytes plus ", " after it, and with dim = 1 "[" and "]"
	// around it, 29 bytes; {"trial": 9223372036854775807, "releases": }
	// adds 44. 29 × 2^23 + 44 = 243,269,676 ≤ 2^28 = 268,435,456, which
	// leaves 25 MB for "info"; 2^24 values would not fit.
	MaxValues = 1 << 23
	// AnswerSlackBytes is what an answer line may hold beyond its numbers
	// and the per-release "correct" counts of its "info": the other info
	// counters, an error message, white space. See answerLineLimit.
	AnswerSlackBytes = 1 << 20
	// MaxRetries bounds Config.Retries.
	MaxRetries = 100
	// StderrTail is the number of stderr lines kept per process for error
	// messages.
	StderrTail = 20
)

// Config says how to run a program and how patient to be with it.
type Config struct {
	// Command is the program and its arguments, e.g.
	// ["python3", "my_sampler.py", "--flag"]. A name without a slash is
	// looked up in PATH; a relative path is relative to Dir.
	Command []string
	// Dir is the working directory of the program ("" = the caller's).
	Dir string
	// Env holds extra KEY=VALUE entries on top of os.Environ() (a key
	// given twice takes its last value).
	Env []string
	// Canaries is the number of canaries of a canary design (0: the
	// multi-run design): the length of a scores answer's arrays when the
	// handshake says "scores": true.
	Canaries int
	// Timeout bounds each attempt of a trial, and a new process's
	// handshake; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is the number of further attempts after a crash or a timeout,
	// each in another process (an idle one, or a new one in place of the
	// dead): 0 means DefaultRetries, −1 means none.
	Retries int
	// Grace is how long Close waits for a process to exit once its stdin
	// is closed before killing its process group; 0 means DefaultGrace.
	Grace time.Duration
	// Stderr receives the programs' stderr, one Write per line, each line
	// prefixed with "[Name N] " (N numbers the processes from 1). nil keeps
	// only the last StderrTail lines of each process, for error messages.
	// Writes must not block for long: a program blocks when its stderr
	// pipe is full.
	Stderr io.Writer
	// Name prefixes stderr lines; "" means DefaultName.
	Name string
	// MaxProcs bounds the number of live processes; 0 means
	// runtime.GOMAXPROCS(0).
	MaxProcs int
}

// withDefaults validates c and fills in its zero values. Every error names
// the field and its allowed range.
func (c Config) withDefaults() (Config, error) {
	if len(c.Command) == 0 || c.Command[0] == "" {
		return c, fmt.Errorf("command: must name a program (a non-empty first element), got %s", clip.Strings(c.Command))
	}
	for i, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return c, fmt.Errorf("env: entry %d must be KEY=VALUE with a non-empty KEY, got %s", i, clip.Quote(kv))
		}
	}
	if c.Timeout < 0 {
		return c, fmt.Errorf("timeout: must be ≥ 0 (0 = %v), got %v", DefaultTimeout, c.Timeout)
	}
	if c.Retries < -1 || c.Retries > MaxRetries {
		return c, fmt.Errorf("retries: must be in [-1, %d] (0 = %d, -1 = none), got %d", MaxRetries, DefaultRetries, c.Retries)
	}
	if c.Grace < 0 {
		return c, fmt.Errorf("grace: must be ≥ 0 (0 = %v), got %v", DefaultGrace, c.Grace)
	}
	if c.MaxProcs < 0 {
		return c, fmt.Errorf("max_procs: must be ≥ 0 (0 = GOMAXPROCS), got %d", c.MaxProcs)
	}
	if strings.ContainsAny(c.Name, "\n\r") {
		return c, fmt.Errorf("name: must be one line, got %s", clip.Quote(c.Name))
	}
	c.Command = append([]string(nil), c.Command...)
	c.Env = append([]string(nil), c.Env...)
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch c.Retries {
	case 0:
		c.Retries = DefaultRetries
	case -1:
		c.Retries = 0
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.MaxProcs == 0 {
		c.MaxProcs = runtime.GOMAXPROCS(0)
	}
	return c, nil
}

// commandLine renders a command for messages: arguments with spaces,
// quotes or control characters are quoted, and arguments longer than
// clip.Runes runes are cut (clip.Quote); at most clip.Runes arguments are
// shown.
func commandLine(cmd []string) string {
	var b strings.Builder
	for i, a := range cmd {
		if i == clip.Runes {
			fmt.Fprintf(&b, " …(%d arguments)", len(cmd))
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || utf8.RuneCountInString(a) > clip.Runes || strings.ContainsFunc(a, func(r rune) bool {
			return r <= ' ' || r == '"' || r == '\'' || r == '\\' || r == 0x7f
		}) {
			b.WriteString(clip.Quote(a))
		} else {
			b.WriteString(a)
		}
	}
	return b.String()
}

// Bytes an answer line spends per value and per release point, as
// MaxValues budgets them: a value of at most MaxValueBytes, ", " after it
// and, for dim 1, its release's brackets; a "correct" count of info (up to
// 20 digits and ", ") per release point; and the line's frame
// {"trial": 9223372036854775807, "releases": }.
const (
	valueSlotBytes   = MaxValueBytes + 4
	countSlotBytes   = 22
	answerFrameBytes = 44
)

// answerLineLimit is the longest line an answer to handshake hs may take:
// its numbers (dim per release point, or, for a scores program, the m
// canaries' scores), written as encoders write them (valueSlotBytes
// each), its frame, a "correct" count per release point and
// AnswerSlackBytes, at most MaxLineBytes. A longer line is refused while
// it is read, so that a program cannot make the tool buffer and parse
// 2^28 bytes (10⁸ numbers) in answer to a request for 1,000 scores.
func answerLineLimit(hs Handshake, canaries int) int64 {
	per := int64(hs.Dim)
	if hs.Scores {
		per = int64(canaries)
	}
	nrel := int64(len(hs.Releases))
	limit := valueSlotBytes*nrel*per + answerFrameBytes + countSlotBytes*nrel + AnswerSlackBytes
	return min(limit, MaxLineBytes)
}

// answerLimitText explains answerLineLimit for a refusal.
func answerLimitText(hs Handshake, canaries int) string {
	what, per := "coordinates", hs.Dim
	if hs.Scores {
		what, per = "scores", canaries
	}
	return fmt.Sprintf("the most an answer of %d release point(s) × %d %s may take (%d bytes a number, plus %d for info and the rest)",
		len(hs.Releases), per, what, valueSlotBytes, AnswerSlackBytes)
}
