//go:build !race

package main

// raceEnabled reports a binary built with -race (see race_on_test.go).
const raceEnabled = false
