//go:build !slow

package testutil

// SlowSuite is true when the tests were built with -tags slow.
const SlowSuite = false
