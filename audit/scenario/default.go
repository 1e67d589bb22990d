package scenario

import _ "embed"

//go:embed default.yaml
var defaultScenario []byte

// DefaultScenario returns the YAML of the scenario "audit run" uses when
// no config file is given.
func DefaultScenario() []byte { return append([]byte(nil), defaultScenario...) }

// DefaultConfig parses DefaultScenario.
func DefaultConfig() (*Config, error) { return ParseConfig(defaultScenario) }
