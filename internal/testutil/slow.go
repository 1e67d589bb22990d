package testutil

import "testing"

// Slow skips t unless the tests were built with the slow tag: a test that
// costs more than a few seconds of CPU runs in CI's slow step
// (go test -tags slow ./...), keeping the default suite, the README's
// test command, quick on two cores.
func Slow(t testing.TB) {
	t.Helper()
	if !SlowSuite {
		t.Skip("several seconds of CPU: runs with go test -tags slow")
	}
}
