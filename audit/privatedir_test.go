package audit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PrivateDir creates missing elements 0700 and refuses, whether it made
// them or found them, a link, a file, a directory others can write into
// and one owned by another user; its base may be a link, and may be
// writable by others only when sticky.
func TestPrivateDir(t *testing.T) {
	base := t.TempDir()
	dir, err := PrivateDir(base, true, "a", "b")
	if err != nil || dir != filepath.Join(base, "a", "b") {
		t.Fatalf("PrivateDir: %q, %v", dir, err)
	}
	for _, p := range []string{filepath.Join(base, "a"), dir} {
		if st, err := os.Lstat(p); err != nil || st.Mode().Perm() != 0o700 || !st.IsDir() {
			t.Errorf("%s: %v, mode %v", p, err, st.Mode())
		}
	}
	if _, err := PrivateDir(base, false, "a", "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing element without create: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "a", "missing")); err == nil {
		t.Error("created without create")
	}

	elsewhere := t.TempDir()
	os.Symlink(elsewhere, filepath.Join(base, "a", "link"))
	os.WriteFile(filepath.Join(base, "a", "file"), nil, 0o600)
	os.Mkdir(filepath.Join(base, "a", "open"), 0o700)
	os.Chmod(filepath.Join(base, "a", "open"), 0o757)
	for _, c := range []struct{ elem, reason string }{
		{"link", "is a symbolic link"},
		{"file", "is not a directory"},
		{"open", "is writable by other users (mode 0757)"},
	} {
		for _, create := range []bool{true, false} {
			_, err := PrivateDir(base, create, "a", c.elem, "c")
			var u *UnsafeDirError
			if !errors.As(err, &u) || !errors.Is(err, ErrUnsafeDir) || u.Path != filepath.Join(base, "a", c.elem) || u.Reason != c.reason {
				t.Errorf("%s, create %v: %v", c.elem, create, err)
			}
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("something was created through the link: %v", entries)
	}

	// The base: through a link is fine; writable by others only if sticky.
	link := filepath.Join(t.TempDir(), "cache")
	os.Symlink(base, link)
	if _, err := PrivateDir(link, true, "a"); err != nil {
		t.Errorf("a base reached through a link: %v", err)
	}
	open := t.TempDir()
	os.Chmod(open, 0o777)
	if _, err := PrivateDir(open, true, "x"); err == nil || !strings.Contains(err.Error(), "writable by other users (mode 0777) and not sticky") {
		t.Errorf("a base everyone can write: %v", err)
	}
	os.Chmod(open, 0o777|fs.ModeSticky)
	if _, err := PrivateDir(open, true, "x"); err != nil {
		t.Errorf("a sticky base (as /tmp): %v", err)
	}

	// Another user's directory (root can make one).
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "a", "other")
		os.Mkdir(other, 0o700)
		os.Chown(other, 12345, 12345)
		if _, err := PrivateDir(base, true, "a", "other"); err == nil || !strings.Contains(err.Error(), "is owned by another user (uid 12345)") {
			t.Errorf("another user's directory: %v", err)
		}
	}
}
