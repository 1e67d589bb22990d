package kubernetes

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// localTrials replaces the scenario's 1000 trials in the local run below, to
// keep it to seconds; it is a multiple of the 8 shards.
const localTrials = "64"

// The containers' command lines, as written in the Jobs, run as local
// processes of the audit binary built from this repository: the ConfigMap's
// keys become files of a directory standing for its mount, one directory
// stands for the claim, $(VAR) takes each completion index, and every
// process starts in an empty directory of its own, as a pod would. This
// checks the arguments and the paths between the Jobs (the shards find the
// scenario and its data, the merge finds every part and needs nothing else);
// it does not run Kubernetes, the image or the kubelet. The merged report
// must be byte-identical to a single run's.
func TestContainerArgsRunLocally(t *testing.T) {
	tmp := t.TempDir()
	audit := filepath.Join(tmp, "audit")
	build := exec.Command("go", "build", "-o", audit, "./cmd/audit")
	build.Dir = repoRoot
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/audit: %v\n%s", err, b)
	}
	ex, errs := decodeExample(readExampleT(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var shard, merge *batchv1.Job
	for _, j := range ex.jobs {
		if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
			shard = j
		} else {
			merge = j
		}
	}
	if shard == nil || merge == nil {
		t.Fatal("no shard Job or no merge Job")
	}

	// One local directory per ConfigMap and per claim.
	volumeDir := func(v *corev1.Volume) string {
		switch {
		case v.ConfigMap != nil:
			d := filepath.Join(tmp, "configmap-"+v.ConfigMap.Name)
			if _, err := os.Stat(d); err == nil {
				return d
			}
			os.MkdirAll(d, 0o755)
			cm := ex.cms[v.ConfigMap.Name]
			for k, s := range cm.Data {
				os.WriteFile(filepath.Join(d, k), []byte(s), 0o644)
			}
			for k, b := range cm.BinaryData {
				os.WriteFile(filepath.Join(d, k), b, 0o644)
			}
			return d
		case v.PersistentVolumeClaim != nil:
			d := filepath.Join(tmp, "claim-"+v.PersistentVolumeClaim.ClaimName)
			os.MkdirAll(d, 0o755)
			return d
		}
		t.Fatalf("volume %s: neither a ConfigMap nor a claim", v.Name)
		return ""
	}
	// localArgs maps the container's mount paths to local directories and
	// expands $(VAR) from vars.
	localArgs := func(job *batchv1.Job, vars map[string]string) []string {
		spec := &job.Spec.Template.Spec
		c := &spec.Containers[0]
		var args []string
		for _, a := range c.Args {
			a = varRef.ReplaceAllStringFunc(a, func(m string) string { return vars[m[2:len(m)-1]] })
			if m, rel := mountOf(c, a); m != nil {
				a = filepath.Join(volumeDir(volumeOf(spec, m)), filepath.FromSlash(rel))
			}
			args = append(args, a)
		}
		return args
	}
	run := func(name string, args ...string) (int, string) {
		dir := filepath.Join(tmp, "cwd-"+name)
		os.MkdirAll(dir, 0o755)
		cmd := exec.Command(audit, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &ee):
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("%s: %v", name, err)
		return 0, ""
	}

	n := int(*shard.Spec.Completions)
	indexVar := ""
	for _, e := range shard.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, batchv1.JobCompletionIndexAnnotation) {
			indexVar = e.Name
		}
	}
	if indexVar == "" {
		t.Fatal("the shard container has no variable from the completion index")
	}
	// The shards, two at a time (each uses two workers).
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	failures := make([]string, n)
	for k := 0; k < n; k++ {
		args := append(localArgs(shard, map[string]string{indexVar: strconv.Itoa(k)}), "--trials", localTrials)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if code, out := run("shard-"+strconv.Itoa(k), args...); code != 0 {
				failures[k] = "shard " + strconv.Itoa(k) + " exited " + strconv.Itoa(code) + ": " + strings.Join(args, " ") + "\n" + out
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		if f != "" {
			t.Error(f)
		}
	}
	if t.Failed() {
		return
	}
	margs := localArgs(merge, nil)
	code, out := run("merge", margs...)
	if code != 0 {
		t.Fatalf("merge exited %d: %s\n%s", code, strings.Join(margs, " "), out)
	}
	jsonOut, _ := flagValue(margs, "json")
	got, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}

	// The single run of the same scenario and flags.
	sargs := localArgs(shard, map[string]string{indexVar: "0"})
	single := filepath.Join(tmp, "single.json")
	if code, out := run("single", "run", positionals(sargs)[0], "--trials", localTrials, "--json", single, "--quiet"); code != 0 {
		t.Fatalf("single run exited %d\n%s", code, out)
	}
	want, err := os.ReadFile(single)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the merged report (%d bytes) differs from the single run's (%d bytes)", len(got), len(want))
	}
}
