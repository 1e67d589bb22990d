package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// requireChromium returns the headless browser, skipping the test when
// there is none — unless MCMCAUDIT_REQUIRE_CHROMIUM=1 (CI), which makes a
// missing browser a failure.
func requireChromium(t *testing.T) string {
	t.Helper()
	bin := chromium()
	if bin == "" {
		if os.Getenv("MCMCAUDIT_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("MCMCAUDIT_REQUIRE_CHROMIUM=1 but no Chromium found (Debian package chromium, or $CHROMIUM)")
		}
		skipNoChromium(t, "no Chromium on this machine (set MCMCAUDIT_REQUIRE_CHROMIUM=1 to make this a failure)")
	}
	return bin
}

// runChromium runs headless Chromium with a fresh profile.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// measureScript reports, for every inline <svg> of the page, its size in
// CSS pixels and the rendered box of each run of text (<g class="text">,
// or a <text> element of an SVG written otherwise) relative to it, with
// the box the SVG itself declares (data-bbox, in its user units).
const measureScript = `<script>
const out = [];
for (const svg of document.querySelectorAll('svg')) {
  const r = svg.getBoundingClientRect();
  const texts = [];
  for (const g of svg.querySelectorAll('g.text, text')) {
    const b = g.getBoundingClientRect();
    texts.push({text: g.getAttribute('aria-label') || g.textContent, box: [b.left - r.left, b.top - r.top, b.right - r.left, b.bottom - r.top],
      declared: g.getAttribute('data-bbox') || ''});
  }
  out.push({name: svg.parentElement.id, width: r.width, height: r.height, viewBox: svg.getAttribute('viewBox'), texts: texts});
}
const root = document.documentElement;
document.body.setAttribute('data-result', JSON.stringify({plots: out, scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
  pres: Array.from(document.querySelectorAll('pre')).map(p => [p.scrollWidth, p.clientWidth])}));
</script>`

// pageResult is what measureScript reports.
type pageResult struct {
	Plots []struct {
		Name    string  `json:"name"`
		Width   float64 `json:"width"`
		Height  float64 `json:"height"`
		ViewBox string  `json:"viewBox"`
		Texts   []struct {
			Text     string     `json:"text"`
			Box      [4]float64 `json:"box"`
			Declared string     `json:"declared"`
		} `json:"texts"`
	} `json:"plots"`
	ScrollWidth int      `json:"scrollWidth"`
	ClientWidth int      `json:"clientWidth"`
	Pres        [][2]int `json:"pres"`
}

var reResult = regexp.MustCompile(`data-result="([^"]*)"`)

// measure loads a page in Chromium with measureScript appended and
// returns what it reports.
func measure(t *testing.T, bin, page string, windowWidth int) pageResult {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	if i := strings.LastIndex(page, "</body>"); i >= 0 {
		page = page[:i] + measureScript + page[i:]
	} else {
		page += measureScript
	}
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, bin, fmt.Sprintf("--window-size=%d,1200", windowWidth), "--dump-dom", "file://"+path)
	m := reResult.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the page reported nothing (scripts not run?)")
	}
	var r pageResult
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// galleryPlots are the committed plots of the gallery (docs/gallery.md), plus
// fresh ones of the current code for the kinds the gallery lacks: a bound
// thousands of times ε_lb (logarithmic ε axis) and a single release (bars).
func galleryPlots(t *testing.T) map[string][]byte {
	t.Helper()
	plots := map[string][]byte{}
	docs, _ := filepath.Glob("../../docs/*.svg")
	if len(docs) < 6 {
		t.Fatalf("only %d plots in docs/", len(docs))
	}
	for _, f := range docs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		plots["docs/"+filepath.Base(f)] = b
	}
	dir := t.TempDir()
	fresh := [][]string{
		{"fresh-interim", "run", "../../testdata/sgld-interim.yaml"},
		{"fresh-logaxis", "run", "../../testdata/sgld-logistic.yaml", "--trials", "400"},
		{"fresh-bars", "run", "../../testdata/dp-sgld-correct.yaml", "--trials", "2000"},
		{"fresh-curve", "curve", "--c", "2e7", "--eta-scale", "1", "--epochs", "1:70"},
	}
	for _, f := range fresh {
		out := filepath.Join(dir, f[0]+".svg")
		args := append(f[1:], "--plot", out)
		if f[1] == "run" {
			args = append(args, "--quiet")
		}
		if _, errs, code := runCLI(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		plots[f[0]] = b
	}
	return plots
}

// The gallery's plots in headless Chromium, with only the machine's own
// fonts: every run of text is drawn inside its picture, where the SVG
// declares it (so the layout does not depend on the fonts installed), and
// a screenshot of them all is written ($AUDIT_SCREENSHOT_DIR/plots.png
// when set, for a person to look at).
func TestGalleryPlotsInChromium(t *testing.T) {
	testutil.Slow(t)
	bin := requireChromium(t)
	plots := galleryPlots(t)
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0} div{margin:0 0 12px 0}</style></head><body>\n")
	var names []string
	for name := range plots {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		svg := string(plots[name])
		if i := strings.Index(svg, "<svg"); i > 0 {
			svg = svg[i:]
		}
		fmt.Fprintf(&page, "<div id=%q>%s</div>\n", name, svg)
	}
	page.WriteString("</body></html>\n")
	r := measure(t, bin, page.String(), 800)
	if len(r.Plots) != len(plots) {
		t.Fatalf("%d plots rendered, want %d", len(r.Plots), len(plots))
	}
	for _, p := range r.Plots {
		vb := strings.Fields(p.ViewBox)
		if len(vb) != 4 || len(p.Texts) < 5 {
			t.Errorf("%s: viewBox %q, %d texts", p.Name, p.ViewBox, len(p.Texts))
			continue
		}
		vw, _ := strconv.ParseFloat(vb[2], 64)
		scale := p.Width / vw
		plain := 0
		for _, tx := range p.Texts {
			b := tx.Box
			if b[0] < 0.5 || b[1] < 0.5 || b[2] > p.Width-0.5 || b[3] > p.Height-0.5 || !(b[2] > b[0]) {
				t.Errorf("%s: %q is drawn at [%.1f, %.1f]×[%.1f, %.1f] px, outside the %.0f×%.0f picture",
					p.Name, tx.Text, b[0], b[2], b[1], b[3], p.Width, p.Height)
			}
			if tx.Declared == "" {
				plain++
				continue
			}
			var d [4]float64
			for i, f := range strings.Fields(tx.Declared) {
				d[i], _ = strconv.ParseFloat(f, 64)
			}
			for i := range 4 {
				if math.Abs(d[i]*scale-b[i]) > 2 {
					t.Errorf("%s: %q is drawn at %v px but declared at %v pt (× %.4g)", p.Name, tx.Text, b, d, scale)
					break
				}
			}
		}
		if plain > 0 {
			t.Errorf("%s: %d <text> elements, whose extent depends on the viewer's fonts", p.Name, plain)
		}
	}
	dir := os.Getenv("AUDIT_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pagePath := filepath.Join(t.TempDir(), "plots.html")
	os.WriteFile(pagePath, []byte(page.String()), 0o644)
	height := 0
	for _, p := range r.Plots {
		height += int(p.Height) + 12
	}
	shot := filepath.Join(dir, "plots.png")
	runChromium(t, bin, fmt.Sprintf("--window-size=800,%d", height), "--screenshot="+shot, "file://"+pagePath)
	if st, err := os.Stat(shot); err != nil || st.Size() < 20000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
}

// The HTML report does not scroll sideways: at 800 px the page and its
// printed report fit the window (long lines wrap).
func TestHTMLReportFitsTheWindow(t *testing.T) {
	testutil.Slow(t)
	bin := requireChromium(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "../../testdata/sgld-logistic.yaml", "--trials", "400"},
		{"run", "../../testdata/gaussian-mechanism.yaml", "--claim-gdp", "0.8", "--trials", "2000"},
	} {
		path := filepath.Join(dir, "r.html")
		if _, errs, code := runCLI(t, append(args, "--html", path, "--quiet")...); code != exitOK && code != exitViolation {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		b, _ := os.ReadFile(path)
		r := measure(t, bin, string(b), 800)
		if r.ScrollWidth > r.ClientWidth+1 {
			t.Errorf("%v: the page is %d px wide in an %d px window", args, r.ScrollWidth, r.ClientWidth)
		}
		for i, p := range r.Pres {
			if p[0] > p[1]+1 {
				t.Errorf("%v: block %d scrolls sideways (%d px of content in %d px)", args, i, p[0], p[1])
			}
		}
	}
}

// The HTML reports' ROC curves in headless Chromium, in either design:
// the section's SVG renders at the page's width with every run of text
// inside it, and a screenshot of it ($AUDIT_SCREENSHOT_DIR/roc-NAME.png
// when set, for a person to look at) shows the curve: pixels of its red,
// well beyond a legend's thumbnail.
func TestROCCurveInChromium(t *testing.T) {
	testutil.Slow(t)
	bin := requireChromium(t)
	dir := os.Getenv("AUDIT_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, scenario string }{
		{"runs", "../../testdata/sgld-interim.yaml"},
		{"canaries", "../../testdata/sgld-canaries.yaml"},
	} {
		r := runROCReport(t, c.scenario)
		res := measure(t, bin, r.page, 800)
		var found bool
		for _, p := range res.Plots {
			if p.Name != "roc" {
				continue
			}
			found = true
			if p.Width < 300 || len(p.Texts) < 8 {
				t.Errorf("%s: the ROC curve is %.0f px wide with %d texts", c.name, p.Width, len(p.Texts))
			}
			axis := false
			for _, tx := range p.Texts {
				b := tx.Box
				if b[0] < 0 || b[1] < 0 || b[2] > p.Width+0.5 || b[3] > p.Height+0.5 {
					t.Errorf("%s: %q is drawn outside the ROC picture", c.name, tx.Text)
				}
				axis = axis || tx.Text == "false-positive rate (log)"
			}
			if !axis {
				t.Errorf("%s: the ROC picture has no FPR axis label", c.name)
			}
		}
		if !found {
			t.Fatalf("%s: no ROC picture rendered in the page", c.name)
		}
		// A page of the ROC picture alone, screenshotted.
		_, roc, ok := strings.Cut(r.page, `<div class="plot" id="roc">`)
		if !ok {
			t.Fatalf("%s: no ROC block", c.name)
		}
		roc, _, _ = strings.Cut(roc, "</svg>")
		page := filepath.Join(t.TempDir(), "roc.html")
		os.WriteFile(page, []byte(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0} svg{width:768px;height:auto}</style></head><body>`+roc+"</svg></body></html>"), 0o644)
		shot := filepath.Join(dir, "roc-"+c.name+".png")
		runChromium(t, bin, "--window-size=800,900", "--screenshot="+shot, "file://"+page)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		red := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if r>>8 > 200 && g>>8 < 110 && bl>>8 < 110 {
					red++
				}
			}
		}
		t.Logf("%s: %d red pixels in %s", c.name, red, shot)
		if red < 400 {
			t.Errorf("%s: the screenshot %s has %d pixels of the curve's red: no curve drawn", c.name, shot, red)
		}
	}
}
