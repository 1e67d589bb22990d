package program

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) used so far by this process
// and by the process pid, so that benchmarks can report the CPU cost of a
// trial on both sides of the pipe: unlike wall time, it hardly moves when
// other work competes for the cores. Linux only (ok = false elsewhere);
// /proc counts in clock ticks of 1/100 s, the USER_HZ of Linux on the
// architectures Go supports.
func cpuTime(pid int) (d time.Duration, ok bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	d = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// Fields after the command: state(0) ppid(1) … utime(11) stime(12).
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return d + time.Duration(ut+st)*10*time.Millisecond, true
}

// lastStarted is the pid of the most recently started program process.
func lastStarted() int {
	started.Lock()
	defer started.Unlock()
	if len(started.pids) == 0 {
		return 0
	}
	return started.pids[len(started.pids)-1]
}
