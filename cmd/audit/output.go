package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// output is a destination named by a --json/--csv flag: "" (none), "-"
// (stdout) or a file path, written atomically.
type output string

// toStdout reports whether this output replaces the human table on stdout.
func (o output) toStdout() bool { return o == "-" }

// checkWritable fails early, before any work, if the file's directory does
// not exist, so that a long run does not end in a write error.
func (o output) checkWritable(flagName string) error {
	if o == "" || o == "-" {
		return nil
	}
	dir := filepath.Dir(string(o))
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return usagef("--%s: directory %q does not exist", flagName, dir)
	}
	return nil
}

// write sends the bytes produced by fill to the destination. Files are
// written to a temporary file in the same directory and renamed into place,
// so that a failure never leaves a partial file that looks complete.
func (o output) write(e *env, fill func(w io.Writer) error) error {
	switch o {
	case "":
		return nil
	case "-":
		return fill(e.stdout)
	}
	path := string(o)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file private (0600); a report is an ordinary file.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeJSON writes v as indented JSON.
func (o output) writeJSON(e *env, v any) error {
	return o.write(e, func(w io.Writer) error { return writeJSONTo(w, v) })
}

// writeJSONTo encodes v as indented JSON.
func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newTable returns a table writer with the project's style: headers as
// written (no upper-casing), numbers right-aligned by the caller's strings.
func newTable(w io.Writer, header ...string) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	return t
}
