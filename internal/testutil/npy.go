package testutil

import (
	"encoding/binary"
	"runtime"
	"strings"
)

// NPYBytes builds a .npy file: format version major (1 or 2), the header
// text padded as NumPy pads it (to a multiple of 64 bytes with the
// preamble, ending in a newline), the header length field (hlen < 0: the
// true length) and the data block.
func NPYBytes(major byte, header string, hlen int64, data []byte) []byte {
	pre := 10
	if major > 1 {
		pre = 12
	}
	header += strings.Repeat(" ", 63-(pre+len(header))%64) + "\n"
	if hlen < 0 {
		hlen = int64(len(header))
	}
	b := []byte("\x93NUMPY")
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(hlen))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(hlen))
	}
	return append(append(b, header...), data...)
}

// Allocated returns the bytes f allocated (runtime.MemStats.TotalAlloc),
// after a collection.
func Allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
