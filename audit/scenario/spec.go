package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
)

// spec is what a trials file of a scenario carries, so that a merge needs
// nothing but the parts: the scenario (as built, with the digests of its
// data files pinned) and the contents of every data file, by SHA-256.
type spec struct {
	Scenario *Config           `json:"scenario"`
	Files    map[string][]byte `json:"files,omitempty"`
	// Handshake is a program sampler's (release labels and dimension), so
	// that a merge never starts the program.
	Handshake *program.Handshake `json:"program_handshake,omitempty"`
}

// Spec returns the bytes a trials file stores for this plan.
func (p *Plan) Spec() ([]byte, error) {
	return json.Marshal(spec{Scenario: p.Config, Files: p.Config.files, Handshake: p.handshake})
}

// ParseSpec decodes a trials file's spec: the scenario, with its data files
// resolved from the embedded contents (checked against their digests), so
// that Build works from any directory.
func ParseSpec(b []byte) (*Config, error) {
	var s spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s.Scenario == nil {
		return nil, fmt.Errorf("the trials file carries no readable scenario")
	}
	c := s.Scenario
	for sum, raw := range s.Files {
		got := sha256.Sum256(raw)
		if hex.EncodeToString(got[:]) != strings.ToLower(sum) {
			return nil, fmt.Errorf("the data file %.12s… embedded in the trials file does not match its digest", sum)
		}
	}
	c.files = s.Files
	if c.Sampler.Program != nil {
		if s.Handshake == nil {
			return nil, fmt.Errorf("the trials file lacks the program sampler's handshake")
		}
		c.handshake = s.Handshake
	}
	if c.Data.CSV != nil {
		if _, ok := c.files[strings.ToLower(c.Data.CSV.SHA256)]; !ok {
			return nil, fmt.Errorf("the trials file lacks the contents of data.csv (%s, sha256 %.12s…)", c.Data.CSV.Path, c.Data.CSV.SHA256)
		}
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
