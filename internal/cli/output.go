package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Output is a destination named by a --json/--csv/--html/--plot/--out
// flag: "" (none), "-" (stdout) or a file path.
//
// A file output is only ever a regular file: a path that exists must be a
// regular file — devices, FIFOs, sockets and directories are refused, and
// so are symbolic links, whose target may be anything (/dev/stdout is a
// link to /proc/self/fd/1, which may be the very file the shell redirects
// stdout to); a path that does not exist is created in an existing
// directory. Files are written to a temporary file in the same directory
// and renamed into place, so that a failure never leaves a partial file
// that looks complete, and nothing but a regular file is ever replaced.
type Output string

// ToStdout reports whether this output replaces the human table on stdout.
func (o Output) ToStdout() bool { return o == "-" }

// target checks the file an output writes: exists reports whether a
// regular file is there now; anything else that exists is an error
// naming the flag.
func (o Output) target(flagName string) (path string, exists bool, err error) {
	p := string(o)
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(p)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return "", false, Usagef("--%s: directory %s does not exist", flagName, clip.Quote(dir))
		}
		return p, false, nil
	case err != nil:
		return "", false, Usagef("--%s: cannot use %s: %s", flagName, p, PathErr(err))
	case st.Mode()&fs.ModeSymlink != 0:
		return "", false, Usagef("--%s: %s is a symbolic link; outputs are written only to regular files (give the file it points to, or - for standard output)", flagName, o)
	case !st.Mode().IsRegular():
		hint := ""
		if st.Mode()&fs.ModeCharDevice != 0 || st.Mode()&fs.ModeNamedPipe != 0 {
			hint = "; use - for standard output"
		}
		return "", false, Usagef("--%s: %s is %s, not a regular file: it is never replaced%s", flagName, o, filekind.Of(st.Mode()), hint)
	}
	return p, true, nil
}

// PathErr is the cause of a file-system error without the path, which the
// caller names itself.
func PathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// checkWritable fails early, before any work, if the output could not be
// written at the end of a run: its directory is missing or not writable,
// or the path is something other than a regular file (or a link to one).
func (o Output) checkWritable(flagName string) error {
	if o == "" || o == "-" {
		return nil
	}
	p, exists, err := o.target(flagName)
	if err != nil {
		return err
	}
	if exists && syscall.Access(p, 2 /* W_OK */) != nil {
		return Usagef("--%s: %s is not writable", flagName, o)
	}
	// The directory must accept the temporary file the output is written
	// to: try it now rather than after the run.
	probe, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".probe*")
	if err != nil {
		return Usagef("--%s: cannot create a file in %s: %s", flagName, filepath.Dir(p), PathErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// NamedOutput is an output with the flag that names it.
type NamedOutput struct {
	O    Output
	Flag string
}

// NamedInput is a file a command reads (a scenario, a trials file), which
// no output may replace.
type NamedInput struct {
	Path string
	What string
}

// CheckOutputs validates the outputs of one command before any work: each
// is writable (checkWritable), at most one writes to stdout, no two write
// the same file, none replaces an input, and none is the file the
// command's standard output or error already goes to (the shell's
// redirection target).
func CheckOutputs(e *Env, outs []NamedOutput, inputs []NamedInput) error {
	stdout := []string{}
	var files []seenOutput
	for _, o := range outs {
		if o.O == "" {
			continue
		}
		if o.O.ToStdout() {
			stdout = append(stdout, "--"+o.Flag)
			continue
		}
		s, err := checkFileOutput(e, o, files, inputs)
		if err != nil {
			return err
		}
		files = append(files, s)
	}
	if len(stdout) > 1 {
		return Usagef("only one of --json, --csv, --html can write to stdout (-), got %s", strings.Join(stdout, " and "))
	}
	return nil
}

// seenOutput is a file output already checked: its canonical path, what
// is there now (nil: nothing) and its flag.
type seenOutput struct {
	key  string
	info fs.FileInfo
	flag string
}

// checkFileOutput checks one file output against the outputs checked
// before it (files), the command's inputs and its standard streams.
func checkFileOutput(e *Env, o NamedOutput, files []seenOutput, inputs []NamedInput) (seenOutput, error) {
	if err := o.O.checkWritable(o.Flag); err != nil {
		return seenOutput{}, err
	}
	p, _, err := o.O.target(o.Flag)
	if err != nil {
		return seenOutput{}, err
	}
	s := seenOutput{key: canonical(p), flag: o.Flag}
	s.info, _ = os.Stat(p)
	for _, f := range files {
		if f.key == s.key || (f.info != nil && s.info != nil && os.SameFile(f.info, s.info)) {
			return s, Usagef("--%s and --%s name the same file %s: each output needs its own", f.flag, o.Flag, o.O)
		}
	}
	if s.info == nil {
		return s, nil // a new file: none of the checks below can apply
	}
	for _, in := range inputs {
		if ist, err := os.Stat(in.Path); err == nil && os.SameFile(ist, s.info) {
			return s, Usagef("--%s: %s is the %s this command reads; write the output elsewhere", o.Flag, o.O, in.What)
		}
	}
	if isYAMLName(p) {
		return s, Usagef("--%s: %s is a YAML file, the format of scenarios; no output is YAML and none replaces a YAML file: write the output elsewhere", o.Flag, o.O)
	}
	for _, std := range []struct {
		name string
		w    io.Writer
	}{{"standard output", e.Stdout}, {"standard error", e.Stderr}} {
		if fst := fileInfoOf(std.w); fst != nil && os.SameFile(fst, s.info) {
			return s, Usagef("--%s: %s is where %s already goes; use - for standard output, or another file", o.Flag, o.O, std.name)
		}
	}
	return s, nil
}

// isYAMLName reports whether a path ends in .yaml or .yml (any case). No
// output of the tool is YAML, so an existing file of that name is a
// scenario (or another YAML document): replacing it would destroy an input
// of another command — "audit curve --json scen.yaml" reads no scenario,
// so the check against the command's own inputs cannot catch it.
func isYAMLName(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return ext == ".yaml" || ext == ".yml"
}

// fileInfoOf returns the file behind a stream (through checkedWriter),
// or nil when it is not a file.
func fileInfoOf(w io.Writer) fs.FileInfo {
	if c, ok := w.(*CheckedWriter); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return st
}

// canonical returns an absolute, link-free spelling of a path that may not
// exist yet (its directory does), to compare two outputs.
func canonical(p string) string {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		dir = filepath.Dir(p)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Join(dir, filepath.Base(p))
}

// Write sends the bytes produced by fill to the destination. Files are
// written to a temporary file in the target's directory and renamed into
// place — over a regular file or nothing, never over anything else, which
// is checked again now (the path may have changed during a long run).
func (o Output) Write(e *Env, fill func(w io.Writer) error) error {
	switch o {
	case "":
		return nil
	case "-":
		return fill(e.Stdout)
	}
	path := string(o)
	exists := false
	if st, err := os.Lstat(path); err == nil {
		if !st.Mode().IsRegular() {
			return WriteError{Msg: fmt.Sprintf("cannot write %s: it is now %s, which is not replaced", o, filekind.Of(st.Mode()))}
		}
		exists = true
	}
	mode := fs.FileMode(0o644)
	if exists {
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return WriteError{Msg: fmt.Sprintf("cannot write %s: %s", o, PathErr(err))}
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := fill(tmp); err != nil {
		tmp.Close()
		return WriteError{Msg: fmt.Sprintf("cannot write %s: %v", o, err)}
	}
	if err := tmp.Close(); err != nil {
		return WriteError{Msg: fmt.Sprintf("cannot write %s: %s", o, PathErr(err))}
	}
	// CreateTemp makes the file private (0600); a report is an ordinary
	// file, or keeps the mode of the file it replaces.
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return WriteError{Msg: fmt.Sprintf("cannot write %s: %s", o, PathErr(err))}
	}
	if !exists {
		// Nothing was there: a hard link creates the file only if the
		// name is still free, atomically.
		err := os.Link(tmp.Name(), path)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) && !isNotSupported(err) {
			return WriteError{Msg: fmt.Sprintf("cannot write %s: %s", o, PathErr(err))}
		}
		// The name was taken meanwhile, or the file system has no hard
		// links: rename, but only over a regular file.
	}
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return WriteError{Msg: fmt.Sprintf("cannot write %s: it is now %s, which is not replaced", o, filekind.Of(st.Mode()))}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return WriteError{Msg: fmt.Sprintf("cannot write %s: %s", o, PathErr(err))}
	}
	return nil
}

// isNotSupported reports a file system that refuses hard links.
func isNotSupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EMLINK)
}

// WriteJSON writes v as indented JSON.
func (o Output) WriteJSON(e *Env, v any) error {
	return o.Write(e, func(w io.Writer) error { return WriteJSONTo(w, v) })
}

// WriteJSONTo encodes v as indented JSON.
func WriteJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// CheckedWriter remembers the first error of the writes to w and refuses
// every later write, so that a command's output to stdout — a table
// printed with fmt.Fprintf, whose error nobody looks at — cannot fail
// silently: the command ends with the error (a full disk is not exit 0).
type CheckedWriter struct {
	w   io.Writer
	err error
}

// NewCheckedWriter returns a CheckedWriter writing to w.
func NewCheckedWriter(w io.Writer) *CheckedWriter { return &CheckedWriter{w: w} }

// Err is the first error of the writes, nil while none failed.
func (c *CheckedWriter) Err() error { return c.err }

// Write implements io.Writer.
func (c *CheckedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

// WriteError is a failure to write a command's output (a full disk, a
// closed stream): exit 3, the run's results were not delivered.
type WriteError struct{ Msg string }

// Error implements error.
func (e WriteError) Error() string { return e.Msg }

// NewTable returns a table writer with the project's style: headers as
// written (no upper-casing), numbers right-aligned by the caller's strings.
func NewTable(w io.Writer, header ...string) *tablewriter.Table {
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

// OutputFlags are the documents a command writes besides its table —
// --json, --csv, --plot and --html, "" where not asked for or where the
// command has no such flag. Every command registers, checks and writes
// them through this one type, so that each treats its outputs alike: all
// checked before any work (CheckOutputs), at most one on stdout, written
// whole or not at all.
type OutputFlags struct{ JSON, CSV, Plot, HTML string }

// OutputHelp is the help text of a command's output flags; a flag whose
// text is empty is not registered (the command has no such output).
type OutputHelp struct{ JSON, CSV, Plot, HTML string }

// Register adds the output flags that h has help for.
func (o *OutputFlags) Register(fs *FlagSet, h OutputHelp) {
	for _, f := range []struct {
		p          *string
		name, help string
		stdout     bool
	}{{&o.JSON, "json", h.JSON, true}, {&o.CSV, "csv", h.CSV, true}, {&o.Plot, "plot", h.Plot, false}, {&o.HTML, "html", h.HTML, true}} {
		if f.help != "" {
			fs.PathVar(f.p, f.name, f.stdout, f.help)
		}
	}
}

// pathFlag is a flag naming a file a command writes. An empty value
// (--json "", --json=) is refused: it would otherwise read as "no
// output", and the command would end with exit 0 having written nothing.
type pathFlag struct {
	v *string
	// stdout says whether "-" (standard output) is allowed, for the
	// message.
	stdout bool
}

// String implements flag.Value.
func (f pathFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

// Set refuses an empty path.
func (f pathFlag) Set(s string) error {
	if s == "" {
		if f.stdout {
			return errors.New("needs a file name, or - for standard output")
		}
		return errors.New("needs a file name")
	}
	*f.v = s
	return nil
}

// PathVar defines a pathFlag; stdout says whether it takes "-".
func (f *FlagSet) PathVar(p *string, name string, stdout bool, usage string) {
	f.Var(pathFlag{p, stdout}, name, usage)
}

// Asked reports whether any output is asked for.
func (o OutputFlags) Asked() bool { return o.JSON != "" || o.CSV != "" || o.Plot != "" || o.HTML != "" }

// StdoutTaken reports whether a document goes to stdout, in place of the
// command's table.
func (o OutputFlags) StdoutTaken() bool {
	return Output(o.JSON).ToStdout() || Output(o.CSV).ToStdout() || Output(o.HTML).ToStdout()
}

// Check checks the outputs, and the command's other ones (extra), before
// any work (CheckOutputs): none may replace one of the inputs.
func (o OutputFlags) Check(e *Env, inputs []NamedInput, extra ...NamedOutput) error {
	return CheckOutputs(e, append(o.Named(), extra...), inputs)
}

// Named lists the outputs with their flags.
func (o OutputFlags) Named() []NamedOutput {
	return []NamedOutput{{Output(o.JSON), "json"}, {Output(o.CSV), "csv"}, {Output(o.Plot), "plot"}, {Output(o.HTML), "html"}}
}

// CheckDataInputs refuses an output that is one of the data files the
// scenario reads (scenario.Config.InputFiles): checked once the scenario
// is loaded, before it is built, so that "audit run s.yaml --json data.csv"
// cannot replace the data after the run.
func CheckDataInputs(outs []NamedOutput, cfg *scenario.Config) error {
	for _, in := range cfg.InputFiles() {
		ist, err := os.Stat(in.Path)
		if err != nil {
			continue // Build says what is wrong with it
		}
		for _, o := range outs {
			if o.O == "" || o.O.ToStdout() {
				continue
			}
			if st, err := os.Stat(string(o.O)); err == nil && os.SameFile(st, ist) {
				return Usagef("--%s: %s is the scenario's %s, which this command reads; write the output elsewhere", o.Flag, o.O, in.Field)
			}
		}
	}
	return nil
}

// CheckReportPlot checks the --plot of a report (run, analyze, merge): a
// file whose name says its format.
func (o OutputFlags) CheckReportPlot() error {
	if o.Plot == "" {
		return nil
	}
	if o.Plot == "-" {
		return Usagef("--plot: needs a file name ending in .svg or .png")
	}
	if _, err := report.PlotFormat(o.Plot); err != nil {
		return Usagef("--plot: %v", err)
	}
	return nil
}

// CheckPlotExt checks the --plot of "audit curve" and "audit bounds
// --sweep": a file name ending in .svg or .png.
func (o OutputFlags) CheckPlotExt() error {
	if o.Plot != "" {
		if ext := strings.ToLower(filepath.Ext(o.Plot)); ext != ".svg" && ext != ".png" {
			return Usagef("--plot: file name must end in .svg or .png, got %q", o.Plot)
		}
	}
	return nil
}

// Document is one output and what fills it.
type Document struct {
	Out  string
	Fill func(w io.Writer) error
}

// WriteDocuments writes the documents in order, each an output already
// checked; "" ones are skipped. Once ctx is cancelled it stops before the
// next document with stopped, so that an interruption never leaves a
// document half written.
func WriteDocuments(ctx context.Context, e *Env, stopped error, docs ...Document) error {
	for _, d := range docs {
		if ctx.Err() != nil {
			return stopped
		}
		if err := Output(d.Out).Write(e, d.Fill); err != nil {
			return err
		}
	}
	return nil
}
