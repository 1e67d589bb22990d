package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// OutputFlags registers only the outputs a command has, and its checks
// and writes are those every command makes.
func TestOutputFlags(t *testing.T) {
	fs := NewFlagSet("x", "")
	var o OutputFlags
	o.Register(fs, OutputHelp{JSON: "JSON", Plot: "plot"})
	if fs.Lookup("json") == nil || fs.Lookup("plot") == nil {
		t.Fatal("--json or --plot not registered")
	}
	if fs.Lookup("csv") != nil || fs.Lookup("html") != nil {
		t.Error("--csv or --html registered without help text")
	}
	if err := fs.Parse([]string{"--json", "-", "--plot", "p.pdf"}, &Env{Stdout: io.Discard, Stderr: io.Discard}, 0); err != nil {
		t.Fatal(err)
	}
	if !o.StdoutTaken() || !o.Asked() {
		t.Errorf("stdoutTaken %v, asked %v; want both true", o.StdoutTaken(), o.Asked())
	}
	if err := o.CheckPlotExt(); err == nil || !strings.Contains(err.Error(), "must end in .svg or .png") {
		t.Errorf("checkPlotExt(p.pdf) = %v", err)
	}
	if err := o.CheckReportPlot(); err == nil || !strings.HasPrefix(err.Error(), "--plot: ") {
		t.Errorf("checkReportPlot(p.pdf) = %v", err)
	}
	e := &Env{Stdout: io.Discard, Stderr: io.Discard}
	two := OutputFlags{JSON: "-", CSV: "-"}
	if err := two.Check(e, nil); err == nil || !strings.Contains(err.Error(), "only one of --json, --csv, --html can write to stdout (-), got --json and --csv") {
		t.Errorf("two on stdout: %v", err)
	}
}

// WriteDocuments writes in order and, once interrupted, writes nothing
// more: the document not yet written does not appear.
func TestWriteDocumentsStopsWhenInterrupted(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.csv")
	var out bytes.Buffer
	e := &Env{Stdout: &out, Stderr: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := InterruptedError{Msg: "stopped"}
	err := WriteDocuments(ctx, e, stopped,
		Document{a, func(w io.Writer) error { cancel(); _, err := io.WriteString(w, "{}\n"); return err }},
		Document{"", func(io.Writer) error { t.Error("an output not asked for was filled"); return nil }},
		Document{b, func(w io.Writer) error { _, err := io.WriteString(w, "x\n"); return err }},
	)
	if err != stopped {
		t.Errorf("error %v, want the interruption", err)
	}
	if got, err := os.ReadFile(a); err != nil || string(got) != "{}\n" {
		t.Errorf("first document: %q, %v", got, err)
	}
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Errorf("the document after the interruption exists: %v", err)
	}
}

// A path that becomes a FIFO or a directory during the run is not
// replaced when the report is written: the check is repeated at the end.
func TestOutputBecameSpecialDuringRun(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"fifo", "dir"} {
		p := filepath.Join(dir, "r-"+kind)
		o := Output(p)
		if err := o.checkWritable("json"); err != nil {
			t.Fatal(err)
		}
		if kind == "fifo" {
			syscall.Mkfifo(p, 0o644)
		} else {
			os.Mkdir(p, 0o755)
		}
		var errb bytes.Buffer
		err := o.Write(&Env{Stdout: io.Discard, Stderr: &errb}, func(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err })
		var we WriteError
		if !errors.As(err, &we) || !strings.Contains(err.Error(), "not replaced") {
			t.Errorf("%s: %v", kind, err)
		}
		if st, err := os.Lstat(p); err != nil || st.Mode().IsRegular() {
			t.Errorf("%s was replaced", kind)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}
