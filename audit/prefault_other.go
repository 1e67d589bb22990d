//go:build !linux || !(amd64 || arm64)

package audit

// prefault is a no-op where MADV_POPULATE_WRITE is not known
// (see the Linux version).
func prefault([]float32) {}
