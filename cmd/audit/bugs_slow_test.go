//go:build slow

package main

import "testing"

// Every file of testdata/bugs reaches its verdict at its reduced run count
// (bugsCatalogue): the planted bugs refuted (exit 1), the correct
// samplers not (exit 0).
func TestBugsCatalogueReduced(t *testing.T) {
	for name, f := range bugFiles(t) {
		c := bugsCatalogue[name]
		t.Run(name, func(t *testing.T) { runBug(t, name, f, c.reduced) })
	}
}

// Every file of testdata/bugs reaches its verdict at its own run count
// (audit.trials of the file, as "audit run FILE" runs it).
func TestBugsCatalogueFull(t *testing.T) {
	for name, f := range bugFiles(t) {
		t.Run(name, func(t *testing.T) { runBug(t, name, f, 0) })
	}
}
