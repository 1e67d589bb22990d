package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// reExternal matches any attribute that would make a browser fetch
// something: the report must need nothing but itself.
var reExternal = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|<link\b|<script\b|@import|url\(`)

func htmlReports(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	run := filepath.Join(dir, "run.html")
	if _, errs, code := runCLI(t, "run", "../../testdata/gaussian-mechanism.yaml", "--claim-gdp", "0.8", "--trials", "20000", "--html", run, "--quiet"); code != exitViolation {
		t.Fatalf("run --html: exit %d %s", code, errs)
	}
	curve := filepath.Join(dir, "curve.html")
	if _, errs, code := runCLI(t, "curve", "--c", "2e7", "--eta-scale", "1", "--epochs", "1:70", "--html", curve); code != 0 {
		t.Fatalf("curve --html: exit %d %s", code, errs)
	}
	return map[string]string{"run": run, "curve": curve}
}

// The HTML reports carry the verdict, the tables and the plots inline and
// reference nothing outside themselves.
func TestHTMLReportSelfContained(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	for name, path := range htmlReports(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, want := range []string{"<!DOCTYPE html>", "<svg", "</svg>", "<table>", `id="verdict"`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s report lacks %q", name, want)
			}
		}
		if m := reExternal.FindString(s); m != "" {
			t.Errorf("%s report references an external resource: %q", name, m)
		}
		if name == "run" && !strings.Contains(s, "VIOLATION") {
			t.Errorf("run report does not show the violation")
		}
	}
}

// chromium returns a headless browser to render with, if one is installed.
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The reports open in headless Chromium: the rendered DOM has the plot's
// SVG with its drawn paths and the verdict banner, and a screenshot is
// taken (kept in $AUDIT_SCREENSHOT_DIR when set, for a person to look at).
// Each browser start costs seconds: the default suite renders the curve
// report's DOM once, the slow suite both reports and their screenshots.
func TestHTMLReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped by -short")
	}
	bin := chromium()
	if bin == "" {
		if os.Getenv("MCMCAUDIT_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("Chromium is required (MCMCAUDIT_REQUIRE_CHROMIUM=1) but not installed (Debian package chromium)")
		}
		skipNoChromium(t, "no Chromium on this machine (Debian package chromium); the HTML is still checked by TestHTMLReportSelfContained")
	}
	reports := htmlReports(t)
	if !testutil.SlowSuite {
		delete(reports, "run")
	}
	for name, path := range reports {
		flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + t.TempDir()}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		dom, err := exec.CommandContext(ctx, bin, append(flags, "--dump-dom", "file://"+path)...).Output()
		cancel()
		if err != nil {
			t.Fatalf("%s: chromium --dump-dom: %v", name, err)
		}
		d := string(dom)
		if !strings.Contains(d, "<svg") || strings.Count(d, "<path") < 10 {
			t.Errorf("%s: rendered DOM has no drawn plot (%d paths)", name, strings.Count(d, "<path"))
		}
		if !regexp.MustCompile(`id="verdict"[^>]*>[^<]*\S`).MatchString(d) {
			t.Errorf("%s: rendered DOM has no verdict text", name)
		}
		if !testutil.SlowSuite {
			continue
		}
		shotDir := os.Getenv("AUDIT_SCREENSHOT_DIR")
		if shotDir == "" {
			shotDir = t.TempDir()
		}
		shot := filepath.Join(shotDir, name+".png")
		ctx, cancel = context.WithTimeout(context.Background(), 90*time.Second)
		out, err := exec.CommandContext(ctx, bin, append(flags, "--window-size=1200,1600", "--screenshot="+shot, "file://"+path)...).CombinedOutput()
		cancel()
		if st, serr := os.Stat(shot); err != nil || serr != nil || st.Size() < 10000 {
			t.Errorf("%s: screenshot failed: %v %s", name, err, out)
		}
	}
}
