//go:build slow

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The parts of every testdata scenario (the directory read, no list
// written here) merge from an empty directory into the single run's
// report, byte for byte.
func TestMergeEveryScenario(t *testing.T) {
	files, err := filepath.Glob("../../testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario in testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) { checkMergeMatchesRun(t, name) })
	}
}
