//go:build slow

package main

import "testing"

// The slow scenarios (real data, 10⁶ exact runs) reach their verdicts too.
func TestScenarioFilesSlow(t *testing.T) { testScenarioFiles(t, true) }
