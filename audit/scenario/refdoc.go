package scenario

import (
	"fmt"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/suggest"
	"io"
	"sort"
	"strings"
)

// WriteReferenceMarkdown writes the scenario reference as Markdown: how a
// scenario is laid out, an example scenario for every model, then every
// section with a table of its fields. docs/scenario.md is this output (a
// test keeps it current).
func WriteReferenceMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString(referenceIntro())
	models := writeCombinationTable(&b)
	for _, m := range models {
		ex, err := ExampleScenario("sgld", m)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "<details><summary>A minimal scenario for <code>model.%s</code> (with <code>sampler.sgld</code>)</summary>\n\n```yaml\n%s```\n\n</details>\n\n", m, ex)
	}
	b.WriteString("Each sampler's example value (below) can replace the `sampler` section of\nany of them.\n\n")
	writeSections(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// referenceIntro is the reference's opening: how a scenario is laid out
// and the rules that hold everywhere.
func referenceIntro() string {
	return `# Scenario reference

<!-- Generated from the table in audit/scenario/reference.go by
     "go generate ./audit/scenario"; do not edit by hand. -->

A scenario is one YAML document that ` + "`audit run`" + ` and ` + "`audit bounds`" + ` read. It
names the model, the dataset D and how its neighbour D′ is built, the sampler,
the release points, the statistics of the audit and, optionally, a claim to
test. ` + "`audit run --explain FIELD`" + ` prints one entry of this reference
(` + "`audit run --explain sampler.sgld`" + ` lists a section's fields), and
` + "`audit run --print-default`" + ` prints the built-in scenario. Editors that check YAML
against a JSON Schema can use the schema ` + "`audit run --print-schema`" + ` prints, generated
from the same table (` + "`audit run --print-schema > scenario.schema.json`" + `, then start a
scenario with ` + "`# yaml-language-server: $schema=<path to>/scenario.schema.json`" + `).

Rules that hold everywhere:

- ` + "`model`, `data` and `sampler`" + ` each hold exactly one of their keys.
- Unknown fields are errors, with the nearest field name suggested; so are
  values of the wrong type, keys given twice and more than one document.
  Every error names the field's path and the line, e.g.
  ` + "`line 7: sampler.sgld.step: must be a mapping {eta, b, gamma}, got the number 0.05`" + `.
- Integers are exact: ` + "`1e6`" + ` or ` + "`40.0`" + ` is accepted for an integer field because
  it is exactly an integer in range; ` + "`40.5`" + `, ` + "`-1`" + ` for a seed, or a seed above
  2^64 − 1 is an error. An integer with a leading zero (` + "`0123`" + `) is refused,
  as YAML would read it in octal.
- A field marked *required* has no default; "with C" / "unless C" make a
  field required only when the condition C holds / does not hold.
- An omitted field takes its default. A field written as ` + "`0`" + ` or ` + "`[]`" + ` takes it
  only where its entry says so ("0 also means 1"); where its range leaves 0
  (or the empty list) out, it is an error. So is a key that the scenario's
  other choices leave without effect (` + "`release.estimator`" + ` with another
  ` + "`release.mode`" + `, ` + "`audit.split`" + ` in the canary design).
- Lists are written ` + "`[a, b]`" + ` or one ` + "`- item`" + ` per line; mappings ` + "`{k: v}`" + ` or one
  ` + "`k: v`" + ` per line. Anchors, aliases and merge keys (` + "`<<: *anchor`" + `) work.
- Limits: ` + fmt.Sprintf("%d", MaxConfigBytes) + ` bytes (64 MiB) and ` + fmt.Sprintf("%d", MaxConfigNodes) + ` YAML nodes per document
  (an alias counts as what it expands to); larger data belong in ` + "`data.csv`" + `.
  The files a scenario names (` + "`data.csv`" + `, ` + "`audit.canaries.pool`" + `) must be regular
  files within their size limits: a FIFO, a device or a directory is refused
  without being waited on, a larger file before it is read.

## Samplers and models

Every sampler works with every model except where this table says why not.
The examples below are written from the reference alone (the required fields
with their example values); a test builds every one of them.

`
}

// writeCombinationTable writes which sampler works with which model, with
// the reasons of the refusals as numbered notes, and returns the models.
func writeCombinationTable(b *strings.Builder) []string {
	combos := Combinations()
	var samplers, models []string
	seen := map[string]bool{}
	for _, c := range combos {
		if !seen["s"+c.Sampler] {
			seen["s"+c.Sampler] = true
			samplers = append(samplers, c.Sampler)
		}
		if !seen["m"+c.Model] {
			seen["m"+c.Model] = true
			models = append(models, c.Model)
		}
	}
	b.WriteString("| sampler \\ model | " + strings.Join(models, " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|:-:", len(models)) + "|\n")
	notes := map[string]int{}
	var noteText []string
	for _, s := range samplers {
		b.WriteString("| `" + s + "` |")
		for _, c := range combos {
			if c.Sampler != s {
				continue
			}
			if c.Allowed {
				b.WriteString(" ✓ |")
				continue
			}
			k, ok := notes[c.Reason]
			if !ok {
				noteText = append(noteText, c.Reason)
				k = len(noteText)
				notes[c.Reason] = k
			}
			fmt.Fprintf(b, " no (%d) |", k)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for i, n := range noteText {
		fmt.Fprintf(b, "(%d) %s.  \n", i+1, strings.ToUpper(n[:1])+n[1:])
	}
	b.WriteString("\n")
	return models
}

// writeSections writes a heading per section and a table of its direct
// fields.
func writeSections(b *strings.Builder) {
	// Sections: every mapping (or choice) gets a heading and a table of its
	// direct fields that are not mappings themselves.
	all := reference()
	sections := []string{""}
	for _, f := range all {
		if isSection(f) {
			sections = append(sections, f.Path)
		}
	}
	for _, sec := range sections {
		writeSection(b, sec, all)
	}
}

// writeSection writes one section's heading, its entry and the table of
// its fields (all is the reference).
func writeSection(b *strings.Builder, sec string, all []Field) {
	var rows []Field
	for _, f := range all {
		if parent, _ := splitPath(strings.ReplaceAll(f.Path, "[]", "")); parent == strings.ReplaceAll(sec, "[]", "") && f.Path != sec {
			rows = append(rows, f)
		}
	}
	if sec == "" {
		b.WriteString("## Top level\n\n")
	} else {
		f, _ := Lookup(sec)
		level := "##"
		if strings.Contains(sec, ".") {
			level = "###"
		}
		fmt.Fprintf(b, "%s `%s`\n\n", level, sec)
		b.WriteString(entryText(f, true))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("| field | type | required / default | allowed | meaning |\n|---|---|---|---|---|\n")
	for _, f := range rows {
		_, key := splitPath(f.Path)
		name := "`" + key + "`"
		if isSection(f) {
			name = fmt.Sprintf("[`%s`](#%s)", key, anchor(f.Path))
		}
		meaning := f.Meaning
		if f.UsedBy != "" && !strings.HasPrefix(sec, strings.TrimSuffix(f.UsedBy, " ")) && f.UsedBy != sec {
			meaning += " Used by: " + f.UsedBy + "."
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name, cell(f.Type), cell(requiredText(f)), cell(f.Range), cell(meaning))
	}
	b.WriteString("\n")
}

// isSection reports whether a field gets its own heading: a choice, or a
// mapping (or list of mappings) with fields of its own.
func isSection(f Field) bool {
	for _, g := range reference() {
		if parent, _ := splitPath(strings.ReplaceAll(g.Path, "[]", "")); parent == strings.ReplaceAll(f.Path, "[]", "") && g.Path != f.Path {
			return true
		}
	}
	return f.IsChoice()
}

// anchor is the GitHub heading anchor of a section path.
func anchor(path string) string {
	var b strings.Builder
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cell(s string) string {
	if s == "" {
		return ""
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// requiredText is the "required / default" column.
func requiredText(f Field) string {
	var parts []string
	switch {
	case f.IsChoice():
		parent, _ := splitPath(f.Path)
		parts = append(parts, "one of the "+parent+" section's keys")
	case f.Required == "yes":
		parts = append(parts, "**required**")
	case f.Required != "":
		parts = append(parts, "required "+f.Required)
	}
	if f.Group != "" {
		parts = append(parts, "exactly one of "+groupMembers(f))
	}
	if f.Default != "" {
		d := "default `" + f.Default + "`"
		if f.DefaultNote != "" {
			d += " (" + f.DefaultNote + ")"
		}
		parts = append(parts, d)
	} else if f.DefaultNote != "" {
		parts = append(parts, "default: "+f.DefaultNote)
	}
	if len(parts) == 0 {
		return "optional"
	}
	return strings.Join(parts, "; ")
}

// groupMembers lists the fields of f's "exactly one of" group in f's own
// section: a group's name recurs where a section is copied (the crafting
// sampler of a DeepFool canary repeats sampler.sgld's fields), and those
// copies are another group.
func groupMembers(f Field) string {
	parent, _ := splitPath(f.Path)
	var names []string
	for _, g := range reference() {
		if gp, key := splitPath(g.Path); g.Group == f.Group && gp == parent {
			names = append(names, key)
		}
	}
	return strings.Join(names, ", ")
}

// entryText is a field's entry as prose: type, requirement, range,
// meaning, users and example.
func entryText(f Field, markdown bool) string {
	code := func(s string) string {
		if markdown {
			return "`" + s + "`"
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s. ", f.Meaning)
	if f.Type != "" {
		fmt.Fprintf(&b, "Type: %s. ", f.Type)
	}
	req := strings.ReplaceAll(requiredText(f), "**", "")
	if !markdown {
		req = strings.ReplaceAll(req, "`", "")
	}
	fmt.Fprintf(&b, "%s. ", capitalise(req))
	if f.Range != "" {
		fmt.Fprintf(&b, "Allowed: %s. ", f.Range)
	}
	if len(f.Models) > 0 {
		fmt.Fprintf(&b, "Models: %s only", strings.Join(f.Models, ", "))
		if f.OtherModels != "" {
			fmt.Fprintf(&b, " (others: %s)", f.OtherModels)
		}
		b.WriteString(". ")
	}
	if f.UsedBy != "" {
		fmt.Fprintf(&b, "Used by: %s. ", f.UsedBy)
	}
	if f.ExampleData != "" {
		fmt.Fprintf(&b, "Example data: %s. ", code(f.ExampleData))
	}
	if f.Example != "" {
		fmt.Fprintf(&b, "Example: %s.", code(f.Example))
	}
	s := strings.TrimSpace(strings.ReplaceAll(b.String(), "..", "."))
	if markdown {
		s += "\n\n"
	}
	return s
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Explain writes the reference entry of a field (list items as "[]" or
// with an index: "data.records[0].x"), or, for a section, a prefix or an
// empty query, the list of matching fields. It fails, suggesting the
// nearest path, when nothing matches.
func Explain(w io.Writer, query string) error {
	query = genericPath(strings.TrimSpace(query))
	if f, ok := Lookup(query); ok {
		fmt.Fprintf(w, "%s\n\n%s\n", f.Path, wrap(entryText(f, false), 78))
		if isSection(f) {
			fmt.Fprintln(w)
			listFields(w, f.Path+".", f.Path+"[].")
		}
		return nil
	}
	if listFields(w, query) > 0 {
		return nil
	}
	var paths []string
	for _, f := range reference() {
		paths = append(paths, f.Path)
	}
	sort.Strings(paths)
	near := ""
	if best, ok := nearestPath(query, paths); ok {
		near = fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Errorf("--explain: no scenario field %s%s; --explain alone lists them all", clip.Quote(query), near)
}

// listFields lists the fields under any of the prefixes ("" lists all),
// one per line with type and requirement, and returns their number.
func listFields(w io.Writer, prefixes ...string) int {
	n := 0
	for _, f := range reference() {
		match := false
		for _, p := range prefixes {
			match = match || strings.HasPrefix(f.Path, p)
		}
		if !match {
			continue
		}
		req := strings.NewReplacer("**", "", "`", "").Replace(requiredText(f))
		fmt.Fprintf(w, "  %-42s %s; %s\n", f.Path, f.Type, req)
		n++
	}
	return n
}

// nearestPath suggests a field path: the nearest full path, or the path
// whose last component is nearest to the query's.
func nearestPath(query string, paths []string) (string, bool) {
	best, d := "", -1
	for _, p := range paths {
		if dd := editDistance(query, p); d < 0 || dd < d {
			best, d = p, dd
		}
	}
	if d >= 0 && d <= max(2, len(query)/4) {
		return best, true
	}
	return "", false
}

// wrap breaks text into lines of at most width columns.
func wrap(s string, width int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// editDistance is the edit distance of two paths.
func editDistance(a, b string) int { return suggest.Distance(a, b) }
