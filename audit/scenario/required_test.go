package scenario

import (
	"errors"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Every field the reference marks required, left out of a section the
// scenario writes, is refused as "required" at its path — not with the
// range check its zero value fails ("audit.confidence: must be in (0, 1),
// got 0"), and not accepted as 0. Each field is removed from a scenario
// that parses with it.
func TestMissingRequiredFieldSaysRequired(t *testing.T) {
	bases := append([]string(nil), extraBases...)
	for _, c := range Combinations() {
		if c.Allowed {
			y, _ := ExampleScenario(c.Sampler, c.Model)
			bases = append(bases, y)
		}
	}
	// A DeepFool canary whose crafting models a built-in SGLD trains.
	if b, err := os.ReadFile("../../examples/pytorch/digits_sgld_ci.yaml"); err == nil {
		bases = append(bases, string(b))
	} else {
		t.Fatal(err)
	}
	var parsed []string
	for _, b := range bases {
		if _, err := ParseConfig([]byte(b)); err == nil {
			parsed = append(parsed, b)
		}
	}
	if len(parsed) < 20 {
		t.Fatalf("only %d of %d base scenarios parse", len(parsed), len(bases))
	}
	checked := 0
	var uncovered []string
	for _, f := range Reference() {
		if f.Required != "yes" || f.IsChoice() || !strings.Contains(f.Path, ".") {
			continue
		}
		found := false
		for _, base := range parsed {
			omitted, ok := edit(t, base, f.Path, nil, false)
			if !ok || omitted == base {
				continue
			}
			found = true
			_, err := ParseConfig([]byte(omitted))
			var e *Error
			want := strings.ReplaceAll(f.Path, "[]", "[0]")
			if !errors.As(err, &e) || e.Path != want || !strings.HasPrefix(e.Msg, "required") || e.Line == 0 {
				t.Errorf("%s left out: got %v, want \"line N: %s: required …\"", f.Path, err, want)
			}
			break
		}
		if found {
			checked++
		} else {
			uncovered = append(uncovered, f.Path)
		}
	}
	t.Logf("%d required fields checked; no base scenario writes %v", checked, uncovered)
	if checked < 60 {
		t.Errorf("only %d required fields checked; not covered: %v", checked, uncovered)
	}
}

// A required field written as 0 is not "missing": it gets its range check.
func TestRequiredFieldWrittenAsZeroGetsItsRange(t *testing.T) {
	base := extraBases[0]
	zero, _ := edit(t, base, "audit.confidence", &yamlZero, false)
	_, err := ParseConfig([]byte(zero))
	if err == nil || !strings.Contains(err.Error(), "audit.confidence: must be in (0, 1), got 0") {
		t.Errorf("confidence: 0 gives %v", err)
	}
	gone, _ := edit(t, base, "audit.confidence", nil, false)
	_, err = ParseConfig([]byte(gone))
	if err == nil || !strings.Contains(err.Error(), "audit.confidence: required (allowed: (0, 1)), e.g. 0.95") {
		t.Errorf("no confidence gives %v", err)
	}
}

var yamlZero = yaml.Node{Kind: yaml.ScalarNode, Value: "0"}

// A field required on a condition says "required" where the condition
// holds in the text, and is not asked for where it does not (numbers
// compare as numbers: gamma written 0.0 needs no b).
func TestConditionallyRequiredFields(t *testing.T) {
	base := string(defaultScenario)
	set := func(y, path, val string) string {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(val), &n); err != nil {
			t.Fatal(err)
		}
		out, ok := edit(t, y, path, n.Content[0], true)
		if !ok {
			t.Fatalf("cannot set %s", path)
		}
		return out
	}
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"decaying step without b", set(base, "sampler.sgld.step.gamma", "0.5"), "sampler.sgld.step.b: required unless sampler.sgld.step.gamma = 0"},
		{"gamma written 0.0", set(base, "sampler.sgld.step.gamma", "0.0"), ""},
		{"snapshots without at", set(base, "release.mode", "snapshots"), "release.at: required with release.mode = snapshots"},
		{"claim with delta only", set(base, "claim.delta", "1e-5"), "claim: epsilon and delta go together"},
		{"claim with epsilon only", set(base, "claim.epsilon", "1"), "claim: epsilon and delta go together"},
		{"claim with gdp only", set(base, "claim.gdp", "1"), ""},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
