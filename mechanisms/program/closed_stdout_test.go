package program

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// closingScript writes a shell program that sends its handshake and then
// closes its stdout and sleeps, alive (after reading one request when
// duringTrial, at once otherwise).
func closingScript(t testing.TB, duringTrial bool) Config {
	t.Helper()
	read := ""
	if duringTrial {
		read = "read -r request\n"
	}
	script := "#!/bin/sh\n" +
		`printf '%s\n' '{"mcmcaudit": 1, "dim": 1, "releases": ["x"]}'` + "\n" +
		read +
		"exec >&-\n" +
		"exec sleep 1000\n"
	path := filepath.Join(t.TempDir(), "closes-stdout.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Config{Command: []string{path}, Timeout: time.Minute, Grace: time.Minute, MaxProcs: 1}
}

// A program that closes its stdout but stays alive can answer nothing: the
// end of file is its death, at once (it was given a second to exit, then
// killed: over a second per attempt, retries included). The error says so —
// end of file — and the trial is retried in new processes like a crash,
// with nothing left running. The timeouts and grace of a minute are never
// waited for; BenchmarkClosedStdoutAttempt times an attempt.
func TestClosedStdoutIsDeath(t *testing.T) {
	for _, duringTrial := range []bool{true, false} {
		name := map[bool]string{true: "after a request", false: "after the handshake"}[duringTrial]
		c := closingScript(t, duringTrial)
		pl := mustStart(t, c)
		n0 := startedCount()
		r := Request{Trial: 3, Side: SideD, Seed: 9}
		_, err := pl.Run(context.Background(), r)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: error %v (%T), want *Error", name, err, err)
		}
		msg := err.Error()
		for _, s := range []string{"trial 3 (side D, seed 9)", "closed its stdout during the trial without exiting (end of file on its stdout)",
			"it was taken as dead and its process group was killed", "(3 attempts)"} {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: error lacks %q: %s", name, s, msg)
			}
		}
		if e.Fault != FaultCrash || e.Attempts != 1+DefaultRetries {
			t.Errorf("%s: fault %v after %d attempts, want crash after %d", name, e.Fault, e.Attempts, 1+DefaultRetries)
		}
		if got := startedCount() - n0; got != DefaultRetries {
			t.Errorf("%s: %d processes started for the retries, want %d", name, got, DefaultRetries)
		}
		if err := pl.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
		checkNoProcesses(t)
	}
}

// BenchmarkClosedStdoutAttempt times one attempt at a program that closes
// its stdout after a request and stays alive: start, handshake, request,
// end of file, kill: 25 ms on two busy cores, against 1.02 s when the
// program was given a second to exit after its end of file.
func BenchmarkClosedStdoutAttempt(b *testing.B) {
	c := closingScript(b, true)
	c.Retries = -1
	pl, _, err := Start(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
	b.ResetTimer()
	for i := range b.N {
		if _, err := pl.Run(context.Background(), Request{Trial: i, Side: SideD, Seed: 1}); err == nil {
			b.Fatal("the program answered")
		}
	}
}
