package scenario

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Errors of WithNumber and NumberAt, wrapped with the path.
var (
	// ErrNoSuchField: no field has the path (a key the YAML decoder would
	// refuse as unknown).
	ErrNoSuchField = errors.New("no such field")
	// ErrNotNumber: the field is not a number (a string, list, mapping …).
	ErrNotNumber = errors.New("not a number field")
	// ErrInexact: the field's type cannot hold the value exactly (1.5 or
	// 2^70 for an integer, −1 for an unsigned one).
	ErrInexact = errors.New("the field's type cannot hold the value")
)

// WithNumber returns a copy of v, a pointer to a struct of the scenario's
// Go types (a sampler of SamplerConfig, a Config, …), with the number at
// path set to x. The path is in YAML keys, nested fields joined by dots as
// in the reference without its section prefix ("step.eta" of an SGLD
// sampler; Lookup("sampler.sgld.step.eta") documents it). Every struct on
// the path is copied, so v is unchanged and the copy shares nothing the
// setting touches; unexported fields (caches) start at their zero values
// in the copied structs, as after decoding the YAML. A nil pointer on the
// path is allocated, as decoding a key under an omitted section would.
//
// It sets the value the YAML decoder would store for the key, without a
// round trip through YAML text: an integer field takes only an integer in
// its range (ErrInexact otherwise), a field that is no number is
// ErrNotNumber, an unknown key ErrNoSuchField.
func WithNumber(v any, path string, x float64) (any, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s: %w (%T is not a pointer to a struct)", path, ErrNoSuchField, v)
	}
	out := copyStruct(rv.Elem())
	cur := out.Elem()
	keys := strings.Split(path, ".")
	for i, k := range keys {
		f, ok := fieldByYAMLName(cur, k)
		if !ok {
			return nil, fmt.Errorf("%s: %w", path, ErrNoSuchField)
		}
		if i == len(keys)-1 {
			if err := setNumber(f, x); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			break
		}
		switch {
		case f.Kind() == reflect.Struct:
			// A struct held by value was copied with its parent.
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			if f.IsNil() {
				f.Set(reflect.New(f.Type().Elem()))
			} else {
				f.Set(copyStruct(f.Elem()))
			}
			f = f.Elem()
		default:
			return nil, fmt.Errorf("%s: %w (%s is not a mapping)", path, ErrNoSuchField, strings.Join(keys[:i+1], "."))
		}
		cur = f
	}
	return out.Interface(), nil
}

// NumberAt returns the number at path of v (a struct or a pointer to one,
// path as in WithNumber): a field left at its zero value, or under a nil
// pointer, reads as 0, as an omitted key decodes.
func NumberAt(v any, path string) (float64, error) {
	cur := reflect.ValueOf(v)
	for _, k := range strings.Split(path, ".") {
		for cur.Kind() == reflect.Pointer {
			if cur.IsNil() {
				return 0, nil
			}
			cur = cur.Elem()
		}
		if cur.Kind() != reflect.Struct {
			return 0, fmt.Errorf("%s: %w", path, ErrNoSuchField)
		}
		f, ok := fieldByYAMLName(cur, k)
		if !ok {
			return 0, fmt.Errorf("%s: %w", path, ErrNoSuchField)
		}
		cur = f
	}
	switch cur.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(cur.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(cur.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return cur.Float(), nil
	}
	return 0, fmt.Errorf("%s: %w", path, ErrNotNumber)
}

// fieldByYAMLName returns the field of the struct s whose YAML key is
// name, as the decoder matches keys.
func fieldByYAMLName(s reflect.Value, name string) (reflect.Value, bool) {
	i, ok := yamlFields(s.Type()).index[name]
	if !ok {
		return reflect.Value{}, false
	}
	return s.Field(i), true
}

// copyStruct returns a pointer to a new struct of s's type holding s's
// exported fields (unexported ones, caches and locks, stay zero).
func copyStruct(s reflect.Value) reflect.Value {
	out := reflect.New(s.Type())
	for i := 0; i < s.NumField(); i++ {
		if s.Type().Field(i).IsExported() {
			out.Elem().Field(i).Set(s.Field(i))
		}
	}
	return out
}

// setNumber stores x in the numeric field f, refusing a value its type
// cannot hold exactly.
func setNumber(f reflect.Value, x float64) error {
	switch f.Kind() {
	case reflect.Float32, reflect.Float64:
		if f.OverflowFloat(x) || (f.Kind() == reflect.Float32 && float64(float32(x)) != x) {
			return ErrInexact
		}
		f.SetFloat(x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// 2^63 itself is not an int64: compare before converting.
		if x != math.Trunc(x) || !(x >= math.MinInt64 && x < math.MaxInt64) || f.OverflowInt(int64(x)) {
			return ErrInexact
		}
		f.SetInt(int64(x))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if x != math.Trunc(x) || !(x >= 0 && x < math.MaxUint64) || f.OverflowUint(uint64(x)) {
			return ErrInexact
		}
		f.SetUint(uint64(x))
	default:
		return ErrNotNumber
	}
	return nil
}
