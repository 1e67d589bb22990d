package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/suggest"
)

// FlagSet wraps flag.FlagSet so that every parse problem becomes one line
// naming the flag and its allowed values (and the nearest flag for an
// unknown one), and -h prints the flags.
type FlagSet struct {
	*flag.FlagSet
	name       string
	synopsis   string
	required   []string
	positional []string
	// explain is "audit run --explain [FIELD]": set when the flag was given.
	explain *explainFlag
}

// NArg returns the number of positional arguments.
func (f *FlagSet) NArg() int { return len(f.positional) }

// Arg returns the i-th positional argument.
func (f *FlagSet) Arg(i int) string { return f.positional[i] }

// NewFlagSet returns the flag set of the command "audit name" (name may go
// on with its synopsis of arguments); synopsis is the text -h prints under
// the usage line. The flag set of "run" also has --explain.
func NewFlagSet(name, synopsis string) *FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &FlagSet{FlagSet: fs, name: name, synopsis: synopsis}
	if cmd, _, _ := strings.Cut(name, " "); cmd == "run" {
		f.explain = &explainFlag{}
		fs.Var(f.explain, "explain", "print the reference of scenario field FIELD (a section: its fields; alone: all) and exit")
	}
	return f
}

// explainFlag is --explain: given alone it lists every scenario field, or
// it takes the field (--explain FIELD, --explain=FIELD).
type explainFlag struct {
	set   bool
	field string
}

// String implements flag.Value.
func (f *explainFlag) String() string { return "" }

// IsBoolFlag lets --explain stand alone; its field is then the next
// argument, read as a positional one.
func (f *explainFlag) IsBoolFlag() bool { return true }

// Set implements flag.Value.
func (f *explainFlag) Set(s string) error {
	f.set = true
	if s != "true" {
		f.field = s
	}
	return nil
}

// Parse parses args; positional arguments are refused unless maxArgs > 0.
func (f *FlagSet) Parse(args []string, e *Env, maxArgs int) error {
	// Flags may come before or after the positional arguments
	// ("audit run config.yaml --json out.json"): parse, set the first
	// positional argument aside, and parse the rest again.
	f.positional = nil
	for {
		if err := f.FlagSet.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.usage(e.Stdout)
				return ErrHelp
			}
			return UsageError{Msg: f.flagError(err)}
		}
		rest := f.FlagSet.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			f.positional = append(f.positional, rest[1:]...)
			break
		}
		f.positional = append(f.positional, rest[0])
		args = rest[1:]
	}
	if f.explain != nil && f.explain.set {
		field := f.explain.field
		if field == "" && len(f.positional) > 0 {
			field = f.positional[0]
		}
		if err := scenario.Explain(e.Stdout, field); err != nil {
			return UsageError{Msg: err.Error()}
		}
		return ErrHelp
	}
	if len(f.positional) > maxArgs {
		if maxArgs == 0 {
			return Usagef("unexpected argument %s (this command takes only flags)", clip.Quote(f.positional[0]))
		}
		return Usagef("unexpected argument %s (at most %d positional arguments)", clip.Quote(f.positional[maxArgs]), maxArgs)
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, r := range f.required {
		if !set[r] {
			return Usagef("--%s is required", r)
		}
	}
	return nil
}

// Given reports whether the flag name was on the command line (even
// with an empty value).
func Given(fs *FlagSet, name string) bool {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

var (
	reInvalid   = regexp.MustCompile(`^invalid value (".*") for flag -([^:]+): (.*)$`)
	reFlag      = regexp.MustCompile(` -([A-Za-z][-A-Za-z0-9]*)$`)
	reUndefined = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)
)

// flagError rewrites the flag package's messages to name the flag as users
// type it: `--delta: invalid value "1.5": must be a number in [0, 1)`, and
// suggests the nearest flag for an unknown one.
func (f *FlagSet) flagError(err error) string {
	msg := err.Error()
	if m := reInvalid.FindStringSubmatch(msg); m != nil {
		value := m[1]
		if v, err := strconv.Unquote(value); err == nil {
			value = clip.Quote(v)
		}
		return fmt.Sprintf("--%s: invalid value %s: %s", m[2], value, m[3])
	}
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		var names []string
		f.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
		name := m[1]
		if utf8.RuneCountInString(name) > clip.Runes {
			name = clip.Quote(name)
		}
		out := "flag provided but not defined: --" + name
		if near, ok := suggest.Nearest(m[1], names); ok {
			return out + fmt.Sprintf(" (did you mean --%s?)", near)
		}
		cmd, _, _ := strings.Cut(f.name, " ")
		return out + fmt.Sprintf(" (audit %s -h lists the flags)", cmd)
	}
	return reFlag.ReplaceAllString(msg, " --$1")
}

func (f *FlagSet) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: audit %s\n\n%s\n\nFlags:\n", f.name, f.synopsis)
	f.VisitAll(func(fl *flag.Flag) {
		fmt.Fprintf(w, "  --%-14s %s%s\n", fl.Name, fl.Usage, defaultText(fl, f.required))
	})
}

// defaultText is what -h appends to a flag's line: its default, once —
// nothing when the usage text states it, when there is none to state (an
// empty string, a 0 that means "unset", a false switch), "(required)" for
// a required flag.
func defaultText(fl *flag.Flag, required []string) string {
	for _, r := range required {
		if r == fl.Name {
			return " (required)"
		}
	}
	if strings.Contains(fl.Usage, "default") {
		return ""
	}
	if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	switch fl.DefValue {
	case "", "0", "false", "NaN":
		return ""
	}
	return fmt.Sprintf(" (default %s)", fl.DefValue)
}

// intFlag is an integer flag restricted to [min, max].
type intFlag struct {
	v        *int
	min, max int
}

// String implements flag.Value.
func (f intFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.Itoa(*f.v)
}

// Set accepts only an integer written as one (decimal digits and a
// sign): "1.5", "1e3" and anything beyond the range are refused.
func (f intFlag) Set(s string) error {
	x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || x < int64(f.min) || x > int64(f.max) {
		return fmt.Errorf("must be an integer in %s", intRange(f.min, f.max))
	}
	*f.v = int(x)
	return nil
}

func intRange(lo, hi int) string {
	if hi == math.MaxInt {
		return fmt.Sprintf("[%d, ∞)", lo)
	}
	return fmt.Sprintf("[%d, %s]", lo, powerOfTwo(hi))
}

// powerOfTwo writes 2^k for a large power of two, the number otherwise.
func powerOfTwo(x int) string {
	if x >= 1<<20 && x&(x-1) == 0 {
		return fmt.Sprintf("2^%d", bits.TrailingZeros64(uint64(x)))
	}
	return strconv.Itoa(x)
}

// floatFlag is a finite float flag restricted by check, which describes the
// allowed range in its error.
type floatFlag struct {
	v     *float64
	rng   string // e.g. "[0, 1)"
	check func(float64) bool
}

// String is the flag's value; NaN (the "not given" of optional numbers)
// is shown as nothing.
func (f floatFlag) String() string {
	if f.v == nil || math.IsNaN(*f.v) {
		return ""
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

// Set implements flag.Value: a finite number that check accepts.
func (f floatFlag) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || !f.check(x) {
		return fmt.Errorf("must be a number in %s", f.rng)
	}
	*f.v = x
	return nil
}

// IntVar defines an integer flag in [min, max] with default def; the
// range is appended to usage.
func (f *FlagSet) IntVar(p *int, name string, def, min, max int, usage string) {
	*p = def
	f.Var(intFlag{p, min, max}, name, usage+" "+intRange(min, max))
}

// FloatVar defines a finite float flag with default def, restricted by
// check, which rng (e.g. "[0, 1)") describes; rng is appended to usage.
func (f *FlagSet) FloatVar(p *float64, name string, def float64, rng string, check func(float64) bool, usage string) {
	*p = def
	f.Var(floatFlag{p, rng, check}, name, usage+" "+rng)
}

// Common ranges.
var (
	InUnitOpen = func(x float64) bool { return x > 0 && x < 1 }  // (0, 1)
	InDelta    = func(x float64) bool { return x >= 0 && x < 1 } // [0, 1)
	Positive   = func(x float64) bool { return x > 0 }
)

// EstimatorsFlag is --estimators NAME,…: the estimators of the audit, by
// their registered names (an unknown or repeated name is refused when the
// flag is parsed). Names points at where the parsed names go.
type EstimatorsFlag struct{ Names *[]string }

// String returns the names joined by commas.
func (f EstimatorsFlag) String() string {
	if f.Names == nil {
		return ""
	}
	return strings.Join(*f.Names, ",")
}

// Set parses NAME,… and refuses a name that is not registered.
func (f EstimatorsFlag) Set(s string) error {
	names := strings.Split(s, ",")
	if _, err := audit.EstimatorsByName(names); err != nil {
		return err
	}
	*f.Names = names
	return nil
}
