package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
)

// spec is what a trials file of a scenario carries, so that a merge needs
// nothing but the parts: the scenario (as built, with the digests of its
// data files pinned, for the report's document) and the audit's design
// (audit.Design: everything the analysis needs). When the design cannot
// be written as data — theorem claims are Go code over the sampler and
// its data — the contents of every data file come instead, by SHA-256,
// so that the merge can rebuild the scenario.
type spec struct {
	Scenario *Config           `json:"scenario"`
	Design   *json.RawMessage  `json:"design,omitempty"`
	Files    map[string][]byte `json:"files,omitempty"`
	// Handshake is read from trials files written before the design was
	// carried, and ignored.
	Handshake *program.Handshake `json:"program_handshake,omitempty"`
}

// Spec returns the bytes a trials file stores for this plan.
func (p *Plan) Spec() ([]byte, error) {
	s := spec{Scenario: p.Config}
	if d, err := json.Marshal(p.Audit.Design()); err == nil {
		raw := json.RawMessage(d)
		s.Design = &raw
	} else {
		s.Files = p.Config.files
	}
	return json.Marshal(s)
}

// ParsePartSpec decodes a trials file's spec: the scenario and, when the
// file carries it, the audit's design (then nothing else is needed to
// analyse the trials, and the scenario is only validated, never built).
// Without a design the scenario's data files are resolved from the
// embedded contents, as ParseSpec does, for Build.
func ParsePartSpec(b []byte) (*Config, *audit.Design, error) {
	var s spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s.Scenario == nil {
		return nil, nil, fmt.Errorf("the trials file carries no readable scenario")
	}
	if s.Design == nil {
		c, err := ParseSpec(b)
		return c, nil, err
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
