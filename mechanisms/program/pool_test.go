package program

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// started records the pid (= process group id) of every process a Pool
// started in this test binary.
var started struct {
	sync.Mutex
	pids []int
}

func init() {
	testHookStarted = func(pid int) {
		started.Lock()
		started.pids = append(started.pids, pid)
		started.Unlock()
	}
}

func startedCount() int {
	started.Lock()
	defer started.Unlock()
	return len(started.pids)
}

// procEntry is a line of /proc/<pid>/stat.
type procEntry struct {
	pid, ppid, pgrp int
	state           byte
	comm            string
}

func scanProc(t *testing.T) []procEntry {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("reading /proc: %v", err)
	}
	var out []procEntry
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		s := string(b)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		out = append(out, procEntry{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0], comm: s[i+1 : j]})
	}
	return out
}

// checkNoProcesses fails if this test process has any child left (a zombie
// included: every child must have been reaped), or if any process of a
// group a Pool started is still alive (an orphan). Dead grandchildren
// waiting for init to reap them (state Z, not our children) are not
// counted: they are not running. A grandchild the group kill has reached
// may still show as running until the kernel has scheduled its exit (a
// loaded machine takes a while), so offenders are looked for again for up
// to 5 s; one that is still there then — a `sleep 1000` that escaped the
// kill — fails the test.
func checkNoProcesses(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Log("no /proc: process check skipped")
		return
	}
	started.Lock()
	groups := map[int]bool{}
	for _, p := range started.pids {
		groups[p] = true
	}
	started.Unlock()
	self := os.Getpid()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var bad []string
		for _, e := range scanProc(t) {
			if e.ppid == self {
				bad = append(bad, fmt.Sprintf("child process %d (%s, state %c) remains", e.pid, e.comm, e.state))
			} else if groups[e.pgrp] && e.state != 'Z' {
				bad = append(bad, fmt.Sprintf("process %d (%s, state %c) of a program's group %d is still running", e.pid, e.comm, e.state, e.pgrp))
			}
		}
		if len(bad) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, b := range bad {
				t.Error(b + " 5 s after Close")
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testBinary(t testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// fake returns the configuration running the fake program in mode.
func fake(t testing.TB, mode string, env ...string) Config {
	return Config{
		Command:  []string{testBinary(t), "-fake-flag-ignored"},
		Env:      append([]string{"MCMCAUDIT_FAKE=" + mode}, env...),
		Timeout:  10 * time.Second,
		Grace:    2 * time.Second,
		MaxProcs: 2,
	}
}

func mustStart(t *testing.T, c Config) *Pool {
	t.Helper()
	pl, _, err := Start(context.Background(), c)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return pl
}

func mustClose(t *testing.T, pl *Pool) {
	t.Helper()
	if err := pl.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	checkNoProcesses(t)
}

// wantCorrect checks res against the fake program's answer for r, bit for
// bit.
func wantCorrect(t *testing.T, r Request, res Result, dim, nrel int) {
	t.Helper()
	want := Result{Releases: fakeReleases(r.Seed, r.Side, dim, nrel)}
	if err := Compare(res, want); err != nil {
		t.Errorf("%v: %v", r, err)
	}
}

// infoOf decodes the fake program's info.
func infoOf(t *testing.T, res Result) (pid int, seed uint64) {
	t.Helper()
	var info struct {
		PID  int    `json:"pid"`
		Seed uint64 `json:"seed"`
	}
	if err := json.Unmarshal(res.Info, &info); err != nil {
		t.Fatalf("info %s: %v", res.Info, err)
	}
	return info.PID, info.Seed
}

func TestAnswersRoundTripExactly(t *testing.T) {
	pl, hs, err := Start(context.Background(), fake(t, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, pl)
	want := Handshake{Dim: 3, Releases: []string{"epoch 1", "epoch 2"}}
	if !hs.Equal(want) || !pl.Handshake().Equal(want) {
		t.Fatalf("handshake %v, want %v", hs, want)
	}
	// Seeds above 2^53 are not representable as float64: they must
	// travel as exact integers both ways.
	seeds := []uint64{0, 1, 1<<53 + 1, 1<<63 + 12345, 1<<64 - 1}
	for i, seed := range seeds {
		for _, side := range []string{SideD, SideDPrime} {
			r := Request{Trial: i, Side: side, Seed: seed}
			res, err := pl.Run(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			wantCorrect(t, r, res, 3, 2)
			if _, got := infoOf(t, res); got != seed {
				t.Errorf("%v: the program received seed %d", r, got)
			}
		}
	}
}

// faultCase is a misbehaving program and what its error must say.
type faultCase struct {
	mode    string
	fault   Fault
	says    []string // substrings of the error line
	retries int
	timeout time.Duration
}

func TestFaultsAreOneClearLine(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	cases := []faultCase{
		{mode: "crash-always", fault: FaultCrash, says: []string{"exited (exit status 3) during the trial", "(3 attempts)", "fatal: giving up at trial 1"}},
		{mode: "hang", fault: FaultTimeout, retries: -1, timeout: 300 * time.Millisecond, says: []string{"no answer within 300ms", "killed", "hanging on purpose"}},
		{mode: "stray", fault: FaultProtocol, says: []string{"is not JSON", "stdout must carry protocol lines only", `"loss 0.25 at step 10"`}},
		{mode: "stray-json", fault: FaultProtocol, says: []string{`process 1: a stray line on stdout: a JSON object without "trial"`, `{\"loss\": 0.25}`}},
		{mode: "wrong-trial", fault: FaultProtocol, says: []string{"process 1: the answer is for trial 2 while trial 1 was asked"}},
		{mode: "wrong-dim", fault: FaultProtocol, says: []string{`release 2 of 2 ("epoch 2"): must have dim = 3 coordinates, got 2`}},
		{mode: "wrong-count", fault: FaultProtocol, says: []string{"must hold 2 arrays (one per release point of the handshake), got 1"}},
		{mode: "nan-string", fault: FaultProtocol, says: []string{`release 2 ("epoch 2"), coordinate 2: "NaN" is a string, and JSON has no NaN or Infinity`}},
		{mode: "nan-bare", fault: FaultProtocol, says: []string{"NaN and Infinity are not JSON numbers"}},
		{mode: "overflow", fault: FaultProtocol, says: []string{"coordinate 3: 1e999 is beyond the float64 range"}},
		{mode: "null-value", fault: FaultProtocol, says: []string{`release 1 ("epoch 1"), coordinate 2: null is null (Python's json writes None as null)`}},
		{mode: "non-json", fault: FaultProtocol, says: []string{"is not JSON", `"{trial: 1, releases: oops"`}},
		{mode: "both", fault: FaultProtocol, says: []string{`must hold "releases" or "error", not both`}},
		{mode: "bad-info", fault: FaultProtocol, says: []string{"info: must be a JSON object, got [1]"}},
		{mode: "close-stdout", fault: FaultCrash, retries: -1, says: []string{"closed its stdout during the trial without exiting"}},
		{mode: "partial", fault: FaultCrash, retries: -1, says: []string{"exited (exit status 4) during the trial, leaving an unterminated stdout line", `"{\"trial\": 1, \"releases\": [[1,"`}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "marker")
			c := fake(t, tc.mode, "FAKE_AT=1", "FAKE_MARKER="+marker)
			c.Retries = tc.retries
			if tc.timeout > 0 {
				c.Timeout = tc.timeout
			}
			c.MaxProcs = 1
			pl := mustStart(t, c)
			defer mustClose(t, pl)
			r0 := Request{Trial: 0, Side: SideD, Seed: 5}
			if res, err := pl.Run(context.Background(), r0); err != nil {
				t.Fatalf("trial 0: %v", err)
			} else {
				wantCorrect(t, r0, res, 3, 2)
			}
			n0 := startedCount()
			r := Request{Trial: 1, Side: SideDPrime, Seed: 77}
			begin := time.Now()
			_, err := pl.Run(context.Background(), r)
			took := time.Since(begin)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			msg := err.Error()
			t.Logf("%s (%v)", msg, took.Round(time.Millisecond))
			if e.Fault != tc.fault {
				t.Errorf("fault %v, want %v", e.Fault, tc.fault)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error spans several lines: %q", msg)
			}
			for _, s := range append([]string{"trial 1 (side D', seed 77)", "command: " + testBinary(t) + " -fake-flag-ignored"}, tc.says...) {
				if !strings.Contains(msg, s) {
					t.Errorf("error lacks %q", s)
				}
			}
			if e.Request == nil || *e.Request != r {
				t.Errorf("error's request %v, want %v", e.Request, r)
			}
			// Crashes and timeouts are retried, in a fresh process each
			// time; protocol faults are not.
			wantAttempts := 1
			if tc.fault == FaultCrash || tc.fault == FaultTimeout {
				wantAttempts = 1 + max(0, tc.retries)
				if tc.retries == 0 {
					wantAttempts = 1 + DefaultRetries
				}
			}
			if e.Attempts != wantAttempts {
				t.Errorf("%d attempts, want %d", e.Attempts, wantAttempts)
			}
			if got := startedCount() - n0; got != wantAttempts-1 {
				t.Errorf("%d processes started during the trial, want %d", got, wantAttempts-1)
			}
			// With MaxProcs = 1 the faulty process was the only one: none
			// may remain, not even as a zombie.
			checkNoProcesses(t)
			if tc.mode == "hang" {
				b, err := os.ReadFile(marker)
				if err != nil {
					t.Fatalf("the hanging program did not start its grandchild: %v", err)
				}
				gc, _ := strconv.Atoi(string(b))
				for _, p := range scanProc(t) {
					if p.pid == gc && p.state != 'Z' {
						t.Errorf("grandchild %d survived the timeout (state %c)", gc, p.state)
					}
				}
			}
			// The faulty process is gone, and the pool goes on in a new
			// one.
			r2 := Request{Trial: 2, Side: SideD, Seed: 9}
			res, err := pl.Run(context.Background(), r2)
			if err != nil {
				t.Fatalf("trial 2 after the fault: %v", err)
			}
			wantCorrect(t, r2, res, 3, 2)
		})
	}
}

func TestLineTooLong(t *testing.T) {
	c, _ := fake(t, "long-line", "FAKE_AT=0").withDefaults()
	pl, _, err := startPool(context.Background(), c, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, pl)
	_, err = pl.Run(context.Background(), Request{Trial: 0, Side: SideD, Seed: 1})
	var e *Error
	if !errors.As(err, &e) || e.Fault != FaultProtocol || !strings.Contains(err.Error(), "longer than 1000 bytes") {
		t.Fatalf("got %v", err)
	}
	if len(e.Line) > 200 {
		t.Errorf("offending line kept with %d bytes", len(e.Line))
	}
}

func TestTrialErrorIsTheProgramsAnswer(t *testing.T) {
	c := fake(t, "trial-error", "FAKE_AT=1")
	c.MaxProcs = 1
	pl := mustStart(t, c)
	defer mustClose(t, pl)
	n0 := startedCount()
	r := Request{Trial: 1, Side: SideD, Seed: 3}
	_, err := pl.Run(context.Background(), r)
	var te *TrialError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want *TrialError", err, err)
	}
	var e *Error
	if errors.As(err, &e) {
		t.Error("a trial error is also an *Error")
	}
	if te.Message != "the chain diverged\nat step 12" || te.Request != r {
		t.Errorf("trial error %+v", te)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n") || !strings.Contains(msg, "trial 1 (side D, seed 3): the program reported an error: \"the chain diverged | at step 12\"") {
		t.Errorf("message %q", msg)
	}
	// Not retried, and the process, which answered properly, serves on.
	r2 := Request{Trial: 2, Side: SideD, Seed: 3}
	res, err := pl.Run(context.Background(), r2)
	if err != nil {
		t.Fatal(err)
	}
	wantCorrect(t, r2, res, 3, 2)
	if n := startedCount() - n0; n != 0 {
		t.Errorf("%d processes started after a trial error, want 0", n)
	}
}

func TestCrashOnceIsRetried(t *testing.T) {
	var stderr lockedBuffer
	c := fake(t, "crash-once", "FAKE_AT=4", "FAKE_MARKER="+filepath.Join(t.TempDir(), "m"))
	c.Stderr = &stderr
	c.MaxProcs = 1
	pl := mustStart(t, c)
	defer mustClose(t, pl)
	n0 := startedCount()
	r := Request{Trial: 4, Side: SideDPrime, Seed: 1 << 60}
	res, err := pl.Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	wantCorrect(t, r, res, 3, 2)
	if n := startedCount() - n0; n != 1 {
		t.Errorf("%d processes started, want 1 (the restart)", n)
	}
	if pid, _ := infoOf(t, res); pid == 0 {
		t.Error("no pid in info")
	}
	if !strings.Contains(stderr.String(), "[sampler 1] crashing once on purpose at trial 4\n") {
		t.Errorf("stderr not passed through with its prefix: %q", stderr.String())
	}
}

func TestHandshakeFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	cases := []struct {
		mode  string
		fault Fault
		says  string
	}{
		{"bad-version", FaultHandshake, "handshake mcmcaudit: must be 1 (this tool speaks mcmcaudit/1), got 2"},
		{"bad-dim", FaultHandshake, "handshake dim: must be an integer in [1, 8388608] (each answer carries dim × releases numbers on one line, which may not exceed 2^28 bytes), got 0"},
		{"no-releases", FaultHandshake, "handshake releases: must hold 1 to"},
		{"handshake-not-json", FaultHandshake, "the first stdout line (the handshake"},
		{"exit-at-start", FaultCrash, `exited (exit status 1) before its handshake; command: ` + testBinary(t) + ` -fake-flag-ignored; last 2 stderr lines: "Traceback (most recent call last):" | "ModuleNotFoundError: No module named 'numpy'"`},
		{"no-handshake", FaultTimeout, "sent no handshake within 300ms (timeout)"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			c := fake(t, tc.mode)
			c.Timeout = 300 * time.Millisecond
			pl, _, err := Start(context.Background(), c)
			if pl != nil {
				pl.Close()
				t.Fatal("Start returned a pool")
			}
			var e *Error
			if !errors.As(err, &e) || e.Fault != tc.fault {
				t.Fatalf("error %v, want fault %v", err, tc.fault)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error lacks %q", tc.says)
			}
			checkNoProcesses(t)
		})
	}
}

func TestLaterHandshakeMustMatch(t *testing.T) {
	c := fake(t, "handshake-mismatch", "FAKE_MARKER="+filepath.Join(t.TempDir(), "m"))
	pl := mustStart(t, c)
	defer mustClose(t, pl)
	_, err := pl.RunFresh(context.Background(), Request{Trial: 0, Side: SideD, Seed: 1})
	var e *Error
	if !errors.As(err, &e) || e.Fault != FaultHandshake {
		t.Fatalf("got %v", err)
	}
	want := `process 2's handshake {dim 4, releases ["epoch 1","epoch 2"]} differs from the first process's {dim 3, releases ["epoch 1","epoch 2"]}`
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "trial 0 (side D, seed 1)") {
		t.Errorf("got %v", err)
	}
}

func TestStartFault(t *testing.T) {
	_, _, err := Start(context.Background(), Config{Command: []string{"/nonexistent/sampler", "--x"}})
	var e *Error
	if !errors.As(err, &e) || e.Fault != FaultStart || !strings.Contains(err.Error(), "cannot start process 1") || !strings.Contains(err.Error(), "/nonexistent/sampler --x") {
		t.Fatalf("got %v", err)
	}
	checkNoProcesses(t)
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		c    Config
		says string
	}{
		{Config{}, "command: must name a program"},
		{Config{Command: []string{""}}, "command: must name a program"},
		{Config{Command: []string{"x"}, Env: []string{"NOEQUALS"}}, `env: entry 0 must be KEY=VALUE with a non-empty KEY, got "NOEQUALS"`},
		{Config{Command: []string{"x"}, Env: []string{"=v"}}, "env: entry 0"},
		{Config{Command: []string{"x"}, Timeout: -time.Second}, "timeout: must be ≥ 0 (0 = 1m0s), got -1s"},
		{Config{Command: []string{"x"}, Retries: -2}, "retries: must be in [-1, 100] (0 = 2, -1 = none), got -2"},
		{Config{Command: []string{"x"}, Retries: 101}, "retries: must be in [-1, 100]"},
		{Config{Command: []string{"x"}, Grace: -1}, "grace: must be ≥ 0"},
		{Config{Command: []string{"x"}, MaxProcs: -1}, "max_procs: must be ≥ 0 (0 = GOMAXPROCS), got -1"},
		{Config{Command: []string{"x"}, Name: "a\nb"}, "name: must be one line"},
	}
	for _, tc := range cases {
		_, _, err := Start(context.Background(), tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: error %v, want %q", tc.c, err, tc.says)
		}
	}
	pl := mustStart(t, fake(t, "ok"))
	defer mustClose(t, pl)
	for _, r := range []Request{{Trial: -1, Side: SideD}, {Trial: 0, Side: "D2"}} {
		if _, err := pl.Run(context.Background(), r); err == nil || !strings.Contains(err.Error(), "program: request ") {
			t.Errorf("%+v: error %v", r, err)
		}
	}
}

func TestDeterminismCheck(t *testing.T) {
	for _, mode := range []string{"ok", "nondeterministic"} {
		t.Run(mode, func(t *testing.T) {
			pl := mustStart(t, fake(t, mode))
			defer mustClose(t, pl)
			r := Request{Trial: 3, Side: SideD, Seed: 42}
			a, err := pl.Run(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			n0 := startedCount()
			b, err := pl.RunFresh(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if n := startedCount() - n0; n != 1 {
				t.Errorf("RunFresh started %d processes, want 1", n)
			}
			pa, _ := infoOf(t, a)
			pb, _ := infoOf(t, b)
			if pa == pb {
				t.Errorf("RunFresh answered from the pooled process %d", pa)
			}
			err = Compare(a, b)
			switch mode {
			case "ok":
				if err != nil || !Equal(a, b) {
					t.Errorf("deterministic program: %v", err)
				}
			case "nondeterministic":
				if err == nil || Equal(a, b) || !strings.HasPrefix(err.Error(), "release 1 of 2, coordinate 1 of 3 differs: ") {
					t.Errorf("nondeterministic program: %v", err)
				}
				t.Log(err)
			}
			// RunFresh's process is gone once it has answered.
			for _, p := range scanProc(t) {
				if p.pid == pb {
					t.Errorf("RunFresh's process %d is still there (state %c)", pb, p.state)
				}
			}
		})
	}
}

func TestCompare(t *testing.T) {
	a := Result{Releases: [][]float64{{1, 0}, {2, 3}}}
	cases := []struct {
		b    Result
		says string
	}{
		{Result{Releases: [][]float64{{1, 0}, {2, 3}}, Info: json.RawMessage(`{"t": 1}`)}, ""},
		{Result{Releases: [][]float64{{1, 0}}}, "the results have 2 and 1 releases"},
		{Result{Releases: [][]float64{{1, 0}, {2}}}, "release 2 of 2 has 2 and 1 coordinates"},
		{Result{Releases: [][]float64{{1, negZero()}, {2, 3}}}, "release 1 of 2, coordinate 2 of 2 differs: 0 vs -0"},
		{Result{Releases: [][]float64{{1, 0}, {2, 3.0000000000000004}}}, "release 2 of 2, coordinate 2 of 2 differs: 3 vs 3.0000000000000004"},
	}
	for _, tc := range cases {
		err := Compare(a, tc.b)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("equal results: %v", err)
		case tc.says != "" && (err == nil || err.Error() != tc.says):
			t.Errorf("got %v, want %q", err, tc.says)
		}
	}
}

func negZero() float64 { z := 0.0; return -z }

func TestConcurrentRunsMatchSequential(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	const workers, trials = 4, 400
	reqs := make([]Request, trials)
	for i := range reqs {
		side := SideD
		if i%2 == 1 {
			side = SideDPrime
		}
		reqs[i] = Request{Trial: i, Side: side, Seed: uint64(i)*0x9e3779b97f4a7c15 + 1}
	}
	seq := make([]Result, trials)
	c := fake(t, "ok", "FAKE_DIM=4", "FAKE_RELEASES=5")
	c.MaxProcs = 1
	pl := mustStart(t, c)
	for i, r := range reqs {
		res, err := pl.Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		seq[i] = res
	}
	mustClose(t, pl)

	c.MaxProcs = workers
	n0 := startedCount()
	pl = mustStart(t, c)
	defer mustClose(t, pl)
	par := make([]Result, trials)
	pids := make([]map[int]bool, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		pids[w] = map[int]bool{}
		wg.Go(func() {
			for i := w; i < trials; i += workers {
				res, err := pl.Run(context.Background(), reqs[i])
				if err != nil {
					errs <- err
					return
				}
				par[i] = res
				pid, _ := infoOf(t, res)
				pids[w][pid] = true
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range reqs {
		if err := Compare(seq[i], par[i]); err != nil {
			t.Errorf("%v: concurrent vs sequential: %v", reqs[i], err)
		}
		wantCorrect(t, reqs[i], par[i], 4, 5)
	}
	all := map[int]bool{}
	for _, m := range pids {
		for p := range m {
			all[p] = true
		}
	}
	n := startedCount() - n0
	t.Logf("%d trials from %d goroutines served by %d processes", trials, workers, len(all))
	if n > workers || len(all) > workers {
		t.Errorf("%d processes started, %d answered; at most %d allowed", n, len(all), workers)
	}
	if len(all) < 2 {
		t.Errorf("only %d process served %d concurrent goroutines", len(all), workers)
	}
}

func TestMaxProcsBoundsLiveProcesses(t *testing.T) {
	c := fake(t, "ok")
	c.MaxProcs = 2
	n0 := startedCount()
	pl := mustStart(t, c)
	defer mustClose(t, pl)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for i := 0; i < 50; i++ {
				if _, err := pl.Run(context.Background(), Request{Trial: w*50 + i, Side: SideD, Seed: uint64(i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := startedCount() - n0; n > 2 {
		t.Errorf("%d processes started for MaxProcs = 2", n)
	}
	// A fresh run at the limit replaces an idle process.
	if _, err := pl.RunFresh(context.Background(), Request{Trial: 1000, Side: SideD, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	pl.mu.Lock()
	live := pl.live
	pl.mu.Unlock()
	if live > 2 {
		t.Errorf("%d live processes for MaxProcs = 2", live)
	}
}

func TestStderrPassThroughAndTail(t *testing.T) {
	var stderr lockedBuffer
	c := fake(t, "stderr-flood", "FAKE_AT=3")
	c.Stderr = &stderr
	c.Retries = 1
	c.MaxProcs = 1
	pl := mustStart(t, c)
	defer mustClose(t, pl)
	for i := 0; i < 3; i++ {
		r := Request{Trial: i, Side: SideD, Seed: uint64(i)}
		res, err := pl.Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		wantCorrect(t, r, res, 3, 2)
	}
	_, err := pl.Run(context.Background(), Request{Trial: 3, Side: SideD, Seed: 3})
	var e *Error
	if !errors.As(err, &e) || e.Fault != FaultCrash {
		t.Fatalf("got %v", err)
	}
	if len(e.Stderr) != StderrTail || e.Stderr[StderrTail-1] != "fatal: giving up at trial 3" ||
		!strings.HasPrefix(e.Stderr[0], "noise line 1981 of trial 3: xxx") {
		t.Errorf("stderr tail: first %q, last %q (%d lines)", e.Stderr[0], e.Stderr[len(e.Stderr)-1], len(e.Stderr))
	}
	// Every line went through whole and prefixed: 3 trials + 2 attempts
	// of 2000 lines, and 2 last words.
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 5*2000+2 {
		t.Errorf("%d stderr lines passed through, want %d", len(lines), 5*2000+2)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "[sampler ") || !(strings.Contains(l, "] noise line ") && strings.HasSuffix(l, strings.Repeat("x", 100)) || strings.Contains(l, "] fatal: giving up at trial 3")) {
			t.Fatalf("mangled stderr line %q", l)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-1], "[sampler 2] fatal") {
		t.Errorf("last line %q: the retry should run in process 2", lines[len(lines)-1])
	}
}

func TestCancellationIsPrompt(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	c := fake(t, "hang", "FAKE_AT=0")
	c.Timeout = time.Minute
	pl := mustStart(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	begin := time.Now()
	_, err := pl.Run(ctx, Request{Trial: 0, Side: SideD, Seed: 1})
	took := time.Since(begin)
	var e *Error
	if !errors.As(err, &e) || e.Fault != FaultCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	// A cancellation that did not work would end in the one-minute
	// timeout, whose fault is FaultTimeout: the check above is the bound.
	t.Logf("%v after %v", err, took.Round(time.Millisecond))
	// A context canceled before the trial leaves the idle process alone.
	if _, err := pl.Run(context.Background(), Request{Trial: 1, Side: SideD, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	n0 := startedCount()
	_, err = pl.Run(ctx, Request{Trial: 2, Side: SideD, Seed: 1})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a canceled context: %v", err)
	}
	if _, err := pl.Run(context.Background(), Request{Trial: 3, Side: SideD, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if n := startedCount() - n0; n != 0 {
		t.Errorf("%d processes started: a canceled context killed an idle one", n)
	}
	mustClose(t, pl)
	// A canceled context also stops a Run waiting for a process.
	c.MaxProcs = 1
	pl2 := mustStart(t, c)
	defer mustClose(t, pl2)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	go pl2.Run(ctx2, Request{Trial: 0, Side: SideD, Seed: 1}) // holds the only process
	time.Sleep(50 * time.Millisecond)
	_, err = pl2.Run(ctx2, Request{Trial: 1, Side: SideD, Seed: 1})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting Run: %v", err)
	}
}

func TestClose(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	t.Run("ignores EOF", func(t *testing.T) {
		c := fake(t, "ignore-eof")
		c.Grace = 200 * time.Millisecond
		pl := mustStart(t, c)
		if _, err := pl.Run(context.Background(), Request{Trial: 0, Side: SideD, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		err := pl.Close()
		if err == nil || !strings.Contains(err.Error(), "process 1 did not exit within 200ms of its stdin being closed; its process group was killed") {
			t.Errorf("Close: %v", err)
		}
		checkNoProcesses(t)
		_, err = pl.Run(context.Background(), Request{Trial: 1, Side: SideD, Seed: 1})
		var e *Error
		if !errors.As(err, &e) || e.Fault != FaultClosed || !errors.Is(err, ErrClosed) {
			t.Errorf("Run after Close: %v", err)
		}
		if err := pl.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
	t.Run("exit status", func(t *testing.T) {
		pl := mustStart(t, fake(t, "exit-1-at-eof"))
		err := pl.Close()
		if err == nil || !strings.Contains(err.Error(), `process 1 exited (exit status 1) when its stdin was closed`) || !strings.Contains(err.Error(), `"cleanup failed"`) {
			t.Errorf("Close: %v", err)
		}
		checkNoProcesses(t)
	})
	t.Run("during a run", func(t *testing.T) {
		c := fake(t, "hang", "FAKE_AT=0")
		c.Grace = 100 * time.Millisecond
		pl := mustStart(t, c)
		done := make(chan error)
		go func() {
			_, err := pl.Run(context.Background(), Request{Trial: 0, Side: SideD, Seed: 1})
			done <- err
		}()
		time.Sleep(200 * time.Millisecond)
		pl.Close()
		err := <-done
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Run during Close: %v", err)
		}
		checkNoProcesses(t)
	})
}

func TestWireEdgeCases(t *testing.T) {
	hs, f := parseHandshake([]byte("\xef\xbb\xbf" + `{"mcmcaudit": 1, "dim": 2, "releases": ["a"], "future": true}`))
	if f != nil || hs.Dim != 2 || len(hs.Releases) != 1 {
		t.Errorf("BOM and unknown keys: %v %v", hs, f)
	}
	for line, says := range map[string]string{
		`{"mcmcaudit": 1, "dim": 2.5, "releases": ["a"]}`:          "handshake dim: must be an integer",
		`{"mcmcaudit": 1, "dim": 2, "releases": "a"}`:              "handshake releases: must be an array",
		`{"mcmcaudit": 1, "dim": 2, "releases": ["a", 3]}`:         "handshake releases: must be an array",
		`{"mcmcaudit": 1, "dim": 2}`:                               "got nothing",
		`{"mcmcaudit": "1", "dim": 2, "releases": ["a"]}`:          `must be 1 (this tool speaks mcmcaudit/1), got "1"`,
		`{"dim": 2, "releases": ["a"]}`:                            `no "mcmcaudit" key`,
		`[1]`:                                                      "must be the handshake object",
		`{"mcmcaudit": 1, "dim": 5000000, "releases": ["a", "b"]}`: "must hold 1 to 1 labels",
	} {
		if _, f := parseHandshake([]byte(line)); f == nil || !strings.Contains(f.detail, says) {
			t.Errorf("%s: %v, want %q", line, f, says)
		}
	}
	h := &Handshake{Dim: 1, Releases: []string{"r"}}
	res, _, _, f := parseAnswer([]byte(`{"releases": [[-0]], "trial": 7, "extra": {"x": 1}, "info": null}`), 7, h)
	if f != nil || !Equal(res, Result{Releases: [][]float64{{negZero()}}}) || res.Info != nil {
		t.Errorf("answer with unknown keys: %v %v", res, f)
	}
	for line, says := range map[string]string{
		`{"trial": 7.0, "releases": [[1]]}`:  "answer trial: must be an integer, got 7.0",
		`{"trial": "7", "releases": [[1]]}`:  `answer trial: must be an integer, got "7"`,
		`{"trial": 7}`:                       `must hold "releases" (or "error"), got neither`,
		`{"trial": 7, "error": 3}`:           "answer error: must be a string, got 3",
		`{"trial": 7, "releases": [1]}`:      "release 1 (\"r\") is 1",
		`{"trial": 7, "releases": [[true]]}`: "coordinate 1: true is not a number",
		`{"trial": 7, "releases": {"a": 1}}`: "must be an array of 1 arrays of 1 numbers",
		`{"trial": 7, "releases": [null]}`:   "release 1 (\"r\") is null",
		`42`:                                 "stray line on stdout, not an answer",
		`null`:                               "stray line on stdout, not an answer",
	} {
		if _, _, _, f := parseAnswer([]byte(line), 7, h); f == nil || !strings.Contains(f.detail, says) {
			t.Errorf("%s: %v, want %q", line, f, says)
		}
	}
	if got := string(appendRequest(nil, Request{Trial: 12, Side: SideDPrime, Seed: 1<<64 - 1})); got != `{"trial": 12, "side": "D'", "seed": 18446744073709551615}`+"\n" {
		t.Errorf("request line %q", got)
	}
	var req struct {
		Trial int
		Side  string
		Seed  uint64
	}
	if err := json.Unmarshal(appendRequest(nil, Request{Trial: 1, Side: SideDPrime, Seed: 1<<53 + 1}), &req); err != nil || req.Side != "D'" || req.Seed != 1<<53+1 {
		t.Errorf("request does not decode: %+v %v", req, err)
	}
	if got := commandLine([]string{"python3", "my sampler.py", "", `a"b`}); got != `python3 "my sampler.py" "" "a\"b"` {
		t.Errorf("commandLine %s", got)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func BenchmarkProtocolOverhead(b *testing.B) {
	for _, size := range []struct{ dim, nrel int }{{1, 1}, {4, 20}} {
		b.Run(fmt.Sprintf("dim=%d,releases=%d", size.dim, size.nrel), func(b *testing.B) {
			c := fake(b, "ok", fmt.Sprintf("FAKE_DIM=%d", size.dim), fmt.Sprintf("FAKE_RELEASES=%d", size.nrel))
			c.MaxProcs = 1
			pl, _, err := Start(context.Background(), c)
			if err != nil {
				b.Fatal(err)
			}
			defer pl.Close()
			pid := lastStarted()
			cpu0, cpuOK := cpuTime(pid)
			i := 0
			begin := time.Now()
			for b.Loop() {
				if _, err := pl.Run(context.Background(), Request{Trial: i, Side: SideD, Seed: uint64(i)}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(time.Since(begin).Microseconds())/float64(i), "µs/trial")
			if cpu1, ok := cpuTime(pid); ok && cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(i), "cpu-µs/trial")
			}
		})
	}
}
