//go:build slow

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A binary built from a clone records the commit it was built from, and
// one built without VCS information says so. (A git worktree is not
// enough: the go command stamps only from a .git directory.)
func TestVersionOfBuiltBinary(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	clone := filepath.Join(dir, "src")
	run := func(d string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = d
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run(dir, "git", "clone", "--quiet", "--no-hardlinks", root, clone)
	head := strings.TrimSpace(run(clone, "git", "rev-parse", "HEAD"))
	for _, c := range []struct {
		flag, want string
	}{
		{"-buildvcs=true", "revision " + head},
		{"-buildvcs=false", "revision unknown"},
	} {
		bin := filepath.Join(dir, "audit"+c.flag)
		run(clone, "go", "build", c.flag, "-o", bin, "./cmd/audit")
		out := run(dir, bin, "--version")
		if !strings.Contains(out, c.want) || !strings.HasPrefix(out, "audit github.com/mcmcaudit/mcmcaudit ") {
			t.Errorf("go build %s: audit --version =\n%s\nwant a line with %q", c.flag, out, c.want)
		}
		if out2 := run(dir, bin, "version"); out2 != out {
			t.Errorf("audit version %q differs from audit --version %q", out2, out)
		}
	}
}
