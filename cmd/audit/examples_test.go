package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The cluster examples are run for real elsewhere: examples/slurm on a local
// Slurm by .ci/slurm.sh, and the Kubernetes manifests are decoded and
// cross-checked by the module in examples/kubernetes. What is checked here,
// on every go test, is only that the audit flags they use are flags of the
// subcommand they call, so that renaming a flag cannot silently break them.

// flagsOf returns the flags that "audit SUB --help" lists.
func flagsOf(t *testing.T, sub string) map[string]bool {
	t.Helper()
	out, errs, code := runCLI(t, sub, "--help")
	if code != 0 {
		t.Fatalf("audit %s --help: exit %d: %s", sub, code, errs)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(out+errs, -1) {
		flags[m[1]] = true
	}
	if len(flags) < 3 {
		t.Fatalf("audit %s --help lists %d flags:\n%s%s", sub, len(flags), out, errs)
	}
	return flags
}

// auditCalls returns, for each call of the audit binary in a shell script
// (a line with `"$audit" SUB`, continued with backslashes), the subcommand
// and the flags it passes.
func auditCalls(t *testing.T, script string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string][]string{}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		m := regexp.MustCompile(`"\$audit" (run|merge)\b(.*)`).FindStringSubmatch(line)
		if m == nil {
			continue
		}
		calls[m[1]] = append(calls[m[1]], regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`).FindAllString(m[2], -1)...)
	}
	if len(calls) == 0 {
		t.Fatalf("%s calls no audit subcommand", script)
	}
	return calls
}

func TestExampleFlagsExist(t *testing.T) {
	known := map[string]map[string]bool{"run": flagsOf(t, "run"), "merge": flagsOf(t, "merge")}
	check := func(where, sub string, flags []string) {
		for _, f := range flags {
			f = strings.TrimPrefix(strings.TrimSpace(f), "--")
			if !known[sub][f] {
				t.Errorf("%s: audit %s has no flag --%s", where, sub, f)
			}
		}
	}
	subs := map[string]bool{}
	for _, script := range []string{"../../examples/slurm/audit-array.sbatch", "../../examples/slurm/audit-merge.sbatch"} {
		for sub, flags := range auditCalls(t, script) {
			check(script, sub, flags)
			subs[sub] = true
		}
	}
	for _, manifest := range []string{"../../examples/kubernetes/audit-indexed-job.yaml", "../../examples/kubernetes/audit-merge-job.yaml"} {
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		var job struct {
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Args []string `yaml:"args"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(b, &job); err != nil {
			t.Fatalf("%s: %v", manifest, err)
		}
		for _, c := range job.Spec.Template.Spec.Containers {
			if len(c.Args) == 0 || known[c.Args[0]] == nil {
				t.Errorf("%s: args %q do not start with run or merge", manifest, c.Args)
				continue
			}
			var flags []string
			for _, a := range c.Args[1:] {
				if strings.HasPrefix(a, "--") {
					flags = append(flags, strings.SplitN(a, "=", 2)[0])
				}
			}
			check(manifest, c.Args[0], flags)
			subs["k8s "+c.Args[0]] = true
		}
	}
	for _, want := range []string{"run", "merge", "k8s run", "k8s merge"} {
		if !subs[want] {
			t.Errorf("no example calls %s", want)
		}
	}
}
