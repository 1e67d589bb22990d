//go:build linux && (amd64 || arm64)

package audit

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the
// syscall package does not name.
const madvPopulateWrite = 23

// adviseHugePages prepares a large slice not yet written, which the caller
// will fill in full: it asks the kernel to back its 2 MiB-aligned interior
// with transparent huge pages (MADV_HUGEPAGE), then to map every page of
// it now, ready for writing (MADV_POPULATE_WRITE), in one system call
// instead of one page fault per page on first touch. On a virtual machine
// a fault costs tens of µs: the feature store of 10⁶ trials of
// testdata/sgld-interim.yaml (80 MB) took 0.16–0.28 s of CPU to fault in
// page by page, and takes about 0.02 s mapped this way. It is advice
// only: under a kernel without either (an older one refuses
// MADV_POPULATE_WRITE), or on an error, the pages fault in as before.
func adviseHugePages(s []float32) {
	const huge = 2 << 20
	n := uintptr(len(s)) * unsafe.Sizeof(float32(0))
	if n < 2*huge {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(s))
	p := uintptr(base)
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + n) &^ (huge - 1)
	if hi > lo {
		_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, lo-p)), hi-lo), syscall.MADV_HUGEPAGE)
	}
	// madvise wants a page-aligned start: populate from the first page
	// boundary inside the slice (the page before it is already mapped,
	// shared with whatever precedes the slice).
	const page = 4096
	start := (p + page - 1) &^ (page - 1)
	if end := p + n; end > start {
		_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, start-p)), end-start), madvPopulateWrite)
	}
}
