package program

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// stderrLineMax bounds the length of a stderr line kept for error messages.
const stderrLineMax = 1000

// reapWait bounds the wait, after a process is dead, for its stderr to
// reach end of file (it only lingers if the program handed its stderr to a
// process outside its process group).
const reapWait = time.Second

// proc is one running program. Three goroutines serve it: a stdout reader
// (lines), a stderr reader (stderrDone) and a reaper (exited).
type proc struct {
	id  int
	pid int
	hs  Handshake

	stdin     *os.File
	stdinOnce sync.Once

	// lines carries stdout lines (without their newline) and is closed
	// at end of file; readErr and partial are set before it is closed.
	lines   chan []byte
	readErr error  // errLineTooLong or a read error; nil at a clean EOF
	partial []byte // an unterminated last line (or the start of a too long one)
	// lineLimit bounds a stdout line, newline excluded: the pool's limit
	// until the handshake, then what an answer to it may take
	// (answerLineLimit). The reader reads it at every fragment.
	lineLimit atomic.Int64

	quit     chan struct{} // closed when the process is being discarded
	quitOnce sync.Once
	killed   atomic.Bool // the pool killed it (the fault is reported by whoever did)

	exited  chan struct{} // closed once the process is reaped and its group killed
	waitErr error         // cmd.Wait's error, valid once exited is closed

	stderrDone chan struct{} // closed at the end of stderr

	tailMu  sync.Mutex
	tail    [StderrTail]string
	tailLen int
	tailPos int
}

// stderrSink serialises the prefixed stderr lines of all processes into
// the caller's writer.
type stderrSink struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// line writes prefix + l + "\n" in one Write.
func (s *stderrSink) line(prefix string, l []byte) {
	if s.w == nil {
		return
	}
	s.mu.Lock()
	s.buf = append(append(append(s.buf[:0], prefix...), l...), '\n')
	_, _ = s.w.Write(s.buf)
	s.mu.Unlock()
}

// startProc starts the program as process number id in its own process
// group, with its three pipes, readers and reaper.
func startProc(c *Config, id int, sink *stderrSink, maxLine int) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	// The child holds its own copies of its ends.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	p := &proc{
		id:         id,
		pid:        cmd.Process.Pid,
		stdin:      inW,
		lines:      make(chan []byte),
		quit:       make(chan struct{}),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	if testHookStarted != nil {
		testHookStarted(p.pid)
	}
	p.lineLimit.Store(int64(maxLine))
	go p.readStdout(outR)
	go p.readStderr(errR, sink, "["+c.Name+" "+strconv.Itoa(id)+"] ")
	go func() {
		p.waitErr = cmd.Wait()
		// Whatever the program left behind in its group goes with it.
		killGroup(p.pid)
		close(p.exited)
	}()
	return p, nil
}

// testHookStarted, when set (by tests), is called with the pid of every
// process started.
var testHookStarted func(pid int)

// readStdout sends stdout lines to p.lines until end of file, an error, a
// line longer than p.lineLimit (refused as soon as it is read past the
// limit, in fragments of the reader's buffer, so that refusing a huge line
// costs the limit in memory, not the line), or p.quit.
func (p *proc) readStdout(r *os.File) {
	defer close(p.lines)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var line []byte
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if int64(len(line)+len(frag)) > p.lineLimit.Load()+1 {
				n := min(len(line), 200)
				head := append(line[:n:n], frag[:min(len(frag), 200)]...)
				p.partial = head[:min(len(head), 200)]
				p.readErr = errLineTooLong
				return
			}
			line = append(line, frag...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil {
			// End of file (or a read error) ends the stream; a last line
			// without its newline was cut short, not sent.
			if len(line) > 0 {
				p.partial = line
			}
			if err != io.EOF {
				p.readErr = err
			}
			return
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		select {
		case p.lines <- line:
		case <-p.quit:
			return
		}
	}
}

// readStderr passes stderr lines to the sink with the prefix and keeps the
// last StderrTail of them. Lines longer than the reader's buffer are passed
// on in pieces.
func (p *proc) readStderr(r *os.File, sink *stderrSink, prefix string) {
	defer close(p.stderrDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			l := bytes.TrimSuffix(bytes.TrimSuffix(frag, []byte("\n")), []byte("\r"))
			sink.line(prefix, l)
			p.addTail(l)
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// addTail keeps l (truncated) among the last StderrTail lines.
func (p *proc) addTail(l []byte) {
	s := string(l[:min(len(l), stderrLineMax)])
	p.tailMu.Lock()
	p.tail[p.tailPos] = s
	p.tailPos = (p.tailPos + 1) % StderrTail
	p.tailLen = min(p.tailLen+1, StderrTail)
	p.tailMu.Unlock()
}

// stderrTail returns the kept stderr lines, oldest first.
func (p *proc) stderrTail() []string {
	p.tailMu.Lock()
	defer p.tailMu.Unlock()
	out := make([]string, 0, p.tailLen)
	for i := 0; i < p.tailLen; i++ {
		out = append(out, p.tail[(p.tailPos-p.tailLen+i+StderrTail)%StderrTail])
	}
	return out
}

// closeStdin closes the program's stdin: the protocol's request to exit.
func (p *proc) closeStdin() { p.stdinOnce.Do(func() { p.stdin.Close() }) }

// isExited reports whether the process has been reaped.
func (p *proc) isExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill kills the process group (unless the process is already reaped, in
// which case the reaper has done it) and waits until the process is
// reaped and its stderr has ended (or reapWait has passed).
func (p *proc) kill() {
	p.quitOnce.Do(func() { close(p.quit) })
	p.closeStdin()
	if !p.isExited() {
		p.killed.Store(true)
		killGroup(p.pid)
	}
	<-p.exited
	p.waitStderr()
}

// waitStderr waits (at most reapWait) for the end of stderr, so that the
// tail holds the program's last words.
func (p *proc) waitStderr() {
	t := time.NewTimer(reapWait)
	defer t.Stop()
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
}

// retire closes the program's stdin, gives it grace to exit, then kills
// its group; it reports whether the process exited by itself.
func (p *proc) retire(grace time.Duration) (exitedAlone bool) {
	p.quitOnce.Do(func() { close(p.quit) })
	p.closeStdin()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
		exitedAlone = true
	case <-t.C:
	}
	p.kill()
	return exitedAlone
}

// exitStatus describes how the reaped process ended: "exit status 3",
// "signal: killed".
func (p *proc) exitStatus() string {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exit status 0"
}
