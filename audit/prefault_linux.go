//go:build linux && (amd64 || arm64)

package audit

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the
// syscall package does not name.
const madvPopulateWrite = 23

// prefault prepares a large slice not yet written, which the caller will
// fill in full: it asks the kernel to map every page of it now, ready for
// writing (MADV_POPULATE_WRITE), in one system call instead of one page
// fault per page on first touch. On a virtual machine a fault can cost
// tens of µs: the feature store of 10⁶ trials of testdata/sgld-interim.yaml
// (80 MB) took 0.16–0.28 s of CPU to fault in page by page, and takes
// about 0.02 s mapped this way. It no longer asks for transparent huge
// pages (MADV_HUGEPAGE): a 2 MiB page sometimes has to be assembled or
// taken from memory the host has not backed yet, and the 56 MB store of
// testdata/fig1-exact.yaml then took from 8 ms to 0.13 s to map, against a
// steady 16 ms in 4 KiB pages. It is advice only: under a kernel that
// refuses MADV_POPULATE_WRITE (before 5.14), or on an error, the pages
// fault in as before.
func prefault(s []float32) {
	const page = 4096
	n := uintptr(len(s)) * unsafe.Sizeof(float32(0))
	if n < 2<<20 {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(s))
	p := uintptr(base)
	// madvise wants a page-aligned start: populate from the first page
	// boundary inside the slice (the page before it is already mapped,
	// shared with whatever precedes the slice).
	start := (p + page - 1) &^ (page - 1)
	if end := p + n; end > start {
		_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, start-p)), end-start), madvPopulateWrite)
	}
}
