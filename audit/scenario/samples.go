package scenario

import (
	"strings"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
)

// SamplesOptions returns a scenario's statistics — its audit section and
// its claims — for an audit of precomputed samples whose releases have
// dimension dim. The model, data, sampler and release sections are not
// used; features are limited to those computed from a release alone
// (theta, norm, coord:K), and theorems are refused (they need the sampler).
func SamplesOptions(c *Config, dim int) (audit.Options, error) {
	o, err := samplesOptions(c, dim)
	return o, c.named(err)
}

func samplesOptions(c *Config, dim int) (audit.Options, error) {
	o, err := c.options()
	if err != nil {
		return o, err
	}
	for _, f := range c.Audit.Features {
		if e, _, ok := lookupFeature(f); !ok || e.ReadsModel {
			return o, errAt("audit.features", "precomputed samples support %s only (%s needs the model), got %s", wordList(featureNames(readsRelease, ""), "and"), clip.Value(f), clip.Quote(f))
		}
	}
	if o.Features, err = buildFeatures(c.Audit.Features, &Plan{}, dim); err != nil {
		return o, err
	}
	for _, name := range c.Audit.Attacks {
		a, err := attacks.ByName(name)
		if err != nil {
			return o, errAt("audit.attacks", "%s", strings.TrimPrefix(err.Error(), "attacks: "))
		}
		o.Attacks = append(o.Attacks, a)
	}
	if len(c.Audit.Metrics) > 0 {
		return o, errAt("audit.metrics", "precomputed samples carry no model to measure")
	}
	if cl := c.Claim; cl != nil {
		if cl.Theorems {
			return o, errAt("claim.theorems", "the theorems need the sampler, which precomputed samples do not carry; give claim.epsilon/delta or claim.gdp")
		}
		if cl.Epsilon != nil {
			o.Claims = append(o.Claims, audit.PureClaim(*cl.Epsilon, *cl.Delta))
		}
		if cl.GDP != nil {
			o.Claims = append(o.Claims, audit.GDPClaim(*cl.GDP))
		}
	}
	return o, nil
}
