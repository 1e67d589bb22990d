package scenario

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"go.yaml.in/yaml/v3"
)

// Checks of what the YAML text says, beyond what the decoded values can:
// a key written with a value that the decoded Config cannot tell from an
// omitted key (0, an empty list), and a key that the scenario's other
// choices leave without effect. Both would otherwise run silently with
// something else than what was written. Configs that do not come from YAML
// text (a trials file's spec, a Config built in Go) are not concerned:
// their zero values are the defaults, as documented on the Go types.

// checkWritten refuses, in the YAML text, a field written as 0 or as an
// empty list where the reference's range excludes it (writtenZero) and a
// key the scenario's choices ignore (checkInapplicable).
func (c *Config) checkWritten() error {
	if c.src == nil {
		return nil
	}
	if err := c.checkWrittenZeros(); err != nil {
		return err
	}
	return c.checkInapplicable()
}

// reLowerBound reads the lower end of a range written "[1, …]" or
// "(0, …)".
var reLowerBound = regexp.MustCompile(`^([\[(])\s*([0-9]+(?:\.[0-9]+)?)\s*,`)

// zeroExcluded reports whether the reference's range for f leaves out 0
// (for a list: the empty list), so that a 0 written for f can only be
// taken for the omitted field's default: a number whose range starts
// above 0 ("[1, count]", "(0, ∞)"), or a list with no documented meaning
// for [] (no default, or a default that is not the empty list). Required
// fields and the choices of the model, data and sampler sections are left
// to validation, which refuses their 0 with its own words, and so are
// fields whose notes give 0 or [] a documented meaning ("0 also means 1",
// "0 with no_noise").
func zeroExcluded(f Field) bool {
	if f.Required == "yes" || f.IsChoice() {
		return false
	}
	note := f.DefaultNote
	if ref, ok := strings.CutPrefix(note, "as "); ok {
		if g, found := Lookup(ref); found {
			note, f.Default = g.DefaultNote, g.Default
		}
	}
	if strings.Contains(note, "also means") || strings.Contains(note, "0 means") {
		return false
	}
	if strings.HasPrefix(f.Type, "list") {
		return f.Default != "[]"
	}
	if !strings.Contains(f.Type, "integer") && f.Type != "number" {
		return false
	}
	if strings.Contains(f.Range, "0 with") || strings.Contains(f.Range, "0 or") || strings.HasPrefix(f.Range, "0,") {
		return false
	}
	m := reLowerBound.FindStringSubmatch(f.Range)
	if m == nil {
		return false
	}
	lo, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		return false
	}
	return lo > 0 || m[1] == "("
}

// checkWrittenZeros refuses the first field, in reference order, that the
// text writes as 0 (or as an empty list) while its range excludes it: the
// decoder cannot tell "guesses: 0" from no guesses key, so the default
// would run in its place ("guesses: 0" ran with count/10 guesses, and its
// config hash was the default's).
func (c *Config) checkWrittenZeros() error {
	for _, f := range Reference() {
		if !zeroExcluded(f) {
			continue
		}
		parent, key := splitPath(f.Path)
		list := strings.HasPrefix(f.Type, "list")
		for _, m := range mappingsAt(c.src.root, parent, "", c.src.root.Line) {
			k, v := mappingValue(m.node, key, 0)
			if v == nil || !writtenZero(v, list) {
				continue
			}
			return &Error{Line: k.Line, Path: strings.TrimPrefix(m.path+"."+key, "."), Msg: zeroMessage(f, list)}
		}
	}
	return nil
}

// zeroMessage says why a written 0 (or []) is refused and what to write.
func zeroMessage(f Field, list bool) string {
	def := f.Default
	if f.DefaultNote != "" {
		def = f.DefaultNote
	}
	if list {
		msg := fmt.Sprintf("must hold at least one value (%s), got an empty list", f.Range)
		if def != "" {
			msg += fmt.Sprintf("; omit the key for its default (%s)", def)
		}
		return msg
	}
	msg := fmt.Sprintf("must be in %s, got 0", f.Range)
	if def != "" {
		msg += fmt.Sprintf("; 0 is not its default: omit the key for that (%s)", def)
	}
	return msg
}

// writtenZero reports whether the YAML value n is a number equal to 0
// (0, 0.0, -0, 0e3, 0x0, …) or, for a list field, the empty list.
func writtenZero(n *yaml.Node, list bool) bool {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if list {
		return n.Kind == yaml.SequenceNode && len(n.Content) == 0
	}
	if n.Kind != yaml.ScalarNode {
		return false
	}
	switch n.ShortTag() {
	case intTag:
		x, ok := yamlInt(n.Value)
		return ok && x.Sign() == 0
	case floatTag:
		r, ok := new(big.Rat).SetString(strings.ReplaceAll(n.Value, "_", ""))
		return ok && r.Sign() == 0
	}
	return false
}

// written returns the key node of the field at path ("release.every") when
// the YAML text writes it, or nil.
func (c *Config) written(path string) *yaml.Node {
	parent, key := splitPath(path)
	for _, m := range mappingsAt(c.src.root, parent, "", c.src.root.Line) {
		if k, _ := mappingValue(m.node, key, 0); k != nil {
			return k
		}
	}
	return nil
}

// checkInapplicable refuses a key written in the text that the scenario's
// choices leave without effect, naming the key and the choice: the release
// fields of another release.mode than theirs, and the runs design's
// statistics (split, attacks, features, attack_selection) in the canary
// design, whose guesses on canary scores use none of them.
func (c *Config) checkInapplicable() error {
	mode := c.Release.Mode
	if mode == "" {
		mode = mechanisms.ReleaseFinal
	}
	for _, r := range []struct {
		key   string
		modes []mechanisms.ReleaseMode
	}{
		{"estimator", []mechanisms.ReleaseMode{mechanisms.ReleaseEstimator}},
		{"at", []mechanisms.ReleaseMode{mechanisms.ReleaseSnapshots}},
		{"every", []mechanisms.ReleaseMode{mechanisms.ReleaseEpochs, mechanisms.ReleaseTrajectory}},
	} {
		k := c.written("release." + r.key)
		if k == nil || containsMode(r.modes, mode) {
			continue
		}
		names := make([]string, len(r.modes))
		for i, m := range r.modes {
			names[i] = string(m)
		}
		return &Error{Line: k.Line, Path: "release." + r.key, Msg: fmt.Sprintf("only with release.mode %s: it does nothing with mode %s; remove it (or set the mode)", strings.Join(names, " or "), mode)}
	}
	if !c.canaryDesign() {
		return nil
	}
	for _, key := range []string{"split", "attacks", "features", "attack_selection"} {
		if k := c.written("audit." + key); k != nil {
			return &Error{Line: k.Line, Path: "audit." + key, Msg: "not used in the canary design (audit.design: canaries), whose attack guesses on the canaries' scores (audit.canaries.guesses); remove it"}
		}
	}
	return nil
}

func containsMode(ms []mechanisms.ReleaseMode, m mechanisms.ReleaseMode) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}
