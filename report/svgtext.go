package report

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// SVG plots carry their text as outlines: each glyph is a path in the
// document, drawn from the font the plot was laid out with, so that the
// picture is the same on any viewer, with or without that font — a viewer
// that substituted another font would draw wider or narrower text than
// the layout measured, and clip titles, legends and tick labels. Every
// run of text is a group <g class="text"> whose aria-label holds the text
// and whose data-bbox holds the extent of its ink in the SVG's
// coordinates (x0 y0 x1 y1, y downwards), for tests and tools.
//
// Units and extents: docs/derivations/plot-text.md.
//
// The init function makes this canvas the one gonum/plot uses for the
// "svg" format everywhere in the program (plot.Plot.WriterTo,
// draw.NewFormattedCanvas), so every plot of the binary gets it.
func init() {
	draw.RegisterFormat("svg", func(w, h vg.Length) vg.CanvasWriterTo { return NewSVGCanvas(w, h) })
}

// SVGCanvas is a gonum/plot canvas writing SVG with text as outlines.
type SVGCanvas struct {
	*vgsvg.Canvas
	w, h vg.Length
	// stack holds the current transform (canvas points, y up) and the
	// ones saved by Push.
	stack []affine
	runs  []textRun
	// fonts maps a font to the digest of its name.
	fonts map[*sfnt.Font]int
	// glyphs maps a glyph to its id in <defs>; defs holds the definitions
	// in order of first use.
	glyphs map[glyphKey]string
	defs   []string
	buf    sfnt.Buffer
}

// NewSVGCanvas returns a canvas of the given size.
func NewSVGCanvas(w, h vg.Length) *SVGCanvas {
	return &SVGCanvas{Canvas: vgsvg.New(w, h), w: w, h: h, stack: []affine{identity},
		fonts: map[*sfnt.Font]int{}, glyphs: map[glyphKey]string{}}
}

// TextBox is the ink extent of one run of text, in SVG user units (points)
// with y downwards, as an SVG viewer places it.
type TextBox struct {
	Text           string
	X0, Y0, X1, Y1 float64
}

// TextBoxes returns the extent of every run of text drawn so far.
func (c *SVGCanvas) TextBoxes() []TextBox {
	out := make([]TextBox, len(c.runs))
	for i, r := range c.runs {
		out[i] = r.box
	}
	return out
}

// affine is x' = a·x + c·y + e, y' = b·x + d·y + f.
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

// then returns the transform that applies m first, then t.
func (t affine) then(m affine) affine {
	return affine{
		a: t.a*m.a + t.b*m.c, b: t.a*m.b + t.b*m.d,
		c: t.c*m.a + t.d*m.c, d: t.c*m.b + t.d*m.d,
		e: t.e*m.a + t.f*m.c + m.e, f: t.e*m.b + t.f*m.d + m.f,
	}
}

func (t affine) apply(x, y float64) (float64, float64) {
	return t.a*x + t.c*y + t.e, t.b*x + t.d*y + t.f
}

func (c *SVGCanvas) top() affine { return c.stack[len(c.stack)-1] }

// Rotate implements vg.Canvas.
func (c *SVGCanvas) Rotate(rad float64) {
	s, co := math.Sincos(rad)
	c.stack[len(c.stack)-1] = affine{a: co, b: s, c: -s, d: co}.then(c.top())
	c.Canvas.Rotate(rad)
}

// Translate implements vg.Canvas.
func (c *SVGCanvas) Translate(pt vg.Point) {
	c.stack[len(c.stack)-1] = affine{a: 1, d: 1, e: pt.X.Points(), f: pt.Y.Points()}.then(c.top())
	c.Canvas.Translate(pt)
}

// Scale implements vg.Canvas.
func (c *SVGCanvas) Scale(x, y float64) {
	c.stack[len(c.stack)-1] = affine{a: x, d: y}.then(c.top())
	c.Canvas.Scale(x, y)
}

// Push implements vg.Canvas.
func (c *SVGCanvas) Push() {
	c.stack = append(c.stack, c.top())
	c.Canvas.Push()
}

// Pop implements vg.Canvas.
func (c *SVGCanvas) Pop() {
	if len(c.stack) > 1 {
		c.stack = c.stack[:len(c.stack)-1]
	}
	c.Canvas.Pop()
}

// glyphKey identifies a glyph of a font.
type glyphKey struct {
	font  int
	glyph sfnt.GlyphIndex
}

// textRun is one FillString call.
type textRun struct {
	uses  []glyphUse
	scale float64
	pt    vg.Point
	text  string
	box   TextBox
}

// glyphUse places a glyph at a pen position (font units).
type glyphUse struct {
	id string
	x  int
}

// FillString implements vg.Canvas: the text is laid out glyph by glyph
// with the advances and kerning gonum/plot measured it with, and drawn in
// WriteTo; here the underlying canvas only writes a placeholder <text>
// element, so that the outlines land inside the right groups.
func (c *SVGCanvas) FillString(f font.Face, pt vg.Point, text string) {
	if f.Font.Size == 0 || text == "" {
		return
	}
	// Glyph ids carry a digest of the font's name, so that several plots
	// inlined in one HTML page never define one id with two shapes.
	fi, ok := c.fonts[f.Face]
	if !ok {
		h := fnv.New32a()
		h.Write([]byte(f.Font.Name()))
		fi = int(h.Sum32())
		c.fonts[f.Face] = fi
	}
	units := f.Face.UnitsPerEm()
	ppem := fixed.Int26_6(units) // 26.6 values are then font units
	r := textRun{scale: f.Font.Size.Points() / float64(units), pt: pt, text: text}
	pen := 0
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	var prev sfnt.GlyphIndex
	for i, ch := range text {
		g, err := f.Face.GlyphIndex(&c.buf, ch)
		if err != nil {
			g = 0
		}
		if i > 0 {
			if k, err := f.Face.Kern(&c.buf, prev, g, ppem, 0); err == nil {
				pen += int(k)
			}
		}
		id, gx0, gy0, gx1, gy1 := c.glyph(fi, f.Face, g, ppem)
		if id != "" {
			r.uses = append(r.uses, glyphUse{id: id, x: pen})
			x0, x1 = math.Min(x0, float64(pen)+gx0), math.Max(x1, float64(pen)+gx1)
			y0, y1 = math.Min(y0, gy0), math.Max(y1, gy1)
		}
		if adv, err := f.Face.GlyphAdvance(&c.buf, g, ppem, 0); err == nil {
			pen += int(adv)
		}
		prev = g
	}
	if len(r.uses) > 0 {
		// The ink's corners, through the current transform, in SVG
		// coordinates (y down from the top edge).
		t := c.top()
		bx0, by0, bx1, by1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, p := range [][2]float64{{x0, y0}, {x0, y1}, {x1, y0}, {x1, y1}} {
			x, y := t.apply(pt.X.Points()+p[0]*r.scale, pt.Y.Points()+p[1]*r.scale)
			y = c.h.Points() - y
			bx0, bx1, by0, by1 = math.Min(bx0, x), math.Max(bx1, x), math.Min(by0, y), math.Max(by1, y)
		}
		r.box = TextBox{Text: text, X0: bx0, Y0: by0, X1: bx1, Y1: by1}
	} else {
		r.box = TextBox{Text: text, X0: math.NaN(), Y0: math.NaN(), X1: math.NaN(), Y1: math.NaN()}
	}
	c.Canvas.FillString(f, pt, fmt.Sprintf("@@text%d@@", len(c.runs)))
	c.runs = append(c.runs, r)
}

// glyph returns the <defs> id of a glyph (defining it on first use) and
// the bounds of its outline's control points in font units, y up; "" for
// a glyph with no outline (a space).
func (c *SVGCanvas) glyph(fi int, f *sfnt.Font, g sfnt.GlyphIndex, ppem fixed.Int26_6) (string, float64, float64, float64, float64) {
	segs, err := f.LoadGlyph(&c.buf, g, ppem, nil)
	if err != nil || len(segs) == 0 {
		return "", 0, 0, 0, 0
	}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	var d strings.Builder
	n := map[sfnt.SegmentOp]int{sfnt.SegmentOpMoveTo: 1, sfnt.SegmentOpLineTo: 1, sfnt.SegmentOpQuadTo: 2, sfnt.SegmentOpCubeTo: 3}
	cmd := map[sfnt.SegmentOp]string{sfnt.SegmentOpMoveTo: "M", sfnt.SegmentOpLineTo: "L", sfnt.SegmentOpQuadTo: "Q", sfnt.SegmentOpCubeTo: "C"}
	for k, s := range segs {
		if s.Op == sfnt.SegmentOpMoveTo && k > 0 {
			d.WriteString("Z")
		}
		d.WriteString(cmd[s.Op])
		for j := 0; j < n[s.Op]; j++ {
			// sfnt's y grows downwards; the outline is stored y up.
			x, y := float64(s.Args[j].X), -float64(s.Args[j].Y)
			x0, x1, y0, y1 = math.Min(x0, x), math.Max(x1, x), math.Min(y0, y), math.Max(y1, y)
			if j > 0 {
				d.WriteByte(' ')
			}
			d.WriteString(num(x) + " " + num(y))
		}
	}
	d.WriteString("Z")
	key := glyphKey{fi, g}
	id, ok := c.glyphs[key]
	if !ok {
		id = fmt.Sprintf("g%08x-%d", uint32(fi), g)
		c.glyphs[key] = id
		c.defs = append(c.defs, fmt.Sprintf(`<path id="%s" d="%s"/>`, id, d.String()))
	}
	return id, x0, y0, x1, y1
}

// num writes a coordinate compactly.
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

var rePlaceholder = regexp.MustCompile(`<text x="[^"]*" y="[^"]*" transform="scale\(1, -1\)"\s*style="([^"]*)">@@text(\d+)@@</text>`)

var reFill = regexp.MustCompile(`(?:^|;)fill:([^;]*)`)

// WriteTo implements io.WriterTo: the SVG of the underlying canvas, with
// the glyphs defined once in <defs> and every placeholder replaced by its
// run of glyphs.
func (c *SVGCanvas) WriteTo(w io.Writer) (int64, error) {
	var raw bytes.Buffer
	if _, err := c.Canvas.WriteTo(&raw); err != nil {
		return 0, err
	}
	out := rePlaceholder.ReplaceAllFunc(raw.Bytes(), func(m []byte) []byte {
		sub := rePlaceholder.FindSubmatch(m)
		i, _ := strconv.Atoi(string(sub[2]))
		r := c.runs[i]
		fill := "#000000"
		if f := reFill.FindSubmatch(sub[1]); f != nil {
			fill = string(f[1])
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<g class="text" aria-label="%s" data-bbox="%s %s %s %s" fill="%s" transform="translate(%s %s) scale(%s)">`,
			html.EscapeString(r.text), num2(r.box.X0), num2(r.box.Y0), num2(r.box.X1), num2(r.box.Y1), fill,
			num2(r.pt.X.Points()), num2(r.pt.Y.Points()), strconv.FormatFloat(r.scale, 'g', 6, 64))
		for _, u := range r.uses {
			fmt.Fprintf(&b, `<use xlink:href="#%s" x="%d"/>`, u.id, u.x)
		}
		b.WriteString("</g>")
		return []byte(b.String())
	})
	if len(c.defs) > 0 {
		// The definitions go right after the opening <svg …> tag.
		if i := bytes.Index(out, []byte("<svg")); i >= 0 {
			if j := bytes.IndexByte(out[i:], '>'); j >= 0 {
				at := i + j + 1
				defs := "\n<defs>\n" + strings.Join(c.defs, "\n") + "\n</defs>"
				out = append(out[:at], append([]byte(defs), out[at:]...)...)
			}
		}
	}
	n, err := w.Write(out)
	return int64(n), err
}

// num2 writes a coordinate to a hundredth of a point.
func num2(x float64) string {
	if math.IsNaN(x) {
		return "NaN"
	}
	return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64)
}
