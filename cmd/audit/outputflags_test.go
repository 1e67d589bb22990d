package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outputFlags registers only the outputs a command has, and its checks
// and writes are those every command makes.
func TestOutputFlags(t *testing.T) {
	fs := newFlagSet("x", "")
	var o outputFlags
	o.register(fs, outputHelp{json: "JSON", plot: "plot"})
	if fs.Lookup("json") == nil || fs.Lookup("plot") == nil {
		t.Fatal("--json or --plot not registered")
	}
	if fs.Lookup("csv") != nil || fs.Lookup("html") != nil {
		t.Error("--csv or --html registered without help text")
	}
	if err := fs.Parse([]string{"--json", "-", "--plot", "p.pdf"}); err != nil {
		t.Fatal(err)
	}
	if !o.stdoutTaken() || !o.asked() {
		t.Errorf("stdoutTaken %v, asked %v; want both true", o.stdoutTaken(), o.asked())
	}
	if err := o.checkPlotExt(); err == nil || !strings.Contains(err.Error(), "must end in .svg or .png") {
		t.Errorf("checkPlotExt(p.pdf) = %v", err)
	}
	if err := o.checkReportPlot(); err == nil || !strings.HasPrefix(err.Error(), "--plot: ") {
		t.Errorf("checkReportPlot(p.pdf) = %v", err)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard}
	two := outputFlags{json: "-", csv: "-"}
	if err := two.check(e, nil); err == nil || !strings.Contains(err.Error(), "only one of --json, --csv, --html can write to stdout (-), got --json and --csv") {
		t.Errorf("two on stdout: %v", err)
	}
}

// writeDocuments writes in order and, once interrupted, writes nothing
// more: the document not yet written does not appear.
func TestWriteDocumentsStopsWhenInterrupted(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.csv")
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := interruptedError{"stopped"}
	err := writeDocuments(ctx, e, stopped,
		document{a, func(w io.Writer) error { cancel(); _, err := io.WriteString(w, "{}\n"); return err }},
		document{"", func(io.Writer) error { t.Error("an output not asked for was filled"); return nil }},
		document{b, func(w io.Writer) error { _, err := io.WriteString(w, "x\n"); return err }},
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
