package report

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The refuted marker stands out from the claim's dashed line it sits on:
// drawn over the line, it changes at least the pixels of a disk of 5 pt
// radius (the thin cross in the line's colour it replaces changed under a
// third of that), and some of them are black, a colour the line is not.
func TestRefutedMarkerIsVisible(t *testing.T) {
	line := series{name: "claim", x: []float64{1, 2, 3}, y: []float64{2, 2, 2}, color: 2, dashed: true}
	mark := series{name: "refuted", x: []float64{2}, y: []float64{2}, color: 2, points: true}
	render := func(ss ...series) *image.RGBA {
		t.Helper()
		p := plot.New()
		for _, s := range ss {
			if _, err := addSeries(p, s, false); err != nil {
				t.Fatal(err)
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 4, 0, 4
		c := vgimg.NewWith(vgimg.UseWH(vg.Points(200), vg.Points(200)), vgimg.UseDPI(144))
		p.Draw(draw.New(c))
		return c.Image().(*image.RGBA)
	}
	with, without := render(line, mark), render(line)
	scale := 144.0 / 72 // pixels per point
	diff, black := 0, 0
	b := with.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p1, p0 := with.RGBAAt(x, y), without.RGBAAt(x, y)
			if p1 != p0 {
				diff++
				if nearColour(p1, color.RGBA{A: 255}) {
					black++
				}
			}
		}
	}
	t.Logf("the marker changes %d pixels, %d of them black (%.3g px per pt)", diff, black, scale)
	if want := math.Pi * 25 * scale * scale; float64(diff) < want {
		t.Errorf("the refuted marker changes %d pixels, want ≥ %.0f (a disk of 5 pt)", diff, want)
	}
	if want := 4 * scale * scale; float64(black) < want {
		t.Errorf("the refuted marker has %d black pixels, want ≥ %.0f: not told apart from the line", black, want)
	}
}

// nearColour reports whether two colours are within a few levels of each other.
func nearColour(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) < 40 && int(y)-int(x) < 40 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}

// On the bars of a single release the refuted pair is a bar, and its
// legend says so; on a curve of releases the legend names the ringed cross.
func TestRefutedLegendNamesItsMark(t *testing.T) {
	for _, n := range []int{1, 3} {
		r := fakeReport("refuted", n, false, 1, map[string]float64{"claimed (0.5, 1e-05)-DP": 0.5})
		r.ClaimTests = []audit.ClaimTest{{Name: r.Claims[0], Covered: true, Point: n - 1,
			Refutation: &audit.Refutation{Refuted: true, Epsilon: 0.4, Delta: 0.01, Confidence: 0.95}}}
		var b bytes.Buffer
		if err := WritePlot(&b, "svg", r); err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, run := range checkSVG(t, "refuted", b.Bytes()) {
			all = append(all, run.text)
		}
		legend := strings.Join(strings.Fields(strings.Join(all, " ")), " ")
		want, not := "the ringed cross marks that ε", "the bar shows that ε"
		if n == 1 {
			want, not = not, want
		}
		if !strings.Contains(legend, want) || strings.Contains(legend, not) {
			t.Errorf("%d releases: the legend does not say %q:\n%s", n, want, legend)
		}
	}
}
