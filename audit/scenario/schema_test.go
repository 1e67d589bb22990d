package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The schema is generated, never stored: JSONSchema is valid JSON whose
// top level is an object schema of the scenario's sections, and writing it
// twice gives the same bytes (editors cache it).
func TestSchemaIsStable(t *testing.T) {
	a, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := JSONSchema()
	if !bytes.Equal(a, b) {
		t.Error("JSONSchema differs between two calls")
	}
	var s map[string]any
	if err := json.Unmarshal(a, &s); err != nil {
		t.Fatal(err)
	}
	props, _ := s["properties"].(map[string]any)
	for _, k := range []string{"model", "sampler", "audit"} {
		if _, ok := props[k]; !ok {
			t.Errorf("schema has no property %q", k)
		}
	}
}

// validate checks a JSON value against the subset of JSON Schema that
// JSONSchema writes: type, properties, additionalProperties: false,
// required, items, enum, minimum, minProperties and maxProperties.
func validate(s map[string]any, v any, path string) error {
	switch s["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not an object", path)
		}
		props, _ := s["properties"].(map[string]any)
		for k, x := range m {
			ps, ok := props[k].(map[string]any)
			if !ok {
				return fmt.Errorf("%s: unknown property %q", path, k)
			}
			if err := validate(ps, x, join(path, k)); err != nil {
				return err
			}
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := m[r.(string)]; !ok {
				return fmt.Errorf("%s: %s is required", path, r)
			}
		}
		if n, ok := s["maxProperties"].(float64); ok && float64(len(m)) > n {
			return fmt.Errorf("%s: more than %g properties", path, n)
		}
		if n, ok := s["minProperties"].(float64); ok && float64(len(m)) < n {
			return fmt.Errorf("%s: fewer than %g properties", path, n)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: not an array", path)
		}
		for i, x := range a {
			if err := validate(s["items"].(map[string]any), x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: not a string", path)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: not a boolean", path)
		}
	case "number", "integer":
		x, ok := v.(float64)
		if !ok {
			return fmt.Errorf("%s: not a number", path)
		}
		if s["type"] == "integer" && x != float64(int64(x)) {
			return fmt.Errorf("%s: not an integer", path)
		}
		if m, ok := s["minimum"].(float64); ok && x < m {
			return fmt.Errorf("%s: below %g", path, m)
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, e := range enum {
			if e == v {
				return nil
			}
		}
		return fmt.Errorf("%s: %v not in %v", path, v, enum)
	}
	return nil
}

// toJSON turns a YAML scenario into the JSON value an editor checks.
func toJSON(t *testing.T, y []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(y, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	json.Unmarshal(b, &out)
	return out
}

// Every scenario of testdata and every example the reference writes is
// valid under the schema; misspelt fields, wrong types, unknown names and
// two models are not.
func TestSchemaAcceptsTheScenarios(t *testing.T) {
	b, _ := JSONSchema()
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../testdata/*.yaml")
	var docs [][]byte
	for _, f := range files {
		y, _ := os.ReadFile(f)
		docs = append(docs, y)
	}
	for _, c := range Combinations() {
		y, _ := ExampleScenario(c.Sampler, c.Model)
		docs = append(docs, []byte(y))
	}
	docs = append(docs, DefaultScenario())
	for i, y := range docs {
		if err := validate(s, toJSON(t, y), ""); err != nil {
			t.Errorf("scenario %d: %v\n%.200s", i, err, y)
		}
	}
	bad := map[string]string{
		"misspelt field":  replaceLine(4, "  linreg: {d: 1, alpha: 1, beta: 1}"),
		"wrong type":      replaceLine(15, `  trials: "many"`),
		"not an integer":  replaceLine(15, "  trials: 40.5"),
		"unknown name":    replaceLine(12, "    scheme: random"),
		"two models":      replaceLine(4, "  linreg: {dim: 1, alpha: 1, beta: 1}\n  logistic: {dim: 1, alpha: 1}"),
		"negative seed":   replaceLine(2, "seed: -1"),
		"missing section": strings.Replace(base, "audit:\n  trials: 40\n  split: {train: 0.5, eval: 0.5}\n  delta: 1.0e-5\n  confidence: 0.95\n", "", 1),
	}
	for name, y := range bad {
		if err := validate(s, toJSON(t, []byte(y)), ""); err == nil {
			t.Errorf("%s: valid under the schema", name)
		}
	}
}
