package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// xdgCacheHome is XDG_CACHE_HOME as this process started, before TestMain
// gave the tests a cache of their own (isolateUserCache): the go command
// below builds with the user's build cache, not an empty one.
var xdgCacheHome, xdgCacheHomeSet = os.LookupEnv("XDG_CACHE_HOME")

// The external module examples/gomodule — its own go.mod requiring this
// module through a replace directive, its own Mechanism audited by
// audit.Run — builds against this checkout and runs, offline: its go.sum
// and the module cache the main module's build filled suffice (no proxy,
// go.mod and go.sum read-only). docs/reference.md quotes its output.
func TestExternalGoModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs another module: skipped by -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd/audit: TestExternalGoModule SKIPPED: no go command on PATH to build examples/gomodule")
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(gobin, "run", ".")
	cmd.Dir = "../../examples/gomodule"
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			env = append(env, kv)
		}
	}
	if xdgCacheHomeSet {
		env = append(env, "XDG_CACHE_HOME="+xdgCacheHome)
	}
	cmd.Env = append(env, "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run in examples/gomodule: %v\n%s", err, out)
	}
	for _, want := range []string{"ε_lb = 0.963 at δ = 1e-05", "(confidence 0.95; Clopper-Pearson region bound", "evaluation runs of 20000)", "claim 1-GDP: not refuted"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
