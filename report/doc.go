// Package report presents audit reports for people: the text table
// (WriteTable), one CSV row per release point (WriteCSV), the ε plot as
// SVG or PNG (WritePlot) and a self-contained HTML page (WriteHTML). It
// reads only an audit.Report (and, for the HTML page, the scenario to
// show), so that the engine, package audit, pulls in no table, font or
// plotting code; the audit command prints its reports with this package,
// and a Go program that ran audit.Run prints the same reports with it.
package report
