package samples

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/cli"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// f8 encodes float64 values little-endian.
func f8(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// A well-formed file reads back exactly, in versions 1.0 and 2.0, float64
// and float32 (whose values are exact in both widths), 2-D and 3-D.
func TestReadNPY(t *testing.T) {
	vals := []float64{0.5, -1.25, 3, 1e-3, 7, -0}
	var f4 []byte
	for _, x := range vals {
		f4 = binary.LittleEndian.AppendUint32(f4, math.Float32bits(float32(x)))
	}
	for _, c := range []struct {
		major byte
		descr string
		shape string
		data  []byte
		want  []float64
	}{
		{1, "<f8", "(3, 2)", f8(vals...), vals},
		{2, "<f8", "(2, 3, 1)", f8(vals...), vals},
		{1, "<f4", "(1, 6)", f4, []float64{0.5, -1.25, 3, float64(float32(1e-3)), 7, 0}},
	} {
		hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", c.descr, c.shape)
		in := testutil.NPYBytes(c.major, hdr, -1, c.data)
		var out File
		if err := readNPY(context.Background(), bytes.NewReader(in), int64(len(in)), &out); err != nil {
			t.Fatalf("%s %s: %v", c.descr, c.shape, err)
		}
		var got []float64
		for _, r := range out.Rows {
			got = append(got, r...)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s %s: read %v, want %v", c.descr, c.shape, got, c.want)
		}
		if (out.Shape3 != nil) != strings.Contains(c.shape, ", 1)") {
			t.Errorf("%s %s: shape3 %v", c.descr, c.shape, out.Shape3)
		}
	}
}

// The hostile .npy corpus: crafted header lengths (which panicked inside
// the former reader, or spent 30 s allocating 4 GiB), data blocks shorter
// or longer than the shape (a truncated block was accepted with invented
// values), and malformed headers. Each is refused with one line that says
// what is wrong, having allocated next to nothing (the file is tiny;
// every length is checked against its size first).
func TestReadNPYHostile(t *testing.T) {
	good := "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 2), }"
	data := f8(1, 2, 3, 4, 5, 6, 7, 8)
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"header length 65535 in a small file", testutil.NPYBytes(1, good, 0xffff, data), "the header claims 65535 bytes, more than the limit of 10000"},
		{"header length beyond the file", testutil.NPYBytes(1, good, 5000, data), "the header claims 5000 bytes, the file has only 182"},
		{"header length 4 GiB", testutil.NPYBytes(2, good, 0xffffffff, data), "the header claims 4294967295 bytes, more than the limit"},
		{"header length 0", testutil.NPYBytes(1, good, 0, data), "must be a Python dict"},
		{"13 bytes missing", testutil.NPYBytes(1, good, -1, data[:len(data)-13]), "the data block is truncated: shape [4 2] of 8-byte values needs 64 bytes, the file has 51"},
		{"one byte too many", testutil.NPYBytes(1, good, -1, append(data, 0)), "the data block is longer than its shape: shape [4 2] of 8-byte values needs 64 bytes, the file has 65"},
		{"a shape of 2^31 values in 64 bytes", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (65536, 32768), }", -1, data), "needs 17179869184 bytes, the file has 64"},
		{"a shape beyond the values limit", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", -1, data), "the array at most 2147483648 values"},
		{"a negative size", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-4, 2), }", -1, data), "shape must hold non-negative integers"},
		{"a size that overflows int", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 2), }", -1, data), "shape must hold non-negative integers"},
		{"a zero size", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2), }", -1, nil), "every size must be ≥ 1"},
		{"big-endian", testutil.NPYBytes(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (4, 2), }", -1, data), `got ">f8"`},
		{"Fortran order", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (4, 2), }", -1, data), "Fortran order"},
		{"1-D", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (8,), }", -1, data), "must be 2-D"},
		{"no shape", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, }", -1, data), "no shape"},
		{"an unknown key", testutil.NPYBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 2), 'x': 1}", -1, data), `unknown key "x"`},
		{"an unterminated string", testutil.NPYBytes(1, "{'descr': '<f8", -1, data), "unterminated string"},
		{"format version 9", append([]byte("\x93NUMPY\x09\x00"), make([]byte, 100)...), "format version 9.0"},
		{"a truncated preamble", []byte("\x93NUMPY\x01\x00\x05"), "the preamble is truncated"},
		{"no magic", []byte("not numpy"), "not a NumPy file"},
	}
	for _, c := range cases {
		var err error
		alloc := testutil.Allocated(func() {
			err = readNPY(context.Background(), bytes.NewReader(c.in), int64(len(c.in)), &File{})
		})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
		if alloc > 1<<20 {
			t.Errorf("%s: allocated %d bytes to refuse a %d-byte file", c.name, alloc, len(c.in))
		}
	}
	// As the command reads them: a usage error (exit 2), one line naming
	// the file.
	dir := t.TempDir()
	good2 := filepath.Join(dir, "good.npy")
	os.WriteFile(good2, testutil.NPYBytes(1, good, -1, data), 0o644)
	for _, c := range cases[:5] {
		p := filepath.Join(dir, "bad.npy")
		os.WriteFile(p, c.in, 0o644)
		_, err := ReadFiles(context.Background(), [2]string{good2, p})
		var u cli.UsageError
		if !errors.As(err, &u) || strings.Contains(u.Msg, "\n") || !strings.Contains(u.Msg, p+": ") || !strings.Contains(u.Msg, c.want) {
			t.Errorf("ReadFiles %s: %v, want a usage error naming the file", c.name, err)
		}
	}
}

// FuzzReadNPY feeds arbitrary bytes to the .npy reader: it never panics,
// and what it accepts is a 2-D or 3-D array whose rows are equally wide
// and together exactly as many values as the data block holds after the
// header.
func FuzzReadNPY(f *testing.F) {
	hdr := "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }"
	f.Add(testutil.NPYBytes(1, hdr, -1, f8(1, 2, 3, 4)))
	f.Add(testutil.NPYBytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 1), }", -1, make([]byte, 8)))
	f.Add(testutil.NPYBytes(1, hdr, 0xffff, f8(1, 2, 3, 4)))
	f.Add(testutil.NPYBytes(1, hdr, -1, f8(1, 2, 3)))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out File
		if err := readNPY(context.Background(), bytes.NewReader(in), int64(len(in)), &out); err != nil {
			return
		}
		if len(out.Rows) == 0 {
			t.Fatal("accepted an array without runs")
		}
		n := 0
		for _, r := range out.Rows {
			if len(r) != len(out.Rows[0]) || len(r) == 0 {
				t.Fatalf("rows of %d and %d values", len(r), len(out.Rows[0]))
			}
			n += len(r)
		}
		// The header ends at a newline; what follows is the data block.
		h, err := readNPYHeader(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			t.Fatalf("accepted a file whose header the header reader refuses: %v", err)
		}
		item := 8
		if h.descr == "<f4" {
			item = 4
		}
		if int64(n*item) != int64(len(in))-h.data {
			t.Fatalf("%d values of %d bytes from a data block of %d bytes", n, item, int64(len(in))-h.data)
		}
	})
}
