package filekind

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Real files of each kind, as os.Lstat reports them.
func TestOfRealFiles(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "f")
	if err := os.WriteFile(reg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for path, want := range map[string]string{
		reg: "a regular file", dir: "a directory", link: "a symbolic link",
		fifo: "a FIFO", sock: "a socket", "/dev/null": "a character device",
	} {
		st, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(st.Mode()); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if got := Of(fs.ModeDevice); got != "a block device" {
		t.Errorf("block device: %q", got)
	}
	if got := Of(fs.ModeIrregular); got != "a special file" {
		t.Errorf("irregular: %q", got)
	}
}
