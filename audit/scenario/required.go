package scenario

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkRequired refuses a scenario that leaves out a field the reference
// marks required (Required "yes") inside a section the scenario writes,
// with "required" rather than the range check its zero value would fail
// ("must be in (0, 1), got 0" for a missing audit.confidence). It reads
// the YAML text, so a field written as 0 is told apart from a missing one.
// The top-level sections (whose need depends on the sampler) and the
// conditionally required fields are left to validation.
func (c *Config) checkRequired() error {
	if c.src == nil {
		return nil
	}
	for _, f := range Reference() {
		if f.Required != "yes" || f.IsChoice() || !strings.Contains(f.Path, ".") {
			continue
		}
		parent, key := splitPath(f.Path)
		for _, m := range mappingsAt(c.src.root, parent, "", c.src.root.Line) {
			if _, v := mappingValue(m.node, key, 0); v != nil {
				continue
			}
			msg := "required"
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
