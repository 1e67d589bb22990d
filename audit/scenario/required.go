package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkRequired refuses a scenario that leaves out a field the reference
// marks required (Required "yes") inside a section the scenario writes,
// with "required" rather than the range check its zero value would fail
// ("must be in (0, 1), got 0" for a missing audit.confidence). It reads
// the YAML text, so a field written as 0 is told apart from a missing one.
// A field required on a condition ("with release.mode = snapshots",
// "unless sampler.sgld.step.gamma = 0") is checked where the condition
// holds in the text, unwritten fields taking their documented defaults.
// The top-level sections (whose need depends on the sampler) are left to
// validation.
func (c *Config) checkRequired() error {
	if c.src == nil {
		return nil
	}
	for _, f := range Reference() {
		if f.Required == "" || f.IsChoice() || !strings.Contains(f.Path, ".") {
			continue
		}
		parent, key := splitPath(f.Path)
		if p, ok := strings.CutPrefix(f.Required, "with "); ok && !strings.Contains(p, " ") {
			if pp, _ := splitPath(p); pp == parent {
				continue // two fields that go together (claim.epsilon and claim.delta): validation says so
			}
		}
		for _, m := range mappingsAt(c.src.root, parent, "", c.src.root.Line) {
			if _, v := mappingValue(m.node, key, 0); v != nil || !c.requiredHere(f.Required) {
				continue
			}
			msg := "required"
			if f.Required != "yes" {
				msg += " " + f.Required
			}
			if f.Range != "" {
				msg += " (allowed: " + f.Range + ")"
			}
			if f.Example != "" {
				msg += ", e.g. " + f.Example
			}
			return &Error{Line: m.line, Path: strings.TrimPrefix(m.path+"."+key, "."), Msg: msg}
		}
	}
	return nil
}

// writtenMapping is a mapping the YAML text holds at a path: its node, the
// path with list indices filled in ("data.records[3]") and the line of its
// key.
type writtenMapping struct {
	node *yaml.Node
	path string
	line int
}

// mappingsAt returns the mappings the YAML text holds at a reference path
// ("neighbour.deepfool.sampler.sgld", "data.records[]"): none when a step
// is absent or not a mapping (decoding reports a wrong kind), one per list
// element under "[]".
func mappingsAt(n *yaml.Node, path, prefix string, line int) []writtenMapping {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if path == "" {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		return []writtenMapping{{n, prefix, line}}
	}
	step, rest, _ := strings.Cut(path, ".")
	key, list := strings.CutSuffix(step, "[]")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	k, v := mappingValue(n, key, 0)
	if v == nil {
		return nil
	}
	name := strings.TrimPrefix(prefix+"."+key, ".")
	if !list {
		return mappingsAt(v, rest, name, k.Line)
	}
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.SequenceNode {
		return nil
	}
	var out []writtenMapping
	for i, e := range v.Content {
		out = append(out, mappingsAt(e, rest, fmt.Sprintf("%s[%d]", name, i), e.Line)...)
	}
	return out
}

// requiredHere evaluates a Required condition against the YAML text: "yes",
// or "with C" / "unless C" where C is "P", "P = V" or "P ≠ V" joined by
// " or " (P a field path, present or equal to V; a field not written has
// its documented default; numbers compare as numbers).
func (c *Config) requiredHere(cond string) bool {
	switch {
	case cond == "yes":
		return true
	case strings.HasPrefix(cond, "with "):
		return c.holds(strings.TrimPrefix(cond, "with "))
	case strings.HasPrefix(cond, "unless "):
		return !c.holds(strings.TrimPrefix(cond, "unless "))
	}
	return false
}

func (c *Config) holds(cond string) bool {
	for _, term := range strings.Split(cond, " or ") {
		if p, v, ok := strings.Cut(term, " ≠ "); ok {
			if !sameScalar(c.writtenValue(p), v) {
				return true
			}
		} else if p, v, ok := strings.Cut(term, " = "); ok {
			if sameScalar(c.writtenValue(p), v) {
				return true
			}
		} else if parent, key := splitPath(term); len(mappingsAt(c.src.root, parent, "", 0)) > 0 {
			if _, n := mappingValue(mappingsAt(c.src.root, parent, "", 0)[0].node, key, 0); n != nil {
				return true
			}
		}
	}
	return false
}

// writtenValue is the text of the scalar at path in the YAML, or the
// field's documented default where it is not written.
func (c *Config) writtenValue(path string) string {
	parent, key := splitPath(path)
	if ms := mappingsAt(c.src.root, parent, "", 0); len(ms) > 0 {
		if _, n := mappingValue(ms[0].node, key, 0); n != nil {
			for n.Kind == yaml.AliasNode && n.Alias != nil {
				n = n.Alias
			}
			return n.Value
		}
	}
	f, _ := Lookup(path)
	return f.Default
}

// sameScalar compares two scalars' texts, as numbers where both are.
func sameScalar(a, b string) bool {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return x == y
	}
	return a == b
}
