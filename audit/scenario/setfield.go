package scenario

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
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

// Setting is one FIELD=VALUE override of a scenario field, as "audit run
// --set" takes it: Path is the field's YAML keys joined by dots, from the
// top of the scenario ("sampler.sgld.step.eta", "audit.trials"), and Value
// is YAML as it would be written after the key in the file: a scalar
// ("0.05", "path", "1e6") or a flow list or mapping ("[threshold, lr]",
// "{eta: 0.05, b: 1}").
type Setting struct {
	Path  string
	Value string
}

// String returns the setting as FIELD=VALUE.
func (s Setting) String() string { return s.Path + "=" + s.Value }

// ParseSetting splits FIELD=VALUE at its first "=" and checks that FIELD
// is a dotted path of non-empty keys. The value is checked only when the
// setting is applied, by the scenario's own decoder and validation.
func ParseSetting(s string) (Setting, error) {
	path, value, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return Setting{}, errors.New("must be FIELD=VALUE, e.g. sampler.sgld.step.eta=0.05")
	}
	for _, k := range strings.Split(path, ".") {
		if k == "" || strings.TrimSpace(k) != k {
			return Setting{}, fmt.Errorf("%s: FIELD must be YAML keys joined by dots (e.g. audit.trials), got %q", path, path)
		}
	}
	return Setting{Path: path, Value: value}, nil
}

// apply writes the setting into the YAML document root (a mapping), as if
// the file had VALUE at FIELD: missing mappings on the path are added, an
// alias or a merged ("<<") mapping on the path is copied first so that
// the other places that use it keep their values, and the key and value
// written carry no line, so that an error about them is not blamed on a
// line of the file.
func (s Setting) apply(root *yaml.Node) error {
	val, err := s.valueNode()
	if err != nil {
		return err
	}
	keys := strings.Split(s.Path, ".")
	cur := root
	for i, k := range keys {
		if cur.Kind != yaml.MappingNode {
			where := strings.Join(keys[:i], ".")
			return &Error{Path: s.Path, Msg: fmt.Sprintf("cannot set it: %s is %s, not a mapping", where, got(cur))}
		}
		if i == len(keys)-1 {
			setKey(cur, k, val)
			return nil
		}
		cur = childMapping(cur, k)
	}
	return nil
}

// valueNode parses the setting's value as one YAML value without a line.
func (s Setting) valueNode() (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s.Value), &doc); err != nil {
		msg := strings.TrimPrefix(oneLine(err.Error()), "yaml: ")
		if m := reYAMLLine.FindStringSubmatch("yaml: " + msg); m != nil {
			msg = m[2] // the value is one line of its own
		}
		return nil, &Error{Path: s.Path, Msg: fmt.Sprintf("the value %q is not valid YAML: %s", s.Value, msg)}
	}
	n := &doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == 0 || n.Kind == yaml.DocumentNode {
		// An empty value: the key written with nothing after it.
		n = &yaml.Node{Kind: yaml.ScalarNode, Tag: nullTag}
	}
	unlined(n)
	return n, nil
}

// unlined clears the line and column of n and of every node under it.
func unlined(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		unlined(c)
	}
}

// setKey gives the mapping m the value val at key: an explicit key is
// replaced (with a key node of no line), a key only merged in or absent
// is added, so that it wins over the merged ones.
func setKey(m *yaml.Node, key string, val *yaml.Node) {
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if c := m.Content[i]; c.Value == key && !(c.Value == mergeKey && c.Style == 0) {
			m.Content[i], m.Content[i+1] = k, val
			return
		}
	}
	m.Content = append(m.Content, k, val)
}

// childMapping returns the value at key of the mapping m, to write into:
// an explicit mapping is returned as it is; an alias or a merged value is
// replaced by a copy in m, so that the other places that use it keep their
// values; a missing or null value by an empty mapping. A value that is no
// mapping is returned as it is, for the caller to refuse. An explicit key
// keeps its line: errors about its other fields still point at the file.
func childMapping(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if c := m.Content[i]; c.Value != key || (c.Value == mergeKey && c.Style == 0) {
			continue
		}
		v := m.Content[i+1]
		switch {
		case isNull(v):
			v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		case v.Kind == yaml.AliasNode && v.Alias != nil:
			v = copyNode(v.Alias)
		}
		m.Content[i+1] = v
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if _, merged := mappingValue(m, key, 0); merged != nil && !isNull(merged) {
		if merged.Kind == yaml.AliasNode && merged.Alias != nil {
			merged = merged.Alias
		}
		v = copyNode(merged)
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

// copyNode copies n and the mappings and lists under it (aliases stay
// aliases: they are copied again if a setting goes through them).
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = copyNode(x)
	}
	return &c
}
