//go:build race

package main

// raceEnabled reports a binary built with -race: its children run five to
// ten times slower and larger, so resource limits are not measured.
const raceEnabled = true
