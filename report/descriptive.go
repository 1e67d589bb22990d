package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// The descriptive figures of the multi-run design — AUROC and the TPR at
// FPR 1% and 0.1% of the region bound's attack on the evaluation runs —
// in a table of their own below the bounds, labelled as carrying no
// guarantee (the one-run table has them as columns).

// DescriptiveTitle heads the descriptive table.
const DescriptiveTitle = "Descriptive figures of the ε_lb attack — no guarantee, no confidence"

// descriptiveRows returns the table's rows, or nil when the report has no
// descriptive figures.
func descriptiveRows(r *audit.Report) [][]string {
	var rows [][]string
	for _, pr := range r.Points {
		d := pr.Descriptive
		if d == nil {
			return nil
		}
		rows = append(rows, []string{pr.Point.Label, fmt.Sprintf("%.4f", float64(d.AUROC)),
			fmt.Sprintf("%.4f", float64(d.TPRAt1)), fmt.Sprintf("%.4f", float64(d.TPRAt01))})
	}
	return rows
}

var descriptiveHeader = []string{"release", "AUROC", "TPR at FPR 1%", "TPR at FPR 0.1%"}

// writeDescriptive writes the table and its note, if the report has them.
func writeDescriptive(w io.Writer, r *audit.Report) error {
	rows := descriptiveRows(r)
	if rows == nil {
		return nil
	}
	fmt.Fprintln(w, DescriptiveTitle)
	which := " (the attack and its orientation are those of the row's ε_lb, chosen on training runs)."
	if fromGuesses(r) {
		which = " (of the canaries' scores as a test of inclusion, over every canary)."
	}
	if err := WriteWrapped(w, "", audit.DescriptiveNote+which, 110); err != nil {
		return err
	}
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header(descriptiveHeader[0], descriptiveHeader[1], descriptiveHeader[2], descriptiveHeader[3])
	for _, row := range rows {
		if err := t.Append(row[0], row[1], row[2], row[3]); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// descriptiveSection is the HTML section, followed by the ROC curve's
// when the report has one, or nil.
func descriptiveSection(r *audit.Report) ([]HTMLSection, error) {
	rows := descriptiveRows(r)
	if rows == nil {
		return nil, nil
	}
	head := append([]string{"<" + descriptiveHeader[0]}, descriptiveHeader[1:]...)
	out := []HTMLSection{{DescriptiveTitle, HTMLText("note", audit.DescriptiveNote+".") + HTMLTable(head, rows, -1)}}
	var svg bytes.Buffer
	ok, err := WriteROCPlot(&svg, "svg", r)
	if err != nil || !ok {
		return out, err
	}
	note := HTMLText("note", "The ROC curve of the attack of the headline's ε_lb, on the outcomes of the table above (log-log): "+
		"it describes the attack and carries no guarantee and no confidence; the lower bound on ε is ε_lb.")
	out = append(out, HTMLSection{ROCTitle, note + htmlPlot("roc", svg.Bytes())})
	return out, nil
}
