package program

import (
	"errors"
	"strings"
	"testing"
)

// A command with a 300 KB argument (or program path) is echoed cut in
// every message that names the command: the error stays one line under
// 1 KB (it was 300 KB long).
func TestMessagesCutLongArguments(t *testing.T) {
	big := strings.Repeat("A", 300_000)
	errs := []error{
		&Error{Fault: FaultStart, Command: []string{"/bin/prog", big, "--x"}, Detail: "cannot start process 1: fork/exec /nonexistent/" + big + ": no such file or directory", Err: errors.New("x")},
		&TrialError{Request: Request{Trial: 3, Side: SideD, Seed: 1}, Command: []string{"/bin/prog", big}, Message: "failed"},
		&Error{Fault: FaultStart, Command: strings.Split(strings.Repeat("a ", 100_000), " ")},
	}
	for _, e := range errs {
		msg := e.Error()
		if len(msg) > 1500 || strings.Contains(msg, "\n") || !strings.Contains(msg, "; command: ") {
			t.Errorf("a %d-byte message: %.200s…", len(msg), msg)
		}
	}
	if got := errs[0].Error(); !strings.Contains(got, `command: /bin/prog "AAAA`) || !strings.Contains(got, `…(300000 bytes) --x`) {
		t.Errorf("message %.400s", got)
	}
	for _, c := range []Config{{Command: []string{"", big}}, {Command: []string{"p"}, Env: []string{big}}, {Command: []string{"p"}, Name: big + "\n"}} {
		_, err := c.withDefaults()
		if err == nil || len(err.Error()) > 500 {
			t.Errorf("config error %.200v (%d bytes)", err, len(err.Error()))
		}
	}
}
