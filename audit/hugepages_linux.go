//go:build linux && (amd64 || arm64)

package audit

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks the kernel to back the 2 MiB-aligned interior of a
// large slice not yet written with transparent huge pages (madvise
// MADV_HUGEPAGE), so that filling it costs one page fault per 2 MiB rather
// than one per 4 KiB. On a virtual machine a fault costs tens of µs: the
// feature store of 10⁶ trials (tens of MB) otherwise spends a few tenths
// of a second of CPU in them. It is advice only: under a kernel without
// transparent huge pages, or on an error, nothing changes.
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
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, lo-p)), hi-lo), syscall.MADV_HUGEPAGE)
}
