package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// commandIn returns the line of text that starts with prefix (after
// trimming spaces and a YAML list dash).
func commandIn(t *testing.T, text, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("no line starting with %q", prefix)
	return ""
}

// expand replaces ${VAR} and $VAR from vars and expands a trailing glob.
func expand(t *testing.T, cmd string, vars map[string]string) []string {
	t.Helper()
	cmd = os.Expand(cmd, func(k string) string { return vars[k] })
	var out []string
	for _, f := range strings.Fields(cmd) {
		f = strings.Trim(f, `"`)
		if strings.Contains(f, "*") {
			m, _ := filepath.Glob(f)
			out = append(out, m...)
			continue
		}
		out = append(out, f)
	}
	return out[1:] // drop "audit" / "./audit"
}

// The Kubernetes and Slurm examples run as written: their shard commands
// (for every index) and their merge command are executed in-process on a
// small scenario, and the merged report equals a single run's.
func TestClusterExamples(t *testing.T) {
	dir := t.TempDir()
	base, _ := os.ReadFile("../../testdata/sgld-interim.yaml")
	scenario := filepath.Join(dir, "scenario.yaml")
	os.WriteFile(scenario, bytes.Replace(base, []byte("trials: 4000"), []byte("trials: 480"), 1), 0o644)
	single := filepath.Join(dir, "single.json")
	if _, errs, code := runCLI(t, "run", scenario, "--json", single, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	want, _ := os.ReadFile(single)

	// Kubernetes: an Indexed Job with the shard command, then the merge Job.
	job, _ := os.ReadFile("../../examples/kubernetes/audit-indexed-job.yaml")
	var spec struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(job, &spec); err != nil || spec.Spec.CompletionMode != "Indexed" {
		t.Fatalf("indexed job manifest: %v %+v", err, spec)
	}
	results := filepath.Join(dir, "results")
	os.Mkdir(results, 0o755)
	shardCmd := commandIn(t, string(job), "audit run")
	if !strings.Contains(shardCmd, fmt.Sprintf("/%d ", spec.Spec.Completions)) {
		t.Errorf("shard count in %q does not match completions = %d", shardCmd, spec.Spec.Completions)
	}
	for k := 0; k < spec.Spec.Completions; k++ {
		args := expand(t, strings.NewReplacer("/scenario/scenario.yaml", scenario, "/results", results).Replace(shardCmd),
			map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(k)})
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Fatalf("k8s shard %d: %v: %s", k, args, errs)
		}
	}
	merge, _ := os.ReadFile("../../examples/kubernetes/audit-merge-job.yaml")
	margs := expand(t, strings.ReplaceAll(commandIn(t, string(merge), "audit merge"), "/results", results), nil)
	if _, errs, code := runCLI(t, margs...); code != 0 {
		t.Fatalf("k8s merge %v: %s", margs, errs)
	}
	if got, _ := os.ReadFile(filepath.Join(results, "report.json")); !bytes.Equal(got, want) {
		t.Error("Kubernetes example: merged report differs from a single run")
	}

	// Slurm: the array script for every task id, then the merge script.
	arr, _ := os.ReadFile("../../examples/slurm/audit-array.sbatch")
	m := regexp.MustCompile(`#SBATCH --array=0-(\d+)`).FindStringSubmatch(string(arr))
	if m == nil {
		t.Fatal("no --array in the Slurm script")
	}
	var last int
	fmt.Sscan(m[1], &last)
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	os.Mkdir("parts", 0o755)
	for k := 0; k <= last; k++ {
		args := expand(t, commandIn(t, string(arr), "./audit run"), map[string]string{
			"scenario": scenario, "SLURM_ARRAY_TASK_ID": fmt.Sprint(k), "SLURM_ARRAY_TASK_COUNT": fmt.Sprint(last + 1)})
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Fatalf("slurm task %d: %v: %s", k, args, errs)
		}
	}
	ms, _ := os.ReadFile(filepath.Join(wd, "../../examples/slurm/audit-merge.sbatch"))
	if _, errs, code := runCLI(t, expand(t, commandIn(t, string(ms), "./audit merge"), nil)...); code != 0 {
		t.Fatalf("slurm merge: %s", errs)
	}
	if got, _ := os.ReadFile("parts/report.json"); !bytes.Equal(got, want) {
		t.Error("Slurm example: merged report differs from a single run")
	}
}
