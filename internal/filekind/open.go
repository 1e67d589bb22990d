package filekind

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is OpenRegular's refusal of a path that is not a
// regular file: a FIFO, a device, a directory, a socket.
type NotRegularError struct {
	// Path is the path as given.
	Path string
	// Kind is what the path is, in the words of Of.
	Kind string
}

// Error reads "cannot read PATH: it is a FIFO, not a regular file".
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("cannot read %s: it is %s, not a regular file", e.Path, e.Kind)
}

// OpenRegular opens path for reading if it is a regular file, and returns
// the file with its size. The open does not block (O_NONBLOCK): a FIFO
// without a writer, which a plain open would wait on forever, is refused
// at once, as are devices, directories and sockets. The type is read from
// the opened file, so a path swapped for a FIFO after a check is still
// refused. Other failures read "cannot read PATH: REASON" (the reason
// without the path repeated).
func OpenRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO): say what it is.
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, 0, &NotRegularError{Path: path, Kind: Of(st.Mode())}
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, 0, fmt.Errorf("cannot read %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, &NotRegularError{Path: path, Kind: Of(st.Mode())}
	}
	return f, st.Size(), nil
}

// ReadRegular reads the regular file at path, refusing (as OpenRegular
// does) anything else, and a file of more than limit bytes: by its size
// before reading, or once it has grown past the limit while being read,
// after reading at most limit + 1 bytes. The buffer is sized from the
// file's length, so reading costs the file's size in memory, no more.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, size, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s has %d bytes, more than the limit of %d", path, size, limit)
	}
	lr := io.LimitReader(f, limit+1)
	// One byte more than the size tells whether the file ended there.
	buf := make([]byte, size+1)
	n, err := io.ReadFull(lr, buf)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return buf[:n], nil
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	// The file grew while being read.
	rest, err := io.ReadAll(lr)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if buf = append(buf, rest...); int64(len(buf)) > limit {
		return nil, fmt.Errorf("%s grew beyond the limit of %d bytes while being read", path, limit)
	}
	return buf, nil
}
