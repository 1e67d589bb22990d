package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"golang.org/x/term"
)

// chromiumSkipped makes the note of skipped page checks appear once per
// test process.
var chromiumSkipped sync.Once

// skipNoChromium skips t for want of a headless browser. t.Skip's reason
// is printed only with -v, and a plain `go test ./...` holds back all the
// output of a package that passes, so the first skip also writes one line
// to the terminal the tests were started from (when there is one and
// stderr is not already it), besides stderr: a developer without Chromium
// learns that the page checks did not run. CI sets
// MCMCAUDIT_REQUIRE_CHROMIUM=1, which makes a missing browser a failure
// before this is reached.
func skipNoChromium(t *testing.T, why string) {
	t.Helper()
	chromiumSkipped.Do(func() {
		note := fmt.Sprintf("cmd/audit: the page checks in headless Chromium (%s and the others) were SKIPPED: no Chromium on this machine (Debian package chromium, or set $CHROMIUM); MCMCAUDIT_REQUIRE_CHROMIUM=1 makes this a failure", t.Name())
		fmt.Fprintln(os.Stderr, note)
		if testing.Verbose() || term.IsTerminal(int(os.Stderr.Fd())) {
			return
		}
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			fmt.Fprintln(tty, note)
			tty.Close()
		}
	})
	t.Skip(why)
}

// Without a browser the page checks skip and say so on stderr once, even
// without -v: this binary run again with no Chromium on its PATH.
func TestChromiumSkipIsAnnounced(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "PATH" && k != "CHROMIUM" && k != "MCMCAUDIT_REQUIRE_CHROMIUM" {
			env = append(env, kv)
		}
	}
	// -test.v, so that the child writes the note to stderr only, never to
	// the terminal of whoever runs this test.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTMLReportInChromium$", "-test.count=1", "-test.short=false", "-test.v")
	cmd.Env = append(env, "PATH="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, stderr.String())
	}
	if n := strings.Count(stderr.String(), "were SKIPPED: no Chromium"); n != 1 {
		t.Errorf("stderr has the skip note %d times, want once:\n%s", n, stderr.String())
	}
	if !strings.Contains(string(out), "--- SKIP: TestHTMLReportInChromium") {
		t.Errorf("the page check did not skip:\n%s", out)
	}
}
