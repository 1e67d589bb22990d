package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
)

// spec is what a trials file of a scenario carries, so that a merge needs
// nothing but the parts: the scenario (as built, with the digests of its
// data files pinned, for the report's document) and the audit's design
// (audit.Design: everything the analysis needs, theorem claims included
// as data).
type spec struct {
	Scenario *Config          `json:"scenario"`
	Design   *json.RawMessage `json:"design,omitempty"`
	// Files and Handshake are read from trials files written before every
	// design was data (they then carried the data files, or the program's
	// handshake, for a rebuild), so that such a file is told apart from a
	// corrupt one; a merge refuses it (ErrNoDesign).
	Files     map[string][]byte  `json:"files,omitempty"`
	Handshake *program.Handshake `json:"program_handshake,omitempty"`
}

// ErrNoDesign is returned by ParsePartSpec for a trials file that carries
// no design: one written before every design could be written as data.
var ErrNoDesign = errors.New("the trials file predates audit designs in trials files; run its shard again with this version ('audit run --shard I/N --out FILE')")

// Spec returns the bytes a trials file stores for this plan: the scenario
// and the audit's design. It is an error when the design cannot be written
// as data (a claim given as Go code only).
func (p *Plan) Spec() ([]byte, error) {
	d, err := json.Marshal(p.Audit.Design())
	if err != nil {
		return nil, fmt.Errorf("the audit's design cannot be written to a trials file: %v", err)
	}
	raw := json.RawMessage(d)
	return json.Marshal(spec{Scenario: p.Config, Design: &raw})
}

// ParsePartSpec decodes a trials file's spec: the scenario and the audit's
// design (nothing else is needed to analyse the trials; the scenario is
// only validated, never built). A file without a design gives ErrNoDesign.
func ParsePartSpec(b []byte) (*Config, *audit.Design, error) {
	var s spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s.Scenario == nil {
		return nil, nil, fmt.Errorf("the trials file carries no readable scenario")
	}
	if s.Design == nil {
		return nil, nil, ErrNoDesign
	}
	var d audit.Design
	if err := json.Unmarshal(*s.Design, &d); err != nil {
		return nil, nil, fmt.Errorf("the trials file carries no readable design: %v", err)
	}
	c := s.Scenario
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	return c, &d, nil
}
