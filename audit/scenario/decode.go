package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/internal/suggest"
)

// Limits on a scenario document, so that a mistaken or hostile file is
// refused before it can exhaust the machine.
const (
	// MaxConfigBytes bounds the size of a scenario file.
	MaxConfigBytes = 64 << 20
	// MaxConfigNodes bounds the number of YAML nodes of a scenario:
	// scalars, lists and mappings, each alias counted as the nodes it
	// expands to.
	MaxConfigNodes = 1_000_000
)

// Error is a scenario error located in the YAML text: Error() reads
// "line 7: sampler.sgld.step: must be a mapping {eta, b, gamma}, got the
// number 0.05".
type Error struct {
	// Line is the 1-based line of the offending value or key (0: unknown,
	// e.g. for a value given on the command line).
	Line int
	// Path is the field in YAML terms ("sampler.sgld.step",
	// "data.records[3].x"); empty for the document as a whole.
	Path string
	// Msg says what is wrong and what is allowed.
	Msg string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	switch {
	case e.Path != "":
		b.WriteString(e.Path + ": ")
	case e.Line == 0:
		b.WriteString("config: ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// source is the YAML text a config was decoded from, kept so that errors
// found later (validation, Build) can name the line of the field.
type source struct {
	root *yaml.Node
}

// decodeConfig turns one YAML document into a Config: the text is parsed
// into nodes, the settings are written into them in order, then the nodes
// are walked field by field against the Config types, with every error
// naming the line and the field path.
func decodeConfig(b []byte, sets []Setting) (*Config, error) {
	if len(b) > MaxConfigBytes {
		return nil, &Error{Msg: fmt.Sprintf("the document has %d bytes, more than the limit of %d (64 MiB)", len(b), MaxConfigBytes)}
	}
	if est, line := estimateNodes(b); est > MaxConfigNodes {
		return nil, &Error{Line: line, Msg: fmt.Sprintf("too many YAML nodes: a scenario may hold at most %d values, lists and mappings, and this document reaches that limit by this line", MaxConfigNodes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "empty document"}
		}
		return nil, syntaxError(err, b)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := 0
		if err == nil {
			line = extra.Line
		}
		return nil, &Error{Line: line, Msg: "only one YAML document is allowed (remove the second \"---\" and what follows)"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, &Error{Msg: "empty document"}
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == nullTag {
		return nil, &Error{Line: root.Line, Msg: "empty document"}
	}
	if root.Kind == yaml.MappingNode {
		// A document that is no mapping is refused by the decoder.
		for _, s := range sets {
			if err := s.apply(root); err != nil {
				return nil, err
			}
		}
	}
	d := &decoder{}
	var c Config
	if err := d.value(root, reflect.ValueOf(&c).Elem(), ""); err != nil {
		return nil, err
	}
	c.src = &source{root: root}
	return &c, nil
}

var reYAMLLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError rewrites a YAML parser error as "line N: not valid YAML: …".
// The YAML library numbers lines from 1 in its scanner's errors but from 0
// in its parser's (the "did not find expected …" family, reported at the
// start of the unfinished list or mapping, and with no line at all on the
// first line); both are given here from 1.
func syntaxError(err error, src []byte) error {
	msg := strings.TrimPrefix(oneLine(err.Error()), "yaml: ")
	line := 0
	if m := reYAMLLine.FindStringSubmatch("yaml: " + msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	for _, p := range []string{"did not find expected", "found duplicate %", "found incompatible YAML document", "found undefined tag handle"} {
		if strings.HasPrefix(msg, p) {
			line++
			break
		}
	}
	if line == 0 && strings.Contains(msg, "control characters") {
		line = controlCharLine(src)
	}
	return &Error{Line: line, Msg: "not valid YAML: " + msg}
}

// controlCharLine returns the line of the first control character YAML
// refuses (C0 but tab, newline and carriage return, and DEL), or 0.
func controlCharLine(b []byte) int {
	line := 1
	for _, ch := range b {
		switch {
		case ch == '\n':
			line++
		case ch < 0x20 && ch != '\t' && ch != '\r', ch == 0x7f:
			return line
		}
	}
	return 0
}

// estimateNodes bounds, from above and without parsing, the number of
// nodes the YAML parser would build from b, and returns the line on which
// the bound first exceeds MaxConfigNodes. Every node starts a new token
// after a separator (a scalar, alias, "[" or "{") or is implied by an
// indicator: a block mapping or the null after a ":", a block sequence or
// an empty item after a "-", the same after a "?", an empty value before
// a "," or "}", and the document itself. Counting each of those, inside
// comments and quoted text too, can only overcount; it lets a file of
// millions of list items be refused before the parser allocates them. Why
// the count bounds the nodes: docs/derivations/scenario-decoding.md.
func estimateNodes(b []byte) (est, line int) {
	est, line = 1, 1
	sep := true
	for _, ch := range b {
		switch ch {
		case '\n':
			line++
			sep = true
		case ' ', '\t', '\r':
			sep = true
		case ':', '-', '?':
			est += 2
			if sep {
				est++ // it may also start a scalar ("-1", "?x")
			}
			sep = true
		case ',', '}', ']':
			est++
			sep = true
		case '[', '{':
			est++
			sep = true
		default:
			if sep {
				est++
			}
			sep = false
		}
		if est > MaxConfigNodes {
			return est, line
		}
	}
	return est, line
}

const (
	nullTag  = "!!null"
	boolTag  = "!!bool"
	intTag   = "!!int"
	floatTag = "!!float"
	strTag   = "!!str"
	mergeKey = "<<"
)

// decoder walks YAML nodes into Go values.
type decoder struct {
	nodes int
}

// fail returns an error at node n for the field at path.
func fail(n *yaml.Node, path, format string, args ...any) error {
	return &Error{Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// value decodes n into v, the field at path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) error {
	if d.nodes++; d.nodes > MaxConfigNodes {
		return fail(n, path, "too many YAML nodes: a scenario may hold at most %d values, lists and mappings (aliases count as what they expand to)", MaxConfigNodes)
	}
	if n.Kind == yaml.AliasNode {
		return d.alias(n, v, path)
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		v.Set(reflect.Zero(v.Type()))
		return nil
	}
	t := v.Type()
	switch t.Kind() {
	case reflect.Pointer:
		e := reflect.New(t.Elem())
		if err := d.value(n, e.Elem(), path); err != nil {
			return err
		}
		v.Set(e)
		return nil
	case reflect.Struct:
		return d.mapping(n, v, path)
	case reflect.Map:
		return d.freeMapping(n, v, path)
	case reflect.Slice:
		return d.sequence(n, v, path)
	}
	if n.Kind != yaml.ScalarNode {
		return fail(n, path, "must be %s, got %s", withArticle(typeText(t)), got(n))
	}
	return scalar(n, v, path)
}

// alias decodes the alias node n into v, the field at path, as the node it
// names; an error found at that node itself is moved to the alias's line,
// with a note naming the anchor's line.
func (d *decoder) alias(n *yaml.Node, v reflect.Value, path string) error {
	if n.Alias == nil {
		return fail(n, path, "unknown alias *%s", n.Value)
	}
	if err := d.value(n.Alias, v, path); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Path == path && e.Line == n.Alias.Line {
			e.Line = n.Line
			e.Msg += fmt.Sprintf(" (through the alias *%s of line %d)", n.Value, n.Alias.Line)
		}
		return err
	}
	return nil
}

// sequence decodes a YAML sequence into the slice v, the field at path.
func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if n.Kind != yaml.SequenceNode {
		return fail(n, path, "must be %s, got %s", withArticle(typeText(t)), got(n))
	}
	s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if t.Elem().Kind() == reflect.String && isNull(item) {
			// An unquoted null (or ~, or nothing after "- ") in a
			// list of strings would become an empty string: in a
			// program's command, an empty argument nobody wrote.
			return fail(item, fmt.Sprintf("%s[%d]", path, i), "must be a string, got nothing (null); write \"\" for an empty string")
		}
		if err := d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

// isNull reports whether n is, or is an alias of, a null scalar.
func isNull(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag
}

// mapping decodes a YAML mapping into the struct v.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		return fail(n, path, "must be %s, got %s", withArticle(typeText(t)), got(n))
	}
	fields := yamlFields(t)
	pairs, err := d.pairs(n, path)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		key := p.key.Value
		idx, ok := fields.index[key]
		if !ok {
			return fail(p.key, path, "%s", unknownField(key, path, fields.names))
		}
		if err := d.value(p.val, v.Field(idx), join(path, key)); err != nil {
			return err
		}
	}
	return nil
}

// freeMapping decodes a YAML mapping into a map with string keys (any key
// is allowed; values keep their strict types).
func (d *decoder) freeMapping(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if n.Kind != yaml.MappingNode || t.Key().Kind() != reflect.String {
		return fail(n, path, "must be %s, got %s", withArticle(typeText(t)), got(n))
	}
	pairs, err := d.pairs(n, path)
	if err != nil {
		return err
	}
	m := reflect.MakeMapWithSize(t, len(pairs))
	for _, p := range pairs {
		e := reflect.New(t.Elem()).Elem()
		if err := d.value(p.val, e, join(path, p.key.Value)); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(p.key.Value).Convert(t.Key()), e)
	}
	v.Set(m)
	return nil
}

type pair struct{ key, val *yaml.Node }

// pairs lists the keys of a mapping with their values, the keys merged in
// by "<<: *anchor" (YAML's merge key) included unless given explicitly.
// A key given twice is an error.
func (d *decoder) pairs(n *yaml.Node, path string) ([]pair, error) {
	var out []pair
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == nullTag {
			return nil, fail(k, path, "keys must be plain names, got %s", got(k))
		}
		if k.Value == mergeKey && k.Style == 0 {
			merges = append(merges, val)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			return nil, fail(k, join(path, k.Value), "given twice (first on line %d)", first.Line)
		}
		seen[k.Value] = k
		out = append(out, pair{k, val})
	}
	// Merged keys: explicit keys win, then earlier merged maps over later.
	for _, m := range merges {
		var maps []*yaml.Node
		switch {
		case m.Kind == yaml.SequenceNode:
			maps = m.Content
		default:
			maps = []*yaml.Node{m}
		}
		for _, mm := range maps {
			target := mm
			if target.Kind == yaml.AliasNode && target.Alias != nil {
				target = target.Alias
			}
			if target.Kind != yaml.MappingNode {
				return nil, fail(mm, path, "a merge (<<) needs a mapping or a list of mappings, got %s", got(mm))
			}
			sub, err := d.pairs(target, path)
			if err != nil {
				return nil, err
			}
			for _, p := range sub {
				if _, dup := seen[p.key.Value]; dup {
					continue
				}
				seen[p.key.Value] = p.key
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// structFields are a struct's YAML keys.
type structFields struct {
	names []string
	index map[string]int
}

// yamlFields lists the exported fields of t by their YAML names. Types
// are few and asked for often (every field of a scenario, every entry of
// the reference): each is listed once per process. The result is shared:
// callers only read it.
func yamlFields(t reflect.Type) structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(structFields)
	}
	f := listYAMLFields(t)
	fieldCache.Store(t, f)
	return f
}

// fieldCache maps a reflect.Type to its structFields.
var fieldCache sync.Map

// listYAMLFields is yamlFields without the cache.
func listYAMLFields(t reflect.Type) structFields {
	f := structFields{index: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name := yamlName(sf)
		if name == "-" {
			continue
		}
		f.names = append(f.names, name)
		f.index[name] = i
	}
	return f
}

// yamlName is the YAML key of a struct field.
func yamlName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
	if name == "" {
		name = strings.ToLower(sf.Name)
	}
	return name
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknownField explains an unknown key: the nearest field name of the
// mapping, or where a field of that name lives, or the fields allowed.
func unknownField(key, path string, names []string) string {
	msg := fmt.Sprintf("unknown field %s", clip.Quote(key))
	if path == "" {
		msg = fmt.Sprintf("unknown top-level field %s", clip.Quote(key))
	}
	if near, ok := suggest.Nearest(key, names); ok {
		return msg + fmt.Sprintf(" (did you mean %q?)", near)
	}
	if elsewhere := fieldsNamed(key, path); len(elsewhere) > 0 {
		return msg + fmt.Sprintf(" (%s is a field of %s)", key, strings.Join(elsewhere, ", "))
	}
	return msg + fmt.Sprintf(" (allowed here: %s)", strings.Join(names, ", "))
}

// fieldsNamed lists the sections below path (or anywhere, at the top
// level) that have a field called key, so that a field written one level
// too high is pointed to where it belongs.
func fieldsNamed(key, path string) []string {
	var out []string
	for _, f := range Reference() {
		parent, last := splitPath(f.Path)
		if last != key {
			continue
		}
		if path == "" || strings.HasPrefix(parent, path+".") {
			out = append(out, parent)
		}
	}
	sort.Strings(out)
	if len(out) > 4 {
		out = append(out[:4], "…")
	}
	return out
}

// splitPath splits "a.b.c" into "a.b" and "c".
func splitPath(p string) (parent, last string) {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

var reLeadingZero = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

// scalar decodes a scalar node into a string, bool, integer or float,
// reading numbers as the YAML library resolves them (underscores
// ignored, 0x/0o/0b prefixes, .inf and .nan) but exactly.
func scalar(n *yaml.Node, v reflect.Value, path string) error {
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
		return nil
	case reflect.Bool:
		b, ok := yamlBools[n.Value]
		if tag != boolTag || !ok {
			return fail(n, path, "must be true or false, got %s", got(n))
		}
		v.SetBool(b)
		return nil
	case reflect.Float32, reflect.Float64:
		switch tag {
		case floatTag:
			if f, ok := yamlFloat(n.Value); ok {
				v.SetFloat(f)
				return nil
			}
		case intTag:
			if x, ok := yamlInt(n.Value); ok {
				f, _ := new(big.Float).SetInt(x).Float64()
				v.SetFloat(f)
				return nil
			}
		default:
			if _, err := strconv.ParseFloat(n.Value, 64); errors.Is(err, strconv.ErrRange) {
				return fail(n, path, "must be a number within ±1.8e308, got %s", n.Value)
			}
		}
		return fail(n, path, "must be a number, got %s", got(n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return integer(n, v, path, tag)
	}
	return fail(n, path, "cannot hold a value of Go type %s (a bug: please report it)", v.Type())
}

// yamlBools are the spellings of booleans YAML resolves as such.
var yamlBools = map[string]bool{"true": true, "True": true, "TRUE": true, "false": false, "False": false, "FALSE": false}

// yamlFloat reads a !!float scalar.
func yamlFloat(s string) (float64, bool) {
	switch strings.TrimPrefix(s, "+") {
	case ".inf", ".Inf", ".INF":
		return math.Inf(1), true
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1), true
	case ".nan", ".NaN", ".NAN":
		return math.NaN(), true
	}
	for _, t := range []string{s, strings.ReplaceAll(s, "_", "")} {
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f, true
		}
	}
	return 0, false
}

// yamlInt reads a !!int scalar exactly (any size).
func yamlInt(s string) (*big.Int, bool) {
	return new(big.Int).SetString(strings.ReplaceAll(s, "_", ""), 0)
}

// integer decodes an exact integer: an integer literal, or a number
// written as a float (1e6, 40.0) when its decimal value is exactly an
// integer in range. Anything else is an error naming the allowed range.
func integer(n *yaml.Node, v reflect.Value, path, tag string) error {
	lo, hi := intLimits(v.Type())
	rangeText := fieldRange(path)
	if rangeText == "" {
		rangeText = fmt.Sprintf("[%s, %s]", lo, hi)
	}
	bad := func(why string) error {
		return fail(n, path, "must be an integer in %s, got %s%s", rangeText, describeScalar(n), why)
	}
	var x *big.Int
	switch tag {
	case intTag:
		if reLeadingZero.MatchString(n.Value) {
			return fail(n, path, "%s has a leading zero, which YAML would read as an octal number; write it without the zero (or as 0o… for octal)", n.Value)
		}
		var ok bool
		if x, ok = yamlInt(n.Value); !ok {
			return bad("")
		}
	case floatTag:
		r, ok := new(big.Rat).SetString(strings.ReplaceAll(n.Value, "_", ""))
		if !ok {
			return bad("")
		}
		if !r.IsInt() {
			return bad(" (not a whole number)")
		}
		x = r.Num()
	default:
		return bad("")
	}
	if x.Cmp(lo) < 0 || x.Cmp(hi) > 0 {
		return bad(" (out of range)")
	}
	if v.CanInt() {
		v.SetInt(x.Int64())
	} else {
		v.SetUint(x.Uint64())
	}
	return nil
}

// intLimits returns the range of an integer type.
func intLimits(t reflect.Type) (lo, hi *big.Int) {
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		hi = new(big.Int).Lsh(big.NewInt(1), uint(bits))
		return big.NewInt(0), hi.Sub(hi, big.NewInt(1))
	}
	hi = new(big.Int).Lsh(big.NewInt(1), uint(bits-1))
	lo = new(big.Int).Neg(hi)
	return lo, hi.Sub(hi, big.NewInt(1))
}

// fieldRange returns the documented range of the field at path (list
// indices removed), or "".
func fieldRange(path string) string {
	if f, ok := Lookup(genericPath(path)); ok {
		return f.Range
	}
	return ""
}

var reIndex = regexp.MustCompile(`\[\d+\]`)

// genericPath turns "data.records[3].x[1]" into "data.records[].x[]":
// the reference's name of a field inside lists.
func genericPath(path string) string { return reIndex.ReplaceAllString(path, "[]") }

// got describes a node in user terms: "the number 0.05", "the string
// "abc"", "a list of 3 items", "a mapping {a, b}".
func got(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.SequenceNode:
		switch len(n.Content) {
		case 0:
			return "an empty list"
		case 1:
			return "a list of 1 item"
		}
		return fmt.Sprintf("a list of %d items", len(n.Content))
	case yaml.MappingNode:
		var keys []string
		for i := 0; i < len(n.Content); i += 2 {
			keys = append(keys, n.Content[i].Value)
		}
		if len(keys) > 6 {
			keys = append(keys[:6], "…")
		}
		return "a mapping {" + strings.Join(keys, ", ") + "}"
	}
	return describeScalar(n)
}

// describeScalar names a scalar with its YAML type.
func describeScalar(n *yaml.Node) string {
	val := n.Value
	if r := []rune(val); len(r) > 40 {
		val = string(r[:39]) + "…"
	}
	switch n.ShortTag() {
	case intTag, floatTag:
		return "the number " + val
	case boolTag:
		return "the boolean " + val
	case nullTag:
		return "nothing (null)"
	}
	return "the string " + strconv.Quote(val)
}

// choiceSections are the sections that hold exactly one of their keys.
var choiceSections = map[reflect.Type]bool{
	reflect.TypeOf(ModelConfig{}):   true,
	reflect.TypeOf(DataConfig{}):    true,
	reflect.TypeOf(SamplerConfig{}): true,
}

// typeText describes a Go type in YAML terms: "number", "integer",
// "list of numbers", "mapping {eta, b, gamma}", …
func typeText(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "non-negative integer"
	case reflect.Slice:
		return "list of " + plural(typeText(t.Elem()))
	case reflect.Map:
		return "mapping of names to " + plural(typeText(t.Elem()))
	case reflect.Struct:
		names := yamlFields(t).names
		if choiceSections[t] {
			return "mapping with one key of " + strings.Join(names, ", ")
		}
		return "mapping {" + strings.Join(names, ", ") + "}"
	}
	return t.String()
}

func plural(s string) string {
	switch {
	case strings.HasPrefix(s, "mapping"):
		return "mappings" + strings.TrimPrefix(s, "mapping")
	case strings.HasPrefix(s, "list of"):
		return "lists" + strings.TrimPrefix(s, "list")
	case s == "boolean":
		return "booleans"
	}
	return s + "s"
}

func withArticle(s string) string {
	switch {
	case s == "boolean":
		return "true or false"
	case strings.IndexByte("aeiou", s[0]) >= 0:
		return "an " + s
	}
	return "a " + s
}

// locate attaches the line (and, for a sampler's own checks, the sampler's
// key) to an error about a scenario field: a *field.Error whose path,
// read in YAML names, starts at the top of the scenario, as Validate's and
// Build's errors do. The path comes from the error, never from its text.
// Other errors (an engine option's, named in Go terms) are returned as they
// are. A value changed after decoding (a command-line override) is not
// attributed to the file.
func (c *Config) locate(err error) error {
	if err == nil {
		return nil
	}
	var located *Error
	if errors.As(err, &located) {
		return err
	}
	var fe *field.Error
	if !errors.As(err, &fe) || !scenarioPath(fe.Path) {
		return err
	}
	path := c.fullPath(fe.Path)
	e := &Error{Path: path.YAML(), Msg: fe.Msg}
	if c.src != nil {
		e.Line = c.lineOf(path)
	}
	return e
}

// fullPath returns p, a path in the scenario's terms or in a mechanism's
// (which holds the sampler as "sampler" without the scenario's key), in
// the scenario's terms.
func (c *Config) fullPath(p field.Path) field.Path {
	if len(p) > 0 && p[0].YAML == "sampler" {
		if key := c.samplerKey(); key != "" && (len(p) == 1 || p[1].YAML != key) {
			sf := reflect.TypeOf(SamplerConfig{}).Field(yamlFields(reflect.TypeOf(SamplerConfig{})).index[key])
			p = append(field.Path{p[0], {Go: sf.Name, YAML: key}}, p[1:]...)
		}
	}
	return p
}

// named writes an error about a scenario field with its YAML path, as
// locate does, but without its line.
func (c *Config) named(err error) error {
	var fe *field.Error
	if err == nil || !errors.As(err, &fe) || !scenarioPath(fe.Path) {
		return err
	}
	return &Error{Path: c.fullPath(fe.Path).YAML(), Msg: fe.Msg}
}

// scenarioPath reports whether p names a scenario field: every step has
// a YAML name and the first is a top-level key of the scenario.
func scenarioPath(p field.Path) bool {
	if len(p) == 0 || p[0].IsIndex() {
		return false
	}
	for _, s := range p {
		if !s.IsIndex() && s.YAML == "" {
			return false
		}
	}
	_, known := yamlFields(reflect.TypeOf(Config{})).index[p[0].YAML]
	return known
}

// lineOf returns the line of the deepest field on path written in the
// YAML text (the key's line for a mapping entry), or 0 when the value at
// path is no longer the one decoded from the text.
func (c *Config) lineOf(path field.Path) int {
	n, line, full := lookupNode(c.src.root, path)
	if n == nil {
		return 0
	}
	if full && n.Kind == yaml.ScalarNode {
		cur, found := valueAt(c, path)
		if !found {
			return 0
		}
		was := reflect.New(reflect.TypeOf(cur)).Elem()
		// Compared as text, so that NaN equals NaN.
		if err := (&decoder{}).value(n, was, path.YAML()); err != nil || fmt.Sprint(was.Interface()) != fmt.Sprint(cur) {
			return 0
		}
	}
	return line
}

// lookupNode follows path down the YAML nodes, through
// aliases and merge keys. It returns the deepest node reached, its line
// (the key's line for a mapping entry) and whether the whole path was.
func lookupNode(root *yaml.Node, path field.Path) (*yaml.Node, int, bool) {
	// A field missing from the top level is blamed on the document's
	// first line.
	n, line := root, root.Line
	for _, seg := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yaml.Node
		nextLine := 0
		if seg.IsIndex() {
			if i := seg.Index; n.Kind == yaml.SequenceNode && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				nextLine = next.Line
			}
		} else if n.Kind == yaml.MappingNode {
			if k, v := mappingValue(n, seg.YAML, 0); v != nil {
				next, nextLine = v, k.Line
			}
		}
		if next == nil {
			return n, line, false
		}
		n, line = next, nextLine
	}
	return n, line, true
}

// mappingValue finds key in a mapping, explicit keys before merged ones.
func mappingValue(m *yaml.Node, key string, depth int) (k, v *yaml.Node) {
	if depth > 100 {
		return nil, nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
		if m.Content[i].Value == mergeKey && m.Content[i].Style == 0 {
			merges = append(merges, m.Content[i+1])
		}
	}
	for _, mm := range merges {
		list := []*yaml.Node{mm}
		if mm.Kind == yaml.SequenceNode {
			list = mm.Content
		}
		for _, t := range list {
			if t.Kind == yaml.AliasNode && t.Alias != nil {
				t = t.Alias
			}
			if t.Kind == yaml.MappingNode {
				if k, v := mappingValue(t, key, depth+1); v != nil {
					return k, v
				}
			}
		}
	}
	return nil, nil
}

// valueAt returns the current value of the field at path.
func valueAt(c *Config, path field.Path) (any, bool) {
	v := reflect.ValueOf(c).Elem()
	for _, seg := range path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil, false
			}
			v = v.Elem()
		}
		if seg.IsIndex() {
			i := seg.Index
			if v.Kind() != reflect.Slice || i < 0 || i >= v.Len() {
				return nil, false
			}
			v = v.Index(i)
			continue
		}
		if v.Kind() != reflect.Struct {
			return nil, false
		}
		idx, ok := yamlFields(v.Type()).index[seg.YAML]
		if !ok {
			return nil, false
		}
		v = v.Field(idx)
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	return v.Interface(), true
}

// samplerKey is the YAML key of the scenario's sampler ("" if none or
// several are set).
func (c *Config) samplerKey() string {
	key, err := exactlyOne("sampler", &c.Sampler)
	if err != nil {
		return ""
	}
	return key
}
