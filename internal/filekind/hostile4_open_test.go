package filekind

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OpenRegular refuses every path that is not a regular file, naming what
// it is, and never blocks: a FIFO without a writer, which a plain open
// waits on forever, is refused at once.
func TestOpenRegularRefusesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skip("no unix sockets here:", err)
	}
	defer l.Close()
	for path, kind := range map[string]string{fifo: "a FIFO", sock: "a socket", dir: "a directory", "/dev/null": "a character device"} {
		done := make(chan error, 1)
		go func() {
			f, _, err := OpenRegular(path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			var nr *NotRegularError
			want := "cannot read " + path + ": it is " + kind + ", not a regular file"
			if !errors.As(err, &nr) || nr.Kind != kind || err.Error() != want {
				t.Errorf("%s: %v, want %q", path, err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: OpenRegular still blocked after 20 s", path)
		}
	}
	if _, _, err := OpenRegular(filepath.Join(dir, "missing")); err == nil || err.Error() != "cannot read "+filepath.Join(dir, "missing")+": no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
}

// ReadRegular reads a regular file of at most limit bytes, and refuses a
// larger one by its size, before reading it.
func TestReadRegularLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	if b, err := ReadRegular(p, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the limit: %q %v", b, err)
	}
	if _, err := ReadRegular(p, 9); err == nil || !strings.Contains(err.Error(), "has 10 bytes, more than the limit of 9") {
		t.Errorf("past the limit: %v", err)
	}
	if _, err := ReadRegular(dir, 9); err == nil || !strings.Contains(err.Error(), "it is a directory") {
		t.Errorf("a directory: %v", err)
	}
}
