//go:build slow

package main

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sectionsScript reports, for the page it is appended to, every section
// whose body (all but its heading) has no text and no picture, and every
// word of a table header that the browser drew on more than one line (a
// Range over the word's characters has boxes at more than one height) —
// at the window's width, then with the body narrowed to 600 px, and last,
// to check the checker, at 320 px with the header rule this page replaced
// (overflow-wrap: anywhere, words free to wrap).
const sectionsScript = `<script>
function words() {
  const broken = [];
  for (const th of document.querySelectorAll('th')) {
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const re = /\S+/g;
      let m;
      while ((m = re.exec(n.data)) !== null) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const tops = new Set(Array.from(r.getClientRects()).map(b => Math.round(b.top)));
        if (tops.size > 1) broken.push(th.textContent + ' → ' + m[0]);
      }
    }
  }
  return broken;
}
const empty = [];
for (const s of document.querySelectorAll('section')) {
  const h = s.querySelector('h2');
  let content = false;
  for (const c of s.children) {
    if (c !== h && (c.textContent.trim() !== '' || c.querySelector('svg, img, table'))) content = true;
  }
  if (!content) empty.push(h ? h.textContent : '(no heading)');
}
const wide = words();
document.body.style.width = '600px';
const narrow = words();
const st = document.createElement('style');
st.textContent = 'th { overflow-wrap: anywhere !important; } th .w { white-space: normal !important; }';
document.head.appendChild(st);
document.body.style.width = '320px';
const loose = words();
document.body.style.width = '';
document.head.removeChild(st);
document.body.setAttribute('data-sections', JSON.stringify({empty: empty, wide: wide, narrow: narrow, loose: loose,
  headers: Array.from(document.querySelectorAll('th')).map(th => th.textContent),
  sections: Array.from(document.querySelectorAll('section h2')).map(h => h.textContent)}));
</script>`

var reSections = regexp.MustCompile(`data-sections="([^"]*)"`)

// sectionsResult is what sectionsScript reports.
type sectionsResult struct {
	Empty    []string `json:"empty"`
	Wide     []string `json:"wide"`
	Narrow   []string `json:"narrow"`
	Loose    []string `json:"loose"`
	Headers  []string `json:"headers"`
	Sections []string `json:"sections"`
}

// checkSections loads a page in a window of the given width with
// sectionsScript and returns its report.
func checkSections(t *testing.T, bin, page string, width int) sectionsResult {
	t.Helper()
	i := strings.LastIndex(page, "</body>")
	if i < 0 {
		t.Fatal("no </body> in the page")
	}
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, []byte(page[:i]+sectionsScript+page[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	m := reSections.FindSubmatch(runChromium(t, bin, fmt.Sprintf("--window-size=%d,1200", width), "--dump-dom", "file://"+path))
	if m == nil {
		t.Fatal("the page reported nothing (scripts not run?)")
	}
	var r sectionsResult
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// The HTML reports of a program sampler and of "audit analyze", rendered
// by headless Chromium at 1100 px and narrowed to 600 px: no section is
// empty (a report without utility figures has no utility heading), and no
// table header is broken inside a word. The checker itself is checked: the
// same page with the former header rule (overflow-wrap: anywhere)
// narrowed to 320 px has broken words. Screenshots at 1100 px go to
// $AUDIT_SCREENSHOT_DIR when set, for a person to look at.
func TestHTMLReportsInChromiumNoEmptySectionNoBrokenHeader(t *testing.T) {
	bin := requireChromium(t)
	dir := t.TempDir()
	prog := programScenario(t, dir, "plain", -1, 400, "")
	scen := filepath.Join(dir, "s.yaml")
	base, err := os.ReadFile("../../testdata/sgld-interim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(scen, []byte(strings.Replace(string(base), "trials: 4000", "trials: 400", 1)+"claim: {epsilon: 3, delta: 1.0e-5}\n"), 0o644)
	prefix := filepath.Join(dir, "rel")
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--save-releases", prefix); code > 1 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	pages := map[string][]string{
		"program": {"run", prog, "--quiet", "--workers", "2"},
		"analyze": {"analyze", prefix + "-D.csv", prefix + "-DPRIME.csv", "--scenario", scen},
	}
	shots := os.Getenv("AUDIT_SCREENSHOT_DIR")
	for name, args := range pages {
		path := filepath.Join(dir, name+".html")
		if _, errs, code := runCLI(t, append(args, "--html", path)...); code > 1 {
			t.Fatalf("%s: exit %d %s", name, code, errs)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		// The scenario is shown as the user wrote it: YAML, not JSON.
		if name == "program" && !strings.Contains(page, "sampler:\n  program:") {
			t.Errorf("%s: the page does not show the scenario as written", name)
		}
		// analyze --scenario compares the samples with the scenario model's
		// exact posterior, so it has utility figures; the program scenario
		// has no model, so its page has no utility heading at all.
		if got, want := strings.Contains(page, "Utility per release"), name == "analyze"; got != want {
			t.Errorf("%s: utility section shown %v, want %v", name, got, want)
		}
		// Both designs' pages have the ε_lb attack's ROC curve, inline.
		if !strings.Contains(page, "<h2>ROC curve of the ε_lb attack — descriptive, no guarantee</h2>") || !strings.Contains(page, `<div class="plot" id="roc"><svg`) {
			t.Errorf("%s: the page has no ROC curve", name)
		}
		r := checkSections(t, bin, page, 1100)
		if len(r.Sections) < 4 || len(r.Headers) < 5 {
			t.Fatalf("%s: sections %q, headers %q: the page did not render", name, r.Sections, r.Headers)
		}
		if len(r.Empty) > 0 {
			t.Errorf("%s: empty sections %q", name, r.Empty)
		}
		if len(r.Wide) > 0 || len(r.Narrow) > 0 {
			t.Errorf("%s: headers broken inside a word: %q at 1100 px, %q at 600 px", name, r.Wide, r.Narrow)
		}
		if len(r.Loose) == 0 {
			t.Errorf("%s: the checker finds no broken header even with overflow-wrap: anywhere at 320 px", name)
		}
		if shots != "" {
			if err := os.MkdirAll(shots, 0o755); err != nil {
				t.Fatal(err)
			}
			runChromium(t, bin, "--window-size=1100,2400", "--screenshot="+filepath.Join(shots, name+".png"), "file://"+path)
		}
	}
}
