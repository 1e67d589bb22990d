//go:build unix

package program

import "syscall"

// sysProcAttr puts the program in a process group of its own, so that it
// and everything it spawns can be killed together.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group led by pid (errors, e.g. an
// empty group, are ignored).
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
