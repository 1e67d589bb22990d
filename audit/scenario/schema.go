package scenario

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// JSONSchema returns a JSON Schema (draft 2020-12) of a scenario, written
// from the Go types and the reference table, for editors that check and
// complete YAML against a schema (a scenario file may start with
// "# yaml-language-server: $schema=…/scenario.schema.json", a file written
// by "audit run --print-schema"). It
// states the structure, the types, the required fields, the defaults and
// the allowed names; ranges that depend on other fields (a batch ≤ n) are
// only in the descriptions, and the decoder stays the authority.
func JSONSchema() ([]byte, error) {
	s := schemaFor(reflect.TypeOf(Config{}), "")
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "mcmcaudit scenario"
	s["description"] = "An audit scenario of the audit command (docs/scenario.md)."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

var reEnumToken = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// enumOf reads a Range like "final, epochs, snapshots, trajectory" as the
// list of allowed names, or nil when it is not one.
func enumOf(rng string) []any {
	if rng == "" || rng == "true, false" {
		return nil
	}
	var out []any
	for _, tok := range strings.Split(rng, ", ") {
		if !reEnumToken.MatchString(tok) {
			return nil
		}
		out = append(out, tok)
	}
	return out
}

// schemaFor is the schema of the field of type t at a reference path.
func schemaFor(t reflect.Type, path string) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := map[string]any{}
	f, documented := Lookup(path)
	switch t.Kind() {
	case reflect.Struct:
		structSchema(s, t, path)
	case reflect.Slice:
		s["type"] = "array"
		item := schemaFor(t.Elem(), path+"[]")
		if e := t.Elem(); e.Kind() == reflect.String && documented {
			if enum := enumOf(f.Range); enum != nil {
				item["enum"] = enum
			}
		}
		s["items"] = item
	case reflect.String:
		s["type"] = "string"
		if documented {
			if enum := enumOf(f.Range); enum != nil {
				s["enum"] = enum
			}
		}
	default:
		scalarSchema(s, t.Kind())
	}
	if documented {
		describeSchema(s, f)
	}
	return s
}

// structSchema fills s with the schema of a mapping: its fields, those
// required, and for a choice section exactly one of them.
func structSchema(s map[string]any, t reflect.Type, path string) {
	s["type"] = "object"
	s["additionalProperties"] = false
	props := map[string]any{}
	var required []string
	fs := yamlFields(t)
	for _, name := range fs.names {
		p := join(path, name)
		props[name] = schemaFor(t.Field(fs.index[name]).Type, p)
		if g, ok := Lookup(p); ok && g.Required == "yes" {
			required = append(required, name)
		}
	}
	s["properties"] = props
	if len(required) > 0 {
		s["required"] = required
	}
	if choiceSections[t] {
		s["minProperties"], s["maxProperties"] = 1, 1
	}
}

// scalarSchema sets the type of a boolean or number (nothing for other
// kinds).
func scalarSchema(s map[string]any, k reflect.Kind) {
	switch k {
	case reflect.Bool:
		s["type"] = "boolean"
	case reflect.Float32, reflect.Float64:
		s["type"] = "number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s["type"] = "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s["type"] = "integer"
		s["minimum"] = 0
	}
}

// describeSchema adds the reference entry's meaning, range, condition and
// default to a field's schema.
func describeSchema(s map[string]any, f Field) {
	desc := f.Meaning
	if f.Range != "" {
		desc += " Allowed: " + f.Range + "."
	}
	if f.Required != "" && f.Required != "yes" {
		desc += " Required " + f.Required + "."
	}
	if f.DefaultNote != "" {
		desc += " Default: " + f.DefaultNote + "."
	}
	s["description"] = desc
	if f.Default != "" {
		var v any
		if yaml.Unmarshal([]byte(f.Default), &v) == nil {
			s["default"] = v
		}
	}
}
