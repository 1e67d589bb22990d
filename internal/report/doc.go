// Package report presents audit reports for people: the text table, one
// CSV row per release point, the ε plot (SVG or PNG) and a self-contained
// HTML page. It reads only an audit.Report (and, for the HTML page, the
// scenario to show), so that the engine itself pulls in no table, font or
// plotting code.
package report
