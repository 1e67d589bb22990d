// Package testutil holds small generators shared by the tests of several
// packages (random parameters and records); it is not used by the library.
package testutil
