package scenario

import (
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// featureEntry registers a name of audit.features: how it reads, how it
// is documented, and how it is built. Every check and document that
// names features reads featureRegistry; adding a feature is an entry
// here (and its attacks.FeatureMap, when none fits).
type featureEntry struct {
	// Name is the feature's name, or for a parametrised one the prefix
	// before its argument ("coord:").
	Name string
	// Arg is the argument's placeholder in documents ("K"), empty for a
	// name without one.
	Arg string
	// Doc documents the feature in the reference ("theta (every
	// coordinate)"); empty when another entry's text covers it.
	Doc string
	// ReadsModel reports whether the feature reads a release as the
	// model's parameters (it then needs the model, and a release of the
	// model's dimension).
	ReadsModel bool
	// Count is the number of feature columns the feature adds for a
	// config whose releases have dim values.
	Count func(c *Config, dim int) int
	// Build returns the feature map (arg is the text after Name).
	Build func(arg string, p *Plan, dim int) (attacks.FeatureMap, error)
}

// featureRegistry lists the features in the order the reference gives
// them.
var featureRegistry = []featureEntry{
	{Name: "theta", Doc: "theta (every coordinate)",
		Count: func(_ *Config, dim int) int { return dim },
		Build: func(_ string, _ *Plan, dim int) (attacks.FeatureMap, error) { return attacks.Theta{D: dim}, nil }},
	{Name: "norm", Doc: "norm (‖θ‖)",
		Count: one,
		Build: func(string, *Plan, int) (attacks.FeatureMap, error) { return attacks.Norm{}, nil }},
	{Name: "coord:", Arg: "K", Doc: "coord:K (coordinate K)",
		Count: one, Build: buildCoord},
	{Name: "loglik", Doc: "loglik (log-likelihoods of the differing records, Heller & Fetaya §V)", ReadsModel: true,
		Count: func(c *Config, _ int) int {
			if c.Neighbour == nil || c.Neighbour.Adjacency == dataset.ReplaceOne {
				return 2
			}
			return 1
		},
		Build: buildLogLik},
	{Name: "probs", Doc: "probs/logprobs (the four canary probabilities of Heller & Fetaya §V; need neighbour.deepfool)", ReadsModel: true,
		Count: four, Build: buildProbs(false)},
	{Name: "logprobs", ReadsModel: true, Count: four, Build: buildProbs(true)},
}

func one(*Config, int) int  { return 1 }
func four(*Config, int) int { return 4 }

// lookupFeature returns the entry of a feature name and its argument.
func lookupFeature(name string) (featureEntry, string, bool) {
	for _, e := range featureRegistry {
		if e.Arg == "" && name == e.Name {
			return e, "", true
		}
		if arg, ok := strings.CutPrefix(name, e.Name); ok && e.Arg != "" {
			return e, arg, true
		}
	}
	return featureEntry{}, "", false
}

// featureNames lists the features as the reference writes them
// ("coord:K"), those for which keep holds, with an argument written as
// arg when arg is not empty.
func featureNames(keep func(featureEntry) bool, arg string) []string {
	var out []string
	for _, e := range featureRegistry {
		if keep != nil && !keep(e) {
			continue
		}
		a := e.Arg
		if a != "" && arg != "" {
			a = arg
		}
		out = append(out, e.Name+a)
	}
	return out
}

// readsRelease holds for the features that read a release as numbers, not
// as the model's parameters.
func readsRelease(e featureEntry) bool { return !e.ReadsModel }

// wordList writes names as "a, b or c" (conj "or") or "a, b and c".
func wordList(names []string, conj string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// featureRange is the reference's range of audit.features.
func featureRange() string { return strings.Join(featureNames(nil, ""), ", ") }

// featureMeaning is the reference's meaning of audit.features.
func featureMeaning() string {
	var docs []string
	for _, e := range featureRegistry {
		if e.Doc != "" {
			docs = append(docs, e.Doc)
		}
	}
	return "What the attacks see of a release: " + strings.Join(docs, ", ") + "."
}

// buildFeatures builds the feature list of audit.features.
func buildFeatures(names []string, p *Plan, dim int) (attacks.FeatureMap, error) {
	var maps attacks.Concat
	for _, name := range names {
		e, arg, ok := lookupFeature(name)
		if !ok {
			return nil, errAt("audit.features", "must be %s, got %s", wordList(featureNames(nil, ""), "or"), clip.Quote(name))
		}
		m, err := e.Build(arg, p, dim)
		if err != nil {
			return nil, err
		}
		maps = append(maps, m)
	}
	if len(maps) == 1 {
		return maps[0], nil
	}
	return maps, nil
}

// featureCount is the number of feature columns the config's feature list
// asks for (0 for a name Build will refuse anyway).
func featureCount(c *Config, m mechanisms.Model) int {
	dim := m.Dim()
	if c.Sampler.ExactCyclicSGLD != nil {
		dim = 1
	}
	f := 0
	for _, name := range c.Audit.Features {
		if e, _, ok := lookupFeature(name); ok {
			f += e.Count(c, dim)
		}
	}
	return f
}

// estimatorFeatures checks that the features of an estimator release (a
// scalar) read it as a number, not as the model's parameters.
func estimatorFeatures(names []string) error {
	allowed := featureNames(readsRelease, "0")
	for _, f := range names {
		e, arg, ok := lookupFeature(f)
		if !ok || e.ReadsModel || (e.Arg != "" && arg != "0") {
			return errAt("audit.features", "the release is a scalar estimator (release.mode estimator): use %s, got %s", wordList(allowed, "or"), clip.Quote(f))
		}
	}
	return nil
}

// buildCoord builds coord:K.
func buildCoord(arg string, _ *Plan, dim int) (attacks.FeatureMap, error) {
	k, err := strconv.Atoi(arg)
	if err != nil || k < 0 || k >= dim {
		return nil, errAt("audit.features", "coord:K needs K in [0, %d], got %s", dim-1, clip.Quote("coord:"+arg))
	}
	return attacks.Coords{Idx: []int{k}}, nil
}

// buildLogLik builds loglik: the log-likelihoods of the records that
// differ between D and D′.
func buildLogLik(_ string, p *Plan, _ int) (attacks.FeatureMap, error) {
	ll := attacks.LogLik{Model: p.Model}
	pr := p.Pair
	switch pr.Adjacency {
	case dataset.ReplaceOne:
		ll.Records = []dataset.Record{pr.D.Records[pr.Index], pr.DPrime.Records[pr.Index]}
		ll.Labels = []string{"record in D", "record in D′"}
	case dataset.RemoveOne:
		ll.Records = []dataset.Record{pr.D.Records[pr.Index]}
		ll.Labels = []string{"removed record"}
	case dataset.AddOne:
		ll.Records = []dataset.Record{pr.DPrime.Records[pr.Index]}
		ll.Labels = []string{"added record"}
	}
	return ll, nil
}

// buildProbs builds probs (log false) or logprobs.
func buildProbs(log bool) func(string, *Plan, int) (attacks.FeatureMap, error) {
	name := "probs"
	if log {
		name = "logprobs"
	}
	return func(_ string, p *Plan, _ int) (attacks.FeatureMap, error) {
		cl, ok := p.Model.(mechanisms.Classifier)
		if !ok || p.Canary == nil {
			return nil, errAt("audit.features", "%s needs a classification model and a DeepFool canary (neighbour.deepfool)", name)
		}
		return canaryFeatures{cl, *p.Canary, log}, nil
	}
}
