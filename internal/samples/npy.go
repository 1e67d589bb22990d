package samples

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
)

// maxNPYHeaderBytes bounds the header of a .npy file; NumPy's own reader
// refuses longer ones by default (numpy.lib.format, max_header_size).
const maxNPYHeaderBytes = 10000

// npyHeader is what the header of a .npy file says about its array.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
	data    int64 // offset of the data block
}

// readNPYHeader reads the preamble and the header of a .npy file of size
// bytes (NumPy format versions 1.0, 2.0 and 3.0). Every length is checked
// against the file's size and maxNPYHeaderBytes before it is used.
func readNPYHeader(r io.Reader, size int64) (npyHeader, error) {
	var h npyHeader
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return h, errors.New("not a NumPy file: no \\x93NUMPY magic string")
	}
	var hlen int64
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, errors.New("not a NumPy file: the preamble is truncated")
		}
		hlen, h.data = int64(binary.LittleEndian.Uint16(b[:])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, errors.New("not a NumPy file: the preamble is truncated")
		}
		hlen, h.data = int64(binary.LittleEndian.Uint32(b[:])), 12
	default:
		return h, fmt.Errorf("not a NumPy file: format version %d.%d (this reader knows 1.0, 2.0 and 3.0)", pre[6], pre[7])
	}
	if hlen > maxNPYHeaderBytes {
		return h, fmt.Errorf("the header claims %d bytes, more than the limit of %d", hlen, maxNPYHeaderBytes)
	}
	if h.data+hlen > size {
		return h, fmt.Errorf("the header claims %d bytes, the file has only %d after the preamble", hlen, max(0, size-h.data))
	}
	h.data += hlen
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return h, fmt.Errorf("the header is truncated: %v", err)
	}
	if err := h.parse(string(buf)); err != nil {
		return h, fmt.Errorf("header %s: %v", clip.Quote(strings.TrimRight(string(buf), " \n")), err)
	}
	return h, nil
}

// parse reads the header's Python dict literal, e.g.
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
func (h *npyHeader) parse(s string) error {
	p := &pyLit{s: strings.TrimRight(s, " \n")}
	if !p.eat('{') {
		return errors.New("must be a Python dict")
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return err
		}
		if seen[key] {
			return fmt.Errorf("key %s appears twice", clip.Quote(key))
		}
		seen[key] = true
		if !p.eat(':') {
			return fmt.Errorf("no ':' after key %s", clip.Quote(key))
		}
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return err
			}
		case "fortran_order":
			if h.fortran, err = p.boolean(); err != nil {
				return err
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown key %s (a .npy header has descr, fortran_order and shape)", clip.Quote(key))
		}
		if !p.eat(',') && !p.peek('}') {
			return errors.New("entries must be separated by ','")
		}
	}
	if p.skip(); p.i != len(p.s) {
		return errors.New("text after the dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return fmt.Errorf("no %s", k)
		}
	}
	return nil
}

// pyLit scans the few Python literals a .npy header holds.
type pyLit struct {
	s string
	i int
}

func (p *pyLit) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *pyLit) peek(c byte) bool { p.skip(); return p.i < len(p.s) && p.s[p.i] == c }

func (p *pyLit) eat(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *pyLit) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("expected a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyLit) boolean() (bool, error) {
	p.skip()
	for _, w := range []string{"True", "False"} {
		if strings.HasPrefix(p.s[p.i:], w) {
			p.i += len(w)
			return w == "True", nil
		}
	}
	return false, errors.New("fortran_order must be True or False")
}

// tuple reads a tuple of non-negative integers: (), (3,), (3, 4).
func (p *pyLit) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, errors.New("shape must be a tuple")
	}
	dims := []int{}
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil || n < 0 {
			return nil, errors.New("shape must hold non-negative integers")
		}
		dims = append(dims, n)
		p.i = j
		if !p.eat(',') && !p.peek(')') {
			return nil, errors.New("shape entries must be separated by ','")
		}
		if len(dims) > 32 {
			return nil, errors.New("shape has more than 32 dimensions")
		}
	}
	return dims, nil
}

// readNPY reads a 2-D or 3-D array of float64 or float32 (little-endian,
// C order) from a .npy file of size bytes. The shape is checked against
// the limits and against the bytes the file holds after its header — a
// truncated or over-long data block is refused — before anything is
// allocated for the data. ctx interrupts the read.
func readNPY(ctx context.Context, r io.Reader, size int64, out *File) error {
	h, err := readNPYHeader(r, size)
	if err != nil {
		return err
	}
	total, item, err := h.layout(size)
	if err != nil {
		return err
	}
	flat := make([]float64, total)
	if err := readNPYData(ctx, r, flat, item); err != nil {
		return err
	}
	runs := h.shape[0]
	w := int(total) / runs
	out.Rows = make([][]float64, runs)
	for i := range out.Rows {
		out.Rows[i] = flat[i*w : (i+1)*w : (i+1)*w]
	}
	if len(h.shape) == 3 {
		out.Shape3 = h.shape
	}
	return nil
}

// layout checks the header's array against the limits and against the
// size of the file it heads, and returns its number of values and the
// bytes of each.
func (h *npyHeader) layout(size int64) (total, item int64, err error) {
	if h.fortran {
		return 0, 0, fmt.Errorf("the array is in Fortran order; save it with numpy.ascontiguousarray")
	}
	if len(h.shape) != 2 && len(h.shape) != 3 {
		return 0, 0, fmt.Errorf("the array must be 2-D (runs, values) or 3-D (runs, points, dim), got shape %v", h.shape)
	}
	total, item = int64(1), int64(8)
	for _, n := range h.shape {
		if n < 1 || total > maxSamplesValues/int64(n) {
			return 0, 0, fmt.Errorf("shape %v: every size must be ≥ 1 and the array at most %d values", h.shape, int64(maxSamplesValues))
		}
		total *= int64(n)
	}
	if h.shape[0] > audit.MaxTrials {
		return 0, 0, fmt.Errorf("shape %v: more than %d runs", h.shape, audit.MaxTrials)
	}
	switch h.descr {
	case "<f8":
	case "<f4":
		item = 4
	default:
		return 0, 0, fmt.Errorf("the array must hold float64 or float32 (little-endian, '<f8' or '<f4'), got %s", clip.Quote(h.descr))
	}
	if have := size - h.data; total*item != have {
		what := "truncated"
		if have > total*item {
			what = "longer than its shape"
		}
		return 0, 0, fmt.Errorf("the data block is %s: shape %v of %d-byte values needs %d bytes, the file has %d after its header", what, h.shape, item, total*item, have)
	}
	return total, item, nil
}

// readNPYData fills flat with the data block's values of item bytes each
// (8: float64, 4: float32), and refuses a block that goes on after them.
func readNPYData(ctx context.Context, r io.Reader, flat []float64, item int64) error {
	buf := make([]byte, 1<<16)
	for k := 0; k < len(flat); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(buf), (len(flat)-k)*int(item))
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return fmt.Errorf("the data block is truncated (the file changed while it was read?): %v", err)
		}
		for b := buf[:n]; len(b) > 0; k++ {
			if item == 8 {
				flat[k] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			} else {
				flat[k] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
			}
			b = b[item:]
		}
	}
	if n, _ := io.ReadFull(r, buf[:1]); n != 0 {
		return fmt.Errorf("the file grew while it was read")
	}
	return nil
}
