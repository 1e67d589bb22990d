package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrUnsafeDir: a directory that would hold saved work could be
// redirected or changed by someone else (a symbolic link, another owner,
// writable by others). Every *UnsafeDirError matches it.
var ErrUnsafeDir = errors.New("unsafe directory")

// UnsafeDirError says why the directory Path may not hold saved work.
type UnsafeDirError struct {
	Path   string
	Reason string
}

func (e *UnsafeDirError) Error() string { return e.Path + " " + e.Reason }

// Is makes an *UnsafeDirError match ErrUnsafeDir.
func (e *UnsafeDirError) Is(target error) bool { return target == ErrUnsafeDir }

// PrivateDir returns the directory base/elems[0]/elems[1]/…, creating each
// missing element private (mode 0700) when create is set, and checking
// every element, created now or found there, as a directory that holds
// the user's saved work must be: a directory itself, not a symbolic link
// (which could send what is written there anywhere else), owned by this
// user, and writable by nobody else (so that nobody else can put a link
// or a file of theirs inside). base is the user's own choice of location
// (such as the cache directory), so it may be reached through a link; it
// must be owned by this user or by root and writable by nobody else,
// unless its sticky bit is set (as on /tmp), which keeps others from
// renaming or removing what this user puts in it. These checks make every
// later use of the returned path safe: nobody else can change any
// element of it.
//
// With create a missing base is created too (0700, with its parents).
// Without create a missing element is an error that matches
// fs.ErrNotExist; an element that fails a check is an *UnsafeDirError.
func PrivateDir(base string, create bool, elems ...string) (string, error) {
	if create {
		if err := os.MkdirAll(base, 0o700); err != nil {
			return "", err
		}
	}
	st, err := os.Stat(base)
	if err != nil {
		return "", err
	}
	if reason := unsafeBase(st); reason != "" {
		return "", &UnsafeDirError{Path: base, Reason: reason}
	}
	dir := base
	for _, e := range elems {
		dir = filepath.Join(dir, e)
		if create {
			if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
		}
		st, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		if reason := unsafeElement(st); reason != "" {
			return "", &UnsafeDirError{Path: dir, Reason: reason}
		}
	}
	return dir, nil
}

// unsafeBase says why the base of a private directory is unsafe ("" when
// it is safe).
func unsafeBase(st fs.FileInfo) string {
	if !st.IsDir() {
		return "is not a directory"
	}
	if uid, ok := owner(st); ok && uid != os.Geteuid() && uid != 0 {
		return fmt.Sprintf("is owned by another user (uid %d)", uid)
	}
	if st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0 {
		return fmt.Sprintf("is writable by other users (mode %04o) and not sticky", st.Mode().Perm())
	}
	return ""
}

// unsafeElement says why an element of a private directory, as lstat(2)
// describes it, is unsafe ("" when it is safe).
func unsafeElement(st fs.FileInfo) string {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return "is a symbolic link"
	case !st.IsDir():
		return "is not a directory"
	}
	if uid, ok := owner(st); ok && uid != os.Geteuid() {
		return fmt.Sprintf("is owned by another user (uid %d)", uid)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("is writable by other users (mode %04o)", st.Mode().Perm())
	}
	return ""
}

// owner returns the user ID owning the file st describes.
func owner(st fs.FileInfo) (int, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid), true
	}
	return 0, false
}
