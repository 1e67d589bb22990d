package scenario

import (
	"reflect"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
)

// at is the field path of a scenario field given by its YAML path
// ("sampler.sgld.step"), with the Go names of the Config's fields beside
// the YAML keys. Keys that are not fields of a struct (a free mapping's
// names) keep the YAML key as their Go name.
func at(yamlPath string) field.Path {
	var p field.Path
	t := reflect.TypeOf(Config{})
	for _, key := range strings.Split(yamlPath, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice) {
			t = t.Elem()
		}
		goName := key
		if t != nil && t.Kind() == reflect.Struct {
			if i, ok := yamlFields(t).index[key]; ok {
				sf := t.Field(i)
				goName, t = sf.Name, sf.Type
			} else {
				t = nil
			}
		} else {
			t = nil
		}
		p = p.Field(goName, key)
	}
	return p
}

// errAt returns a *field.Error about the scenario field at yamlPath.
func errAt(yamlPath, format string, args ...any) error {
	return field.Errorf(at(yamlPath), format, args...)
}

// wrapAt puts err, a check's error about a value the scenario holds at
// yamlPath, under that path (see field.Wrap).
func wrapAt(err error, yamlPath string) error { return field.Wrap(err, at(yamlPath)) }
