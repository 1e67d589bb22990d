package field

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Seg is one step of a path: a struct field, named as in Go and as in
// YAML, or a list index.
type Seg struct {
	// Go is the Go field name ("NoiseVariance"); empty for an index.
	Go string
	// YAML is the field's YAML key ("noise_variance"); empty for an index.
	YAML string
	// Index is the list index when Go and YAML are empty.
	Index int
}

// IsIndex reports whether s is a list index.
func (s Seg) IsIndex() bool { return s.Go == "" && s.YAML == "" }

// Path is a field's path from the value that was checked, outermost
// field first.
type Path []Seg

// At is the path of one field, by its Go name and its YAML key.
func At(goName, yamlName string) Path { return Path{{Go: goName, YAML: yamlName}} }

// Field returns p extended by a field (p itself is not changed).
func (p Path) Field(goName, yamlName string) Path {
	return append(p[:len(p):len(p)], Seg{Go: goName, YAML: yamlName})
}

// Index returns p extended by a list index (p itself is not changed).
func (p Path) Index(i int) Path { return append(p[:len(p):len(p)], Seg{Index: i}) }

// Go writes p with Go names: "Records[3].X".
func (p Path) Go() string { return p.text(func(s Seg) string { return s.Go }) }

// YAML writes p with YAML keys: "records[3].x".
func (p Path) YAML() string { return p.text(func(s Seg) string { return s.YAML }) }

func (p Path) text(name func(Seg) string) string {
	var b strings.Builder
	for _, s := range p {
		if s.IsIndex() {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(name(s))
	}
	return b.String()
}

// Error is an error about the field at Path.
type Error struct {
	// Path is the field, relative to the value whose check returned the
	// error once every layer has wrapped it; empty for the value itself.
	Path Path
	// Msg says what is wrong and what is allowed, without the path.
	Msg string
	// Err is the cause, if any (Unwrap returns it).
	Err error
}

// Error writes the path with Go names, then the message:
// "Step.Eta: must be finite and > 0, got -1".
func (e *Error) Error() string {
	if len(e.Path) == 0 {
		return e.Msg
	}
	return e.Path.Go() + ": " + e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error about the field at p. A %w verb in format makes
// its operand the cause.
func Errorf(p Path, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &Error{Path: p, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// Wrap prefixes p to the path of err: a check's error about "Eta" becomes,
// in the value that holds the schedule as "Step", an error about
// "Step.Eta". An error that carries no path becomes an error about p
// itself, with err's text as the message and err as the cause. Wrap(nil, p)
// is nil.
func Wrap(err error, p Path) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) && fe == err {
		out := *fe
		out.Path = append(append(Path{}, p...), fe.Path...)
		return &out
	}
	return &Error{Path: append(Path{}, p...), Msg: err.Error(), Err: err}
}
