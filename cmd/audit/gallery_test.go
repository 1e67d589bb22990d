package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// galleryCommand is one command of the README's gallery.
type galleryCommand struct {
	args []string
	exit int
	slow bool
}

// galleryCommands extracts the "go run ./cmd/audit …" commands of the
// README's Gallery section, in code blocks and in the table; a command
// whose line says VIOLATION or "exits 1" must exit 1, and one marked
// "# slow" runs only with -tags slow.
func galleryCommands(t *testing.T) []galleryCommand {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Gallery")
	j := strings.Index(s[i+1:], "\n## ")
	if i < 0 || j < 0 {
		t.Fatal("README has no Gallery section")
	}
	re := regexp.MustCompile("go run \\./cmd/audit ([^`#|\n]*)")
	var out []galleryCommand
	for _, line := range strings.Split(s[i:i+1+j], "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		c := galleryCommand{args: strings.Fields(m[1])}
		if strings.Contains(line, "VIOLATION") || strings.Contains(line, "exits 1") {
			c.exit = exitViolation
		}
		c.slow = strings.Contains(line, "# slow")
		out = append(out, c)
	}
	if len(out) < 10 {
		t.Fatalf("only %d gallery commands found", len(out))
	}
	return out
}

// runGallery runs the gallery's commands from the repository root, with
// every output file redirected to a temporary directory.
func runGallery(t *testing.T, slow bool) {
	cmds := galleryCommands(t)
	out := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir("../.."); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	ran := 0
	for _, c := range cmds {
		if c.slow != slow {
			continue
		}
		args := append([]string(nil), c.args...)
		for k := 1; k < len(args); k++ {
			switch args[k-1] {
			case "--plot", "--json", "--csv", "--html":
				args[k] = filepath.Join(out, filepath.Base(args[k]))
			}
		}
		args = append(args, "--quiet")
		if args[0] != "run" {
			args = args[:len(args)-1] // only run takes --quiet
		}
		_, errs, code := runCLI(t, args...)
		if code != c.exit {
			t.Errorf("%v: exit %d, README promises %d (stderr %q)", c.args, code, c.exit, errs)
		}
		ran++
	}
	t.Logf("ran %d gallery commands", ran)
}

func TestGalleryCommands(t *testing.T) { runGallery(t, false) }
