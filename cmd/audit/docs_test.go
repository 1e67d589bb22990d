package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docFiles are the README and the pages of docs/ (paths from this
// package's directory): the documents whose commands the tests run.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) < 5 {
		t.Fatalf("docs/*.md: %v, %d pages", err, len(pages))
	}
	sort.Strings(pages)
	return append([]string{"../../README.md"}, pages...)
}

// docSection returns the section of a document (a path from the
// repository root) that starts at the line heading, up to the next
// heading of the same or a higher level outside a code block.
func docSection(t *testing.T, doc, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", doc))
	if err != nil {
		t.Fatal(err)
	}
	level := strings.Index(heading, " ")
	var sec []string
	in, fenced := false, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			if strings.HasPrefix(line, heading) {
				in = true
			} else if h := strings.Index(line, " "); in && h > 0 && h <= level && strings.Trim(line[:h], "#") == "" {
				break
			}
		}
		if in {
			sec = append(sec, line)
		}
	}
	if !in {
		t.Fatalf("%s has no section %q", doc, heading)
	}
	return strings.Join(sec, "\n")
}

// havePython reports whether /usr/bin/python3 imports NumPy and the
// modules; where CI requires them (MCMCAUDIT_REQUIRE_PYTHON=1) a missing
// one fails the test.
func havePython(t *testing.T, modules ...string) bool {
	t.Helper()
	script := "import " + strings.Join(append([]string{"numpy"}, modules...), ", ")
	if exec.Command("/usr/bin/python3", "-c", script).Run() == nil {
		return true
	}
	requirePython(t, modules...) // fails under MCMCAUDIT_REQUIRE_PYTHON=1
	return false
}

// The README stays short enough for a newcomer to hold: the reference,
// scale-out, gallery and benchmarks live in docs/.
func TestReadmeAtMost250Lines(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines, at most 250 allowed: move reference material to docs/", n)
	}
}

// Every "go run ./cmd/audit" in the README and docs/ is run by a test:
// the gallery test's parser finds it, or it is one of the commands of the
// reference's "audit curve" section, which TestReadmeCurveSection runs.
func TestEveryDocumentedCommandIsRun(t *testing.T) {
	found := 0
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found += strings.Count(string(b), "go run ./cmd/audit")
	}
	curve := 0
	sec := docSection(t, "docs/reference.md", "### `audit curve`")
	for _, m := range regexp.MustCompile("go run \\./cmd/audit curve ([^`\n]*)").FindAllStringSubmatch(sec, -1) {
		if curveChecked(strings.Fields(m[1])) {
			curve++
		}
	}
	if g := len(galleryCommands(t)); g+curve != found {
		t.Errorf(`%d "go run ./cmd/audit" in the documents, but the gallery test runs %d and the curve test %d`, found, g, curve)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README, docs/ and the other READMEs names a
// file or directory of the repository.
func TestDocumentLinksResolve(t *testing.T) {
	files := docFiles(t)
	more, _ := filepath.Glob("../../docs/*/*.md")
	files = append(files, more...)
	for _, pat := range []string{"../../python/README.md", "../../examples/*/README.md", "../../bench/README.md", "../../cmd/audit/testdata/*/README.md"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", strings.TrimPrefix(f, "../../"), m[1])
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d relative links checked", checked)
	}
}
