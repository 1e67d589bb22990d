package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// The multi-run report gives the ε_lb attack's AUROC and TPR at low FPR
// in a table of their own, labelled as carrying no guarantee, in the text
// and in the HTML page; without them there is no such table.
func TestDescriptiveTable(t *testing.T) {
	r := fakeReport("desc", 2, false, 1, nil)
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), DescriptiveTitle) {
		t.Errorf("a descriptive table without descriptive figures")
	}
	for k := range r.Points {
		r.Points[k].Descriptive = &audit.Descriptive{AUROC: 0.76021, TPRAt1: 0.0924, TPRAt01: 0.01}
	}
	b.Reset()
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, DescriptiveTitle) || !strings.Contains(out, "no guarantee") || strings.Count(out, "0.7602") != 2 || strings.Count(out, "0.0924") != 2 {
		t.Errorf("text:\n%s", out)
	}
	b.Reset()
	if err := WriteHTML(&b, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<h2>"+DescriptiveTitle) || !strings.Contains(b.String(), "<td>0.7602</td>") {
		t.Errorf("HTML lacks the descriptive section")
	}
}
