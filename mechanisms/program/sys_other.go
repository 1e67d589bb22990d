//go:build !unix

package program

import (
	"os"
	"syscall"
)

// sysProcAttr: process groups are a Unix notion; elsewhere only the
// program itself is killed.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the process pid (errors are ignored).
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
