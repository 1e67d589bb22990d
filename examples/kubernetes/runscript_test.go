package kubernetes

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeKubectl answers run.sh's kubectl calls from files in $STATE:
// JOB.conditions (the Job's true conditions, one per line), pods.waiting
// (waiting reasons of pods) and merge.exit (the merge container's exit
// code). It logs every call to $STATE/calls and appends what is applied
// from stdin to $STATE/applied.
const fakeKubectl = `#!/bin/sh
echo "$*" >> "$STATE/calls"
case "$1" in
get)
  case "$*" in
  *'@.status=="True"'*) cat "$STATE/$3.conditions" 2>/dev/null ;;
  *exitCode*) cat "$STATE/merge.exit" 2>/dev/null ;;
  *waiting.reason*) cat "$STATE/pods.waiting" 2>/dev/null ;;
  *) echo "details of $3" ;;
  esac ;;
apply)
  case "$*" in
  *'-f -'*) cat >> "$STATE/applied" ;;
  esac ;;
esac
exit 0
`

// runScript runs run.sh against fakeKubectl with the given state files and
// environment; it returns the exit code, the output, the kubectl calls, the
// manifests applied from stdin and the time taken.
func runScript(t *testing.T, state map[string]string, env ...string) (int, string, string, string, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	st := filepath.Join(dir, "state")
	os.Mkdir(bin, 0o755)
	os.Mkdir(st, 0o755)
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range state {
		os.WriteFile(filepath.Join(st, k), []byte(v), 0o644)
	}
	cmd := exec.Command("sh", "run.sh")
	// Short timeouts by default, so that a broken wait fails the test instead
	// of hanging it; a case may override them (the last value wins).
	cmd.Env = append([]string{"PATH=" + bin + ":/usr/bin:/bin", "STATE=" + st, "POLL_SECONDS=0.2", "SHARD_TIMEOUT=3", "MERGE_TIMEOUT=3"}, env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(filepath.Join(st, "calls"))
	applied, _ := os.ReadFile(filepath.Join(st, "applied"))
	return code, string(out), string(calls), string(applied), took
}

const testImage = "IMAGE=registry.example.com/mcmcaudit:0.1.0"

// run.sh applies everything with the user's image, waits for each Job and
// ends with the merge's exit code; a Failed Job, a pod that cannot start or
// a timeout ends the wait at once, without applying the merge.
func TestRunScript(t *testing.T) {
	cases := []struct {
		name       string
		state      map[string]string
		env        []string
		code       int
		merged     bool   // the merge Job was applied
		want       string // in the output
		maxSeconds float64
	}{
		{"verdict 0", map[string]string{"audit-shards.conditions": "SuccessCriteriaMet\nComplete\n", "audit-merge.conditions": "Complete\n", "merge.exit": "0"},
			[]string{testImage}, 0, true, "audit merge exited with 0", 5},
		{"claim refuted", map[string]string{"audit-shards.conditions": "Complete\n", "audit-merge.conditions": "FailureTarget\nFailed\n", "merge.exit": "1"},
			[]string{testImage}, 1, true, "audit merge exited with 1", 5},
		{"a shard index failed", map[string]string{"audit-shards.conditions": "FailureTarget\nFailed\n"},
			[]string{testImage}, 2, false, "job/audit-shards failed", 5},
		{"image cannot be pulled", map[string]string{"pods.waiting": "audit-shards-0-x ImagePullBackOff\n"},
			[]string{testImage}, 2, false, "pods cannot start", 5},
		{"timeout", map[string]string{},
			[]string{testImage, "SHARD_TIMEOUT=1"}, 2, false, "neither Complete nor Failed after 1 s", 5},
		{"no image", nil, nil, 2, false, "set IMAGE", 5},
		{"placeholder image", nil, []string{"IMAGE=REGISTRY/mcmcaudit:VERSION"}, 2, false, "replace the placeholder", 5},
		{"latest", nil, []string{"IMAGE=registry.example.com/mcmcaudit:latest"}, 2, false, "not :latest", 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, calls, applied, took := runScript(t, tc.state, tc.env...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\n%s", code, tc.code, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			if took.Seconds() > tc.maxSeconds {
				t.Errorf("took %v, more than %g s", took, tc.maxSeconds)
			}
			if got := strings.Contains(applied, "name: audit-merge"); got != tc.merged {
				t.Errorf("merge Job applied: %v, want %v", got, tc.merged)
			}
			if tc.state == nil && calls != "" {
				t.Errorf("kubectl called despite a bad IMAGE: %s", calls)
			}
			if applied != "" {
				if strings.Contains(applied, placeholderImage) || !strings.Contains(applied, "image: registry.example.com/mcmcaudit:0.1.0") {
					t.Errorf("applied Jobs do not carry the user's image")
				}
				if !strings.Contains(calls, "audit-scenario.yaml") || !strings.Contains(calls, "audit-results-pvc.yaml") {
					t.Errorf("the ConfigMap or the claim was not applied: %s", calls)
				}
			}
		})
	}
}
