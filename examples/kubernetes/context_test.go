package kubernetes

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// repoRoot is the Docker build context of examples/kubernetes/Dockerfile.
const repoRoot = "../.."

// dockerContext lists the files Docker sends as build context from the
// repository root, applying .dockerignore with the matcher Docker itself
// uses (a path is left out when it or a parent directory matches).
func dockerContext(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == repoRoot {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		rel = filepath.ToSlash(rel)
		skip, err := pm.MatchesOrParentMatches(rel)
		if err != nil {
			return err
		}
		if skip {
			if d.IsDir() && !pm.Exclusions() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The build context holds the sources and what they embed, none of the
// local state (.git, bin/, parts, reports, test binaries, examples), and the
// Dockerfile's build step succeeds on a copy of exactly that context.
func TestDockerContext(t *testing.T) {
	files := dockerContext(t)
	in := map[string]bool{}
	for _, f := range files {
		in[f] = true
		for _, bad := range []string{".git/", "bin/", "parts/", "out/", "examples/", "testdata/"} {
			if strings.HasPrefix(f, bad) || strings.Contains(f, "/"+bad) {
				t.Errorf("the build context holds %s", f)
			}
		}
		if strings.HasSuffix(f, ".test") || strings.HasSuffix(f, "_test.go") {
			t.Errorf("the build context holds %s", f)
		}
	}
	// What the Dockerfile copies by name, and every file the sources embed.
	need := []string{"go.mod", "go.sum", "cmd/audit/main.go"}
	embed := regexp.MustCompile(`(?m)^//go:embed\s+(.+)$`)
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range embed.FindAllStringSubmatch(string(src), -1) {
			for _, name := range strings.Fields(m[1]) {
				need = append(need, filepath.ToSlash(filepath.Join(filepath.Dir(f), name)))
			}
		}
	}
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(df), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "COPY" && !strings.HasPrefix(f[1], "--") && f[1] != "." {
			need = append(need, f[1:len(f)-1]...)
		}
	}
	for _, n := range need {
		if !in[n] {
			t.Errorf("the build context lacks %s", n)
		}
	}
	if t.Failed() {
		return
	}

	// The Dockerfile's build step, on a copy of the context alone (without
	// -trimpath, so that the build cache of the main module serves it).
	ctx := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(ctx, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "audit")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/audit")
	cmd.Dir = ctx
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build in the build context (%d files): %v\n%s", len(files), err, b)
	}
	help, err := exec.Command(out, "run", "--help").CombinedOutput()
	if err != nil || !bytes.Contains(help, []byte("--shard")) {
		t.Fatalf("the binary built from the context does not run: %v\n%s", err, help)
	}
	t.Logf("built from a context of %d files", len(files))
}
