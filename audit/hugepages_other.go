//go:build !linux || !(amd64 || arm64)

package audit

// adviseHugePages is a no-op where transparent huge pages are not known
// (see the Linux version).
func adviseHugePages([]float32) {}
