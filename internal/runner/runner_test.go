package runner

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ResumeCommand keeps every argument but --checkpoint and --resume, in any
// spelling, and quotes what a shell would split or expand.
func TestResumeCommandQuoting(t *testing.T) {
	got := ResumeCommand("/opt/my audit/audit", []string{"s.yaml", "--json=a b.json", "-resume", "--checkpoint=old", "--csv", "it's.csv", "--resume=true", "-checkpoint", "x", "--", "$HOME"}, "ck dir")
	want := `'/opt/my audit/audit' run s.yaml '--json=a b.json' --csv 'it'\''s.csv' --checkpoint 'ck dir' --resume -- '$HOME'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The shell gives back the arguments.
	out, err := exec.Command("/bin/sh", "-c", `printf '%s\n' `+strings.TrimPrefix(got, `'/opt/my audit/audit' `)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "run\ns.yaml\n--json=a b.json\n--csv\nit's.csv\n--checkpoint\nck dir\n--resume\n--\n$HOME\n"; string(out) != want {
		t.Errorf("the shell splits it into %q", out)
	}
}

// The default checkpoint waits a second before saving blocks; one named by
// --checkpoint DIR saves every block.
func TestCheckpointAfter(t *testing.T) {
	if got := (Checkpoint{Dir: "d", Auto: true}).after(); got != time.Second || AutoCheckpointAfter != time.Second {
		t.Errorf("default checkpoint: after %v (AutoCheckpointAfter %v), want 1s", got, AutoCheckpointAfter)
	}
	if got := (Checkpoint{Dir: "d"}).after(); got != 0 {
		t.Errorf("--checkpoint DIR: after %v, want 0", got)
	}
}
