// Package testutil holds small helpers shared by the tests of several
// packages (random parameters and records, .npy files, allocation counts,
// matching an expected message); it is not used by the library.
package testutil
