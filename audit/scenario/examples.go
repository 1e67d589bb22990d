package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// Combination is a sampler with a model, as the reference lists them.
type Combination struct {
	Sampler, Model string
	// Allowed reports whether the reference allows the pair; Reason is the
	// documented reason when it does not.
	Allowed bool
	Reason  string
}

// Combinations lists every sampler × model pair of the reference, samplers
// and models in the reference's order.
func Combinations() []Combination {
	var out []Combination
	for _, s := range choices("sampler") {
		for _, m := range choices("model") {
			_, key := splitPath(m.Path)
			_, skey := splitPath(s.Path)
			ok := s.Models == nil || slices.Contains(s.Models, key)
			c := Combination{Sampler: skey, Model: key, Allowed: ok}
			if !ok {
				c.Reason = s.OtherModels
			} else if slices.Contains(m.NotSamplers, skey) {
				c.Allowed, c.Reason = false, m.OtherModels
			}
			out = append(out, c)
		}
	}
	return out
}

// choices returns the alternatives of a section (model, data, sampler).
func choices(section string) []Field {
	var out []Field
	for _, f := range reference() {
		if parent, _ := splitPath(f.Path); parent == section && f.IsChoice() {
			out = append(out, f)
		}
	}
	return out
}

// ExampleScenario writes, from the reference alone, the smallest scenario
// for a sampler and a model: every required field (and the first field of
// each "exactly one of" group) with its example value, the model's example
// data and canary record, and what the sampler's entry adds. A test builds
// one for every combination.
func ExampleScenario(sampler, model string) (string, error) {
	sf, ok := Lookup("sampler." + sampler)
	if !ok || !sf.IsChoice() {
		return "", fmt.Errorf("no sampler %q in the reference", sampler)
	}
	mf, ok := Lookup("model." + model)
	if !ok || !mf.IsChoice() {
		return "", fmt.Errorf("no model %q in the reference", model)
	}
	data := mf.ExampleData
	if sf.ExampleData != "" {
		data = sf.ExampleData
	}
	if _, ok := Lookup(data); !ok {
		return "", fmt.Errorf("model.%s: example data %q is not in the reference", model, data)
	}
	g := &generator{set: map[string]string{}}
	var b strings.Builder
	fmt.Fprintf(&b, "# The smallest scenario for sampler %s and model %s, written from the\n# reference's required fields and examples.\n", sampler, model)
	// The choices are marked as set first, so that conditions on them
	// ("with sampler.exact_cyclic_sgld") hold while the sections are filled.
	for _, p := range []string{"model", mf.Path, "data", data, "sampler", sf.Path} {
		g.set[p] = "{…}"
	}
	for _, sec := range []struct{ section, choice string }{{"model", mf.Path}, {"data", data}, {"sampler", sf.Path}} {
		_, key := splitPath(sec.choice)
		body := g.mapping(sec.choice, nil)
		if f, _ := Lookup(sec.choice); strings.HasPrefix(f.Type, "list") {
			body = f.Example // an inline list (data.records)
		}
		fmt.Fprintf(&b, "%s:\n  %s: %s\n", sec.section, key, body)
	}
	nb, _ := Lookup("neighbour")
	switch {
	case mf.ExampleNeighbour != "" && g.required(nb):
		fmt.Fprintf(&b, "neighbour: %s\n", mf.ExampleNeighbour)
	case g.required(nb):
		fmt.Fprintf(&b, "neighbour: %s\n", g.mapping("neighbour", map[string]string{"neighbour.record": mf.ExampleRecord}))
	}
	if sf.ExampleExtra != "" {
		b.WriteString(sf.ExampleExtra + "\n")
	}
	fmt.Fprintf(&b, "audit: %s\n", g.mapping("audit", nil))
	return b.String(), nil
}

// generator fills sections with the reference's examples.
type generator struct {
	// set maps the paths written so far to their YAML text.
	set map[string]string
}

// mapping returns, as a YAML flow mapping, the fields of section that are
// required (or first of their group), each with its example value, a
// mapping of its own required fields, or an override.
func (g *generator) mapping(section string, override map[string]string) string {
	var parts []string
	groups := map[string]bool{}
	for _, f := range reference() {
		parent, key := splitPath(f.Path)
		if parent != section {
			continue
		}
		first := f.Group != "" && !groups[f.Group]
		if f.Group != "" {
			groups[f.Group] = true
		}
		if !first && !g.required(f) {
			continue
		}
		val, ok := override[f.Path]
		if !ok {
			if g.hasRequiredChildren(f.Path) {
				val = g.mapping(f.Path, override)
			} else {
				val = f.Example
			}
		}
		g.set[f.Path] = val
		parts = append(parts, key+": "+val)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// hasRequiredChildren reports whether a field is a mapping with required
// fields of its own.
func (g *generator) hasRequiredChildren(path string) bool {
	for _, f := range reference() {
		if parent, _ := splitPath(f.Path); parent == path && (f.Required == "yes" || f.Group != "") {
			return true
		}
	}
	return false
}

// required evaluates a field's Required condition against what has been
// generated (a field not written has its default).
func (g *generator) required(f Field) bool {
	r := f.Required
	switch {
	case r == "yes":
		return true
	case strings.HasPrefix(r, "with "):
		return g.holds(strings.TrimPrefix(r, "with "))
	case strings.HasPrefix(r, "unless "):
		return !g.holds(strings.TrimPrefix(r, "unless "))
	}
	return false
}

// holds evaluates "P", "P = V", "P ≠ V", joined by " or ".
func (g *generator) holds(cond string) bool {
	for _, c := range strings.Split(cond, " or ") {
		if p, v, ok := strings.Cut(c, " ≠ "); ok {
			if g.value(p) != v {
				return true
			}
			continue
		}
		if p, v, ok := strings.Cut(c, " = "); ok {
			if g.value(p) == v {
				return true
			}
			continue
		}
		if _, set := g.set[c]; set {
			return true
		}
	}
	return false
}

// value is the YAML text of a field as generated, or its default.
func (g *generator) value(path string) string {
	if v, ok := g.set[path]; ok {
		return v
	}
	f, _ := Lookup(path)
	return f.Default
}
