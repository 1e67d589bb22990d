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
