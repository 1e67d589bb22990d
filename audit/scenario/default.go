package scenario

import _ "embed"

//go:embed default.yaml
var defaultScenario []byte

// DefaultScenario returns the YAML of the scenario "audit run" uses when
// no config file is given.
func DefaultScenario() []byte { return append([]byte(nil), defaultScenario...) }

// DefaultConfig parses DefaultScenario, with the settings applied as
// ParseConfig applies them.
func DefaultConfig(sets ...Setting) (*Config, error) {
	return ParseConfig(defaultScenario, sets...)
}
