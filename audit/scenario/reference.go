package scenario

//go:generate go test -run ^TestReferenceDocIsCurrent$ -update .

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Field documents one field of a scenario. The table returned by Reference
// covers every field reachable from Config (a test walks the Go types and
// fails on a missing or stale entry), docs/scenario.md is generated from
// it, and "audit run --explain FIELD" prints an entry.
type Field struct {
	// Path is the field in YAML terms, list items written "[]":
	// "sampler.sgld.step.eta", "data.records[].x".
	Path string
	// Type is the YAML type, derived from the Go types: "number",
	// "integer", "list of numbers", "mapping {eta, b, gamma}", …
	Type string
	// Required is "yes", empty (optional), or a condition: "with C"
	// (required when C holds) or "unless C" (required when it does not),
	// where C is "P" (the field P is set), "P = V" or "P ≠ V" (the value
	// of P, its default when unset), or several of these joined by " or ".
	Required string
	// Group names the fields of which exactly one must be set (the first
	// is the one example scenarios use).
	Group string
	// Default is the YAML value an omitted field takes ("" if none), and
	// DefaultNote what it means when that is not plain.
	Default     string
	DefaultNote string
	// Range is the allowed values.
	Range string
	// Meaning says what the field does.
	Meaning string
	// UsedBy names the models, samplers or settings that read the field.
	UsedBy string
	// Example is a valid value, in YAML flow style; the example scenarios
	// (and the test that builds every sampler × model combination) are
	// made of these.
	Example string

	// Models, for a data or sampler choice, lists the models it works with
	// (nil: every model); OtherModels is the reason the others are refused
	// (a fragment of the error Build returns).
	Models      []string
	OtherModels string
	// ExampleData (a data choice, e.g. "data.synthetic_gauss") and
	// ExampleRecord (a canary record) complete a model's example scenario.
	ExampleData   string
	ExampleRecord string
	// ExampleNeighbour, for a model choice, replaces the neighbour
	// section of its example scenarios (a gradient canary for
	// model.inert), and NotSamplers lists the samplers it does not work
	// with, OtherModels then saying why.
	ExampleNeighbour string
	NotSamplers      []string
	// ExampleExtra, for a sampler choice, is YAML its example scenarios
	// need besides (e.g. the start from the prior of the exact sampler);
	// a sampler's ExampleData overrides the model's.
	ExampleExtra string
}

// IsChoice reports whether the field is one of the alternatives of the
// model, data or sampler section.
func (f Field) IsChoice() bool {
	parent, _ := splitPath(f.Path)
	return strings.Count(f.Path, ".") == 1 && (parent == "model" || parent == "data" || parent == "sampler")
}

const (
	iterRange   = "[1, 2^40]"
	posRange    = "(0, ∞), finite"
	nonNegRange = "[0, ∞), finite"
	seedRange   = "[0, 18446744073709551615]"
)

// referenceTable is the hand-written part of the reference; Type is
// filled in from the Go types by Reference.
var referenceTable = []Field{
	// Top level.
	{Path: "name", Default: `""`, Range: "any text", Example: "my-audit",
		Meaning: "Names the scenario in reports and output files."},
	{Path: "description", Default: `""`, Range: "any text", Example: `"per-epoch audit of SGLD"`,
		Meaning: "Free text shown in reports."},
	{Path: "seed", Default: "0", Range: seedRange, Example: "1",
		Meaning: "Makes the audit reproducible: trial i on dataset s draws all its randomness from (seed, s, i) only, so workers, shards and resumption never change a result. 0 is a seed like any other."},

	// model
	{Path: "model", Required: "yes", Meaning: "The Bayesian model the sampler targets: exactly one of its keys."},
	// data
	{Path: "data", Required: "yes", Meaning: "The dataset D (and, for the counterexample, D′ too): exactly one of its keys."},
	{Path: "data.counterexample", Models: []string{"linreg"},
		Meaning: "Heller & Fetaya eq. 8: D1 = n copies of (xh, c·xh) and D2 = D1 with one copy replaced by (xh/2, c·xh/2). It defines D′ itself: no neighbour section. Needs model.linreg with dim 1."},
	{Path: "data.counterexample.n", Required: "yes", Range: "[1, 1000000] materialised; up to 2^53 with sampler.exact_cyclic_sgld (≥ 2)", UsedBy: "data.counterexample", Example: "10",
		Meaning: "Number of records n."},
	{Path: "data.counterexample.xh", Required: "yes", Range: posRange, UsedBy: "data.counterexample", Example: "1.8",
		Meaning: "The feature x_h of the n identical records."},
	{Path: "data.counterexample.c", Required: "with sampler.exact_cyclic_sgld", Default: "0", Range: "any finite number; > 0 with sampler.exact_cyclic_sgld", UsedBy: "data.counterexample", Example: "25",
		Meaning: "The slope c: every label is c times its feature."},
	{Path: "data.csv", Models: nil,
		Meaning: "Reads D from a CSV file of numbers (gzip allowed), one record per line: the label column and the features. A held-out test set (test_fraction) serves the accuracy metric only."},
	{Path: "data.csv.path", Required: "yes", Range: "a readable regular file of at most 256 MiB", UsedBy: "data.csv", Example: "digits.csv.gz",
		Meaning: "The file, relative to the scenario file's directory (to the working directory for the built-in scenario)."},
	{Path: "data.csv.preset", Default: `""`, DefaultNote: "no preset: options, or the options' defaults", Range: "digits, breast_cancer", UsedBy: "data.csv", Example: "digits",
		Meaning: "The reading options of a bundled dataset (testdata/DATA.md): digits (64 pixel counts divided by 16, labels 0–9) or breast_cancer (a header line, 30 standardised features, labels 0/1)."},
	{Path: "data.csv.options", DefaultNote: "the preset's options", UsedBy: "data.csv", Example: "{header: true, classes: 2, scale: standardize}",
		Meaning: "How the rows become records; when given it replaces the preset's options as a whole."},
	{Path: "data.csv.options.name", Default: `""`, DefaultNote: "the file's base name", Range: "any text", UsedBy: "data.csv", Example: "digits",
		Meaning: "Name of the dataset in reports."},
	{Path: "data.csv.options.header", Default: "false", Range: "true, false", UsedBy: "data.csv", Example: "true",
		Meaning: "Skip the first line."},
	{Path: "data.csv.options.label_column", Default: "0", DefaultNote: "the last column", Range: "[0, number of columns]", UsedBy: "data.csv", Example: "1",
		Meaning: "1-based column of the label; every other column is a feature, in file order."},
	{Path: "data.csv.options.classes", Default: "0", DefaultNote: "inferred: the largest label + 1", Range: "0 or [2, ∞); 0 with real_labels", UsedBy: "data.csv", Example: "10",
		Meaning: "Number of classes K: every label must be an integer in [0, K)."},
	{Path: "data.csv.options.real_labels", Default: "false", Range: "true, false", UsedBy: "data.csv", Example: "true",
		Meaning: "Accept any finite label (regression data); classes must then be 0."},
	{Path: "data.csv.options.scale", Default: "none", Range: "none, divide, standardize, minmax", UsedBy: "data.csv", Example: "standardize",
		Meaning: "Feature transformation: none; divide by divisor; standardize (zero mean, unit variance per feature); minmax (onto [0, 1] per feature)."},
	{Path: "data.csv.options.divisor", Required: "with data.csv.options.scale = divide", Range: posRange + "; only with scale: divide", UsedBy: "data.csv with scale: divide", Example: "16",
		Meaning: "The divisor of scale: divide."},
	{Path: "data.csv.options.max_records", Default: "1000000", DefaultNote: "0 also means 1000000", Range: "[0, ∞)", UsedBy: "data.csv", Example: "5000",
		Meaning: "Refuse a file of more rows."},
	{Path: "data.csv.test_fraction", Default: "0", DefaultNote: "no test set", Range: "[0, 1)", UsedBy: "data.csv; audit.metrics: [accuracy]", Example: "0.2",
		Meaning: "Fraction of the records held out of D (stratified by class for classifiers) to measure the accuracy of the released models."},
	{Path: "data.csv.seed", Default: "0", Range: seedRange, UsedBy: "data.csv with test_fraction > 0", Example: "1",
		Meaning: "Seed of the held-out split."},
	{Path: "data.csv.sha256", Default: `""`, DefaultNote: "pinned by the run", Range: "64 hexadecimal digits", UsedBy: "data.csv", Example: "\"" + strings.Repeat("0", 64) + "\"",
		Meaning: "The file's SHA-256: a run pins it into the scenario it reports (so shards and merges read the same data), and refuses a file whose digest differs from a given one."},
	{Path: "data.records", Models: nil, Example: "[{x: [0.2, 0.4], y: 0}, {x: [0.9, 0.1], y: 1}, {x: [0.1, 0.8], y: 1}, {x: [0.7, 0.6], y: 0}]",
		Meaning: "The records of D, inline."},
	{Path: "data.records[].x", Required: "yes", Range: "finite numbers, as many as the model's record dimension", UsedBy: "data.records", Example: "[0.2, 0.4]",
		Meaning: "The features of a record."},
	{Path: "data.records[].y", Default: "0", Range: "finite; a class index for logistic, softmax and mlp", UsedBy: "data.records (not read by gauss, banana, mixture)", Example: "1",
		Meaning: "The label of a record."},
	{Path: "data.inert", Models: []string{"inert"},
		Meaning: "n featureless records whose log-likelihood is 0 (model.inert): the ordinary records of a scenario in which only a gradient canary moves anything."},
	{Path: "data.inert.n", Required: "yes", Range: "[1, 1000000]", UsedBy: "data.inert", Example: "1437",
		Meaning: "Number of records."},
	{Path: "data.synthetic_banana", Models: []string{"banana"},
		Meaning: "Draws n records from the banana model's likelihood at θ = theta_star (Räisä et al. (2021) §4.1 use θ = (0, 3))."},
	{Path: "data.synthetic_gauss", Models: []string{"gauss"},
		Meaning: "Draws n records x ~ N(theta_star, Σ) with the Σ of model.gauss."},
	{Path: "data.synthetic_linreg", Models: []string{"linreg"},
		Meaning: "Draws n records for linear regression: x ~ N(0, x_scale²·I), y = theta_starᵀx + N(0, 1/beta)."},
	{Path: "data.synthetic_logistic", Models: []string{"logistic"},
		Meaning: "Draws n records for logistic regression: x ~ N(0, x_scale²·I), y ~ Bernoulli(σ(theta_starᵀx))."},
	{Path: "data.synthetic_mixture", Models: []string{"mixture"},
		Meaning: "Draws n records from the mixture of Heikkilä et al. (2019) eq. 25 at θ = theta_star (the paper draws 10⁶ at θ = (0, 1))."},

	{Path: "threat", Default: "releases", Range: "releases, path", Example: "path",
		Meaning: "What the adversary observes. releases: the released states (the black box). path: every quantity the sampler's privacy proof treats as released, at every iteration (SGLD's noisy updates, DP-HMC's noisy gradients and noisy log-likelihood ratios, the penalty test's noisy ratio, the Barker test's noisy statistic), reduced to the exact log-likelihood ratio of the path under D against D′, which each release point then releases in place of the state (one value, feature theta). Needs neighbour.gradient_canary and sampler sgld, dp_hmc, dp_penalty or dp_barker; the theorem bounds apply to both (they bound the path)."},

	// neighbour
	{Path: "neighbour", Required: "unless data.counterexample or audit.design = canaries",
		Meaning: "How D′ is built from D: one record replaced, removed or added, or a DeepFool canary crafted. Not allowed with data.counterexample, which defines D′ itself."},
	{Path: "neighbour.adjacency", Default: "replace-one", Range: "replace-one, remove-one, add-one", Example: "replace-one",
		Meaning: "replace-one: record index replaced by record; remove-one: record index removed; add-one: record appended (D′ has n + 1 records)."},
	{Path: "neighbour.index", Default: "0", Range: "[0, n − 1]", UsedBy: "replace-one, remove-one", Example: "0",
		Meaning: "The record replaced or removed (0-based); not used by add-one or deepfool."},
	{Path: "neighbour.record", Required: "unless neighbour.adjacency = remove-one or neighbour.deepfool or neighbour.gradient_canary", UsedBy: "replace-one, add-one", Example: "{x: [3], y: -6}",
		Meaning: "The canary: the record that replaces record index, or is added. Its x has the model's record dimension."},
	{Path: "neighbour.record.x", Required: "yes", Range: "finite numbers, as many as the model's record dimension", UsedBy: "neighbour.record", Example: "[3]",
		Meaning: "The canary's features."},
	{Path: "neighbour.record.y", Default: "0", Range: "finite; a class index for classifiers", UsedBy: "neighbour.record", Example: "-6",
		Meaning: "The canary's label."},
	{Path: "neighbour.gradient_canary", UsedBy: "replace-one, add-one; every built-in model", Example: "{slope: 1000000}",
		Meaning: "A gradient canary (Nasr et al. 2023): the model gains a coordinate θ_c with a flat prior that no ordinary record uses, and every record a last feature, its canary sign s ∈ {-1, 0, 1}; a canary's log-likelihood is s·slope·θ_c, so its clipped gradient has the clip bound's norm along θ_c and its clipped log-likelihood ratio sits at the clip bound. Under replace-one record index becomes the canary of sign -1 in D and +1 in D′ (they differ by twice the bound); under add-one D′ adds the canary of sign +1. neighbour.record is not used; init.theta may omit θ_c (it then starts at 0)."},
	{Path: "neighbour.gradient_canary.slope", Default: "1000000", DefaultNote: "0 also means 1000000", Range: "finite, > 0", UsedBy: "neighbour.gradient_canary", Example: "1000000",
		Meaning: "The canary's slope K: larger than every clip bound, so that its contributions sit at the bounds."},
	{Path: "neighbour.deepfool", UsedBy: "model.softmax, model.mlp; replace-one", Example: "{models: 20, canary: {margin: 0.1, clamp: true, lower: 0, upper: 1}}",
		Meaning: "Crafts the canary as Heller & Fetaya §V do: trains models models on D with the scenario's sampler (final states, on random streams of their own), picks a record they all classify correctly and alike, and moves it the least distance that makes every model prefer another class; D′ holds the moved features with the original label."},
	{Path: "neighbour.deepfool.models", Required: "yes", Range: "[1, 10000]", UsedBy: "neighbour.deepfool", Example: "20",
		Meaning: "Size of the ensemble trained on D."},
	{Path: "neighbour.deepfool.sampler", Required: "with sampler.program", DefaultNote: "the scenario's sampler", UsedBy: "neighbour.deepfool", Example: "{sgld: {step: {eta: 0.001}, batch: 32, scheme: reshuffle, epochs: 20}}",
		Meaning: "The built-in sampler that trains the crafting ensemble, written like the sampler section (sgld, ula, dp_penalty, dp_hmc or dp_barker); required when the audited sampler is a program, which the tool cannot use for that. Its fields are those of sampler.*."},
	{Path: "neighbour.deepfool.canary", UsedBy: "neighbour.deepfool", Example: "{margin: 0.1}",
		Meaning: "Margin, feature box and target classes of the crafting."},
	{Path: "neighbour.deepfool.canary.margin", Default: "0.001", DefaultNote: "0 also means 0.001", Range: nonNegRange, UsedBy: "neighbour.deepfool", Example: "0.1",
		Meaning: "Logit margin κ by which every model must prefer the target class at the crafted point (DeepFool's overshoot)."},
	{Path: "neighbour.deepfool.canary.clamp", Default: "false", Range: "true, false", UsedBy: "neighbour.deepfool", Example: "true",
		Meaning: "Keep every crafted feature in [lower, upper] (a constraint of the minimisation, not clipping afterwards)."},
	{Path: "neighbour.deepfool.canary.lower", Default: "0", Range: "any finite number", UsedBy: "neighbour.deepfool with clamp", Example: "0",
		Meaning: "Lower bound of every feature with clamp."},
	{Path: "neighbour.deepfool.canary.upper", Required: "with neighbour.deepfool.canary.clamp = true", Range: "finite, > lower", UsedBy: "neighbour.deepfool with clamp", Example: "1",
		Meaning: "Upper bound of every feature with clamp."},
	{Path: "neighbour.deepfool.canary.targets", Default: "[]", DefaultNote: "every class but the record's", Range: "class indices in [0, classes), not the record's", UsedBy: "neighbour.deepfool", Example: "[3, 8]",
		Meaning: "Candidate target classes; the closest feasible one wins."},
	{Path: "neighbour.deepfool.canary.max_iter", Default: "200", DefaultNote: "0 also means 200", Range: "[0, 10000]", UsedBy: "neighbour.deepfool with model.mlp", Example: "50",
		Meaning: "Linearise-and-solve iterations for models whose logits are not affine in x (the MLP; softmax needs one)."},

	// sampler
	{Path: "sampler", Required: "yes", Meaning: "The sampler (or mechanism) audited: exactly one of its keys."},
	// init
	{Path: "init", DefaultNote: "θ₀ = 0", UsedBy: chainSamplers + ", exact_cyclic_sgld", Example: "{from_prior: true}",
		Meaning: "The chain's starting point θ₀."},
	{Path: "init.from_prior", Default: "false", Range: "true, false", UsedBy: chainSamplers + "; required true by exact_cyclic_sgld", Example: "true",
		Meaning: "Draw θ₀ from the model's prior (as Heller & Fetaya §IV.B do), on the trial's own random stream."},
	{Path: "init.theta", Default: "[]", DefaultNote: "zeros", Range: "d finite numbers (d = the model's dimension)", UsedBy: chainSamplers + " without from_prior", Example: "[0]",
		Meaning: "A fixed starting point."},

	// release
	{Path: "release", Example: "{mode: epochs, every: 5}",
		Meaning: "Which states of a run are released, and so audited: each release point is audited on its own."},
	{Path: "release.mode", Default: "final", Range: "final, epochs, snapshots, trajectory, estimator", Example: "epochs",
		Meaning: "final: the last state; epochs: the state after every every-th epoch (Heller & Fetaya §V); snapshots: the states after the iterations in at; trajectory: every every-th state; estimator: one noisy Monte Carlo estimator (release.estimator; Bertazzi et al. §3.2, eq. 5)."},
	{Path: "release.every", Default: "1", DefaultNote: "0 also means 1", Range: "[0, ∞); at most 100000 release points", UsedBy: "release.mode epochs, trajectory", Example: "5",
		Meaning: "Stride in epochs (epochs) or in iterations (trajectory)."},
	{Path: "release.at", Required: "with release.mode = snapshots", Range: "distinct iterations in [1, the run's length]", UsedBy: "release.mode snapshots", Example: "[50, 200]",
		Meaning: "The iterations after which the state is released (iteration k is the state after k updates)."},
	{Path: "release.estimator", Required: "with release.mode = estimator", UsedBy: "release.mode estimator", Example: "{f: [1], from: 51, to: 100, laplace: 0.5}",
		Meaning: "The released Monte Carlo estimator (1/N)Σ_{n=from}^{to} fᵀθ_n + L, N = to − from + 1, with L Laplace or Gaussian noise (Bertazzi et al. eq. 5); its guarantees are Props. 3.7 and 3.10, computed exactly for ULA and full-batch SGLD on the gauss and linreg models."},
	{Path: "release.estimator.f", Required: "yes", Range: "d finite numbers (d = the model's dimension)", Example: "[1, 0]",
		Meaning: "The weights w of the linear function f(θ) = wᵀθ averaged (a coordinate: a unit vector)."},
	{Path: "release.estimator.from", Required: "yes", Range: "[1, to]", Example: "51",
		Meaning: "The first iteration averaged."},
	{Path: "release.estimator.to", Required: "yes", Range: "[from, the run's length]; at most 100000 iterations averaged", Example: "100",
		Meaning: "The last iteration averaged."},
	{Path: "release.estimator.laplace", Range: "(0, ∞); exactly one of laplace, gaussian", Example: "0.5",
		Meaning: "Scale b of Laplace noise L."},
	{Path: "release.estimator.gaussian", Range: "(0, ∞); exactly one of laplace, gaussian", Example: "0.2",
		Meaning: "Standard deviation σ of Gaussian noise L."},

	// audit
	{Path: "audit", Required: "yes", Meaning: "The statistics of the audit."},
	{Path: "audit.design", Default: "runs", Range: "runs, canaries", Example: "canaries",
		Meaning: "runs: many runs on D and D′, attacks trained and evaluated on them (Heller & Fetaya); canaries: the one-run design of Steinke, Nasr & Jagielski 2023 — canaries each added to D with probability ½ from the seed, one run (or audit.canaries.runs pooled runs), a score per canary (its log-likelihood under the released θ, raw or calibrated: audit.canaries.score), ε_lb and μ_lb from the guesses; adjacency add/remove of one canary. split, features, attacks, attack_selection and the neighbour section are not used there, and are refused if given; trials, if given, must equal audit.canaries.runs (plus audit.canaries.references with a calibrated score)."},
	{Path: "audit.canaries", Required: "with audit.design = canaries", UsedBy: "audit.design canaries", Example: "{count: 1000, kind: mislabel, guesses: 100}",
		Meaning: "The canaries and the attack's guesses of the one-run design."},
	{Path: "audit.canaries.count", Required: "yes", Range: "[2, 1000000]", UsedBy: "audit.design canaries", Example: "1000",
		Meaning: "m, the number of canaries; canary i is in the training data iff the seed's coin S_i = +1."},
	{Path: "audit.canaries.pool", Range: fmt.Sprintf("a regular CSV file (header x1,…,xd,y; the label, a class 0..K-1, last; gzip allowed) of at most %d MiB as stored, %d records and %d feature values, relative to the scenario file's directory; with kind: mislabel in a scenario without data", MaxPoolBytes>>20, MaxPoolRecords, MaxPoolValues), UsedBy: "audit.design canaries with kind mislabel and no data section", Example: "canary-pool.csv",
		Meaning: "Records to draw mislabel canaries from when the program loads its data itself (MNIST test images, say): each canary is a record of the pool (without replacement while they last) with a label drawn uniformly among the other K-1 classes, K inferred from the pool's labels."},
	{Path: "audit.canaries.pool_sha256", Range: "64 hexadecimal digits", UsedBy: "audit.canaries.pool", Example: "9f86d0…",
		Meaning: "The pool file's SHA-256: a file that differs is refused, so an audit is rerun on the same canaries."},
	{Path: "audit.canaries.kind", Required: "yes", Range: canaryKindRange(), UsedBy: "audit.design canaries", Example: "mislabel",
		Meaning: canaryKindMeaning()},
	{Path: "audit.canaries.guesses", DefaultNote: "r = count/10, at least 1, split evenly", Range: "[1, count]", UsedBy: "audit.design canaries", Example: "100",
		Meaning: "r = k+ + k-, fixed in advance: the attack guesses \"in\" for the ⌈r/2⌉ highest scores and \"out\" for the ⌊r/2⌋ lowest. Give guesses, or guesses_plus and guesses_minus, or guess_grid."},
	{Path: "audit.canaries.guesses_plus", DefaultNote: "0", Range: "[0, count]; with guesses_minus, 1 ≤ sum ≤ count", UsedBy: "audit.design canaries", Example: "100",
		Meaning: "k+, fixed in advance: guesses \"in\" for the k+ highest scores."},
	{Path: "audit.canaries.guesses_minus", DefaultNote: "0", Range: "[0, count]; with guesses_plus, 1 ≤ sum ≤ count", UsedBy: "audit.design canaries", Example: "0",
		Meaning: "k-, fixed in advance: guesses \"out\" for the k- lowest scores."},
	{Path: "audit.canaries.guess_grid", Range: "at most 64 values, each in [1, count]", UsedBy: "audit.design canaries", Example: "[50, 100, 200]",
		Meaning: "A grid of r values (each split evenly), all fixed in advance; every pair is tested at α divided by their number (Bonferroni) and the report keeps the best, saying so."},
	{Path: "audit.canaries.runs", DefaultNote: "1", Range: "[1, count]", UsedBy: "audit.design canaries", Example: "4",
		Meaning: "Runs pooled: canary i belongs to run ⌊i·runs/count⌋ only, so the guesses of all runs make one audit of count canaries. Runs shard, checkpoint and resume like trials."},
	{Path: "audit.canaries.slope", DefaultNote: "1e6", Range: "(0, ∞), finite", UsedBy: "kind gradient", Example: "1000000",
		Meaning: "K of gradient canaries: canary i's log-likelihood is K·θ_i on its own coordinate, so its clipped gradient is min(K, C) and its clipped log-likelihood ratio sits at the clip bound when K is large."},
	{Path: "audit.canaries.score", Default: "raw", Range: "raw, calibrated", UsedBy: "audit.design canaries", Example: "calibrated",
		Meaning: "How a canary is scored at a release. raw: its log-likelihood under the released θ (or the program's score, handshake \"scores\": true), which also ranks the canaries by their own difficulty; calibrated: that score minus its mean over audit.canaries.references reference runs of the same sampler on D alone, without any canary (a program gets an all-false mask), each from its own random stream, independent of the coins S. The calibrated score is a function of the releases only, so the bounds hold as for the raw one. The report names the score."},
	{Path: "audit.canaries.references", DefaultNote: "1 with score: calibrated", Range: "[1, 1000]; only with score: calibrated", UsedBy: "audit.canaries.score calibrated", Example: "4",
		Meaning: "R, the reference runs a calibrated score subtracts the mean of. They are trials runs … runs+R−1 of the audit: they shard, checkpoint, resume and count in the work estimate like the runs, and cost as much each."},
	{Path: "audit.canaries.reference_canaries", DefaultNote: "none (with score: calibrated)", Range: "none, all; only with score: calibrated", UsedBy: "audit.canaries.score calibrated", Example: "all",
		Meaning: "What the reference runs train on besides D: none, no canary; all, every canary (a program gets an all-true mask). Either is fixed in advance, whatever the coins S: with all, the references see the canaries' population the run sees (about half of it), so what the canaries do to one another cancels too, not only each one's own difficulty."},
	{Path: "audit.canaries.average_releases", Default: "false", Range: "true, false", UsedBy: "audit.design canaries", Example: "true",
		Meaning: "Score a canary at each release by the mean of its scores (raw or calibrated) at that release and every earlier one: all of them are released, so the mean is a function of what the adversary has seen, and the chain's sampling noise partly averages out while a canary's pull on it persists. With one release it changes nothing."},
	{Path: "audit.canaries.features", Required: "with audit.canaries.range", Range: "[1, 1048576]", UsedBy: "kind random without a data section", Example: "784",
		Meaning: "Number of features of a random canary, for a program that loads its own data."},
	{Path: "audit.canaries.classes", DefaultNote: "0: label 0", Range: "0 or [2, 65536]", UsedBy: "kind random without a data section", Example: "10",
		Meaning: "Random canaries get a uniform label in 0..classes−1."},
	{Path: "audit.canaries.range", Required: "with audit.canaries.features", Range: "[lo, hi], finite, lo < hi", UsedBy: "kind random without a data section", Example: "[0, 1]",
		Meaning: "Every feature of a random canary is uniform on this interval."},
	{Path: "audit.canaries.deepfool", Required: "with audit.canaries.kind = deepfool", UsedBy: "kind deepfool", Example: "{models: 10, canary: {margin: 0.1}}",
		Meaning: "The crafting of deepfool canaries; its fields are those of neighbour.deepfool. Records the models agree on are crafted in order until count canaries are made."},
	{Path: "audit.trials", Required: "unless audit.design = canaries", Range: "[20, 100000000]", Example: "200",
		Meaning: "Total number of runs, on D and D′ together (in the canary design: absent, or audit.canaries.runs plus audit.canaries.references)."},
	{Path: "audit.assignment", Default: "random", Range: "random, balanced", Example: "balanced",
		Meaning: "random: each trial runs on D or D′ by a fair coin (as in Heller & Fetaya); balanced: alternately, half and half."},
	{Path: "audit.split", Required: "unless audit.design = canaries", Example: "{train: 0.5, eval: 0.5}",
		Meaning: "Fractions of the trials that train the attacks, choose their thresholds (select; 0: on the training runs) and count errors (eval). There is no default."},
	{Path: "audit.split.train", Required: "yes", Range: "(0, 1); train + select + eval = 1", Example: "0.5",
		Meaning: "Fraction of trials that train the attacks (A1)."},
	{Path: "audit.split.select", Default: "0", DefaultNote: "thresholds chosen on the training runs", Range: "[0, 1)", Example: "0.25",
		Meaning: "Fraction of trials that choose the attacks' thresholds, in a three-way split."},
	{Path: "audit.split.eval", Required: "yes", Range: "(0, 1)", Example: "0.5",
		Meaning: "Fraction of trials whose errors are counted (A2): the ε lower bound rests on these."},
	{Path: "audit.features", Default: "[theta]", Range: featureRange(), Example: "[theta, loglik]",
		Meaning: featureMeaning()},
	{Path: "audit.metrics", Default: "[]", Range: "accuracy", UsedBy: "classifiers with data.csv test_fraction > 0", Example: "[accuracy]",
		Meaning: "Reported per release besides ε: accuracy of the released models on the held-out test set."},
	{Path: "audit.attacks", Default: "[threshold]", Range: "threshold, linear, logistic, qda", Example: "[threshold, linear]",
		Meaning: "The classifiers telling D's outputs from D′'s: threshold (best single feature and cut), linear (least squares on ±1 labels, Heller & Fetaya §V), logistic, qda."},
	{Path: "audit.attack_selection", Default: "training", Range: "training, bonferroni", Example: "bonferroni",
		Meaning: "training: one attack chosen on the training runs; bonferroni: every attack evaluated, α divided among them."},
	{Path: "audit.point_selection", Default: "training", Range: "training, bonferroni", Example: "bonferroni",
		Meaning: "How the verdict treats several release points: training (one chosen on training runs) or bonferroni (every point tested at α/P)."},
	{Path: "audit.estimators", Default: estimatorDefault(), Range: estimatorRange(), Example: "[region, gdp]",
		Meaning: estimatorMeaning()},
	{Path: "audit.delta", Default: "0", DefaultNote: "pure ε", Range: "[0, 1)", Example: "1.0e-5",
		Meaning: "The δ of the (ε, δ) lower bounds."},
	{Path: "audit.confidence", Required: "yes", Range: "(0, 1)", Example: "0.95",
		Meaning: "Probability with which every reported bound holds (Clopper–Pearson)."},
	{Path: "audit.selection_confidence", Default: "0", DefaultNote: "audit.confidence", Range: "0 or (0, 1)", Example: "0.99999",
		Meaning: "Confidence of the Clopper–Pearson bounds at which each estimator chooses its rule on the training runs, and each claim its rule among theirs on the selection runs. Maximising a bound over many thresholds favours those whose training counts were lucky, mostly in the far tails (the winner's curse); a stricter level such as 0.99999 penalises the tails more and picks rules whose evaluation bound is tighter. The reported bounds keep audit.confidence and their validity: the rules never see the evaluation runs."},
	{Path: "audit.workers", Default: "0", DefaultNote: "one per CPU", Range: "[0, 4096]", Example: "2",
		Meaning: "Concurrent runs; never changes the result."},

	// claim
	{Path: "claim", Example: "{theorems: true}",
		Meaning: "Upper bounds to test: the audit exits 1 when one is refuted. Set epsilon and delta, gdp, and/or theorems."},
	{Path: "claim.epsilon", Required: "with claim.delta", Range: nonNegRange, Example: "1",
		Meaning: "Claimed ε of (ε, δ)-DP; with delta."},
	{Path: "claim.delta", Required: "with claim.epsilon", Range: "[0, 1)", Example: "1.0e-5",
		Meaning: "Claimed δ of (ε, δ)-DP; with epsilon."},
	{Path: "claim.gdp", Range: nonNegRange, Example: "1",
		Meaning: "Claimed μ of μ-GDP (Dong, Roth & Su 2019)."},
	{Path: "claim.theorems", Default: "false", Range: "true, false", Example: "true",
		Meaning: "Test every applicable theoretical upper bound of the papers (see audit bounds)."},
}

// craftingEntries describes neighbour.deepfool.sampler.*: the sampler
// section again, for the crafting ensemble, whose samplers must be
// step-by-step chains.
func craftingEntries(table []Field) []Field {
	const from, to = "sampler.", "neighbour.deepfool.sampler."
	var out []Field
	for _, f := range table {
		if !strings.HasPrefix(f.Path, from) {
			continue
		}
		g := f
		g.Path = to + strings.TrimPrefix(f.Path, from)
		g.Models, g.OtherModels, g.ExampleData, g.ExampleExtra = nil, "", "", ""
		g.UsedBy = "neighbour.deepfool.sampler"
		g.Required = ""
		choice := strings.SplitN(strings.TrimPrefix(f.Path, from), ".", 2)[0]
		switch {
		case !samplerByKey(choice).Chain:
			g.Range, g.Default, g.DefaultNote, g.Example = "not allowed: the crafting models are trained by a step-by-step sampler", "", "", ""
			g.Meaning = "Not allowed here (see sampler." + strings.TrimPrefix(f.Path, from) + ")."
		default:
			if f.Required == "yes" {
				g.Required = "yes"
			}
			if g.Default != "" {
				g.Default, g.DefaultNote = "", "as sampler."+strings.TrimPrefix(f.Path, from)
			}
			g.Meaning = "As sampler." + strings.TrimPrefix(f.Path, from) + ", for the crafting ensemble."
		}
		if strings.Count(g.Path, ".") == 3 {
			g.Group = "crafting sampler"
		}
		out = append(out, g)
	}
	return out
}

// canaryCraftingEntries describes audit.canaries.deepfool.*: the fields
// of neighbour.deepfool again.
func canaryCraftingEntries(table []Field) []Field {
	const from, to = "neighbour.deepfool.", "audit.canaries.deepfool."
	var out []Field
	for _, f := range table {
		if !strings.HasPrefix(f.Path, from) {
			continue
		}
		g := f
		g.Path = to + strings.TrimPrefix(f.Path, from)
		g.UsedBy = strings.ReplaceAll(g.UsedBy, "neighbour.deepfool", "audit.canaries.deepfool")
		g.Required = strings.ReplaceAll(g.Required, "neighbour.deepfool", "audit.canaries.deepfool")
		g.Meaning = "As " + f.Path + ", for the deepfool canaries."
		if g.Default != "" {
			g.Default, g.DefaultNote = "", "as "+f.Path
		}
		out = append(out, g)
	}
	return out
}

// syntheticFields are the fields shared by the data.synthetic_* choices;
// each choice uses only some of them (the others are refused).
var syntheticFields = map[string]struct {
	theta, thetaEx, nEx string
	beta, xScale        bool
}{
	"synthetic_linreg":   {"the model's dim values", "[0.5]", "20", true, true},
	"synthetic_logistic": {"the model's dim values", "[1.5, -1]", "20", false, true},
	"synthetic_gauss":    {"d values (the dimension of Σ)", "[0.5, -0.5]", "20", false, false},
	"synthetic_banana":   {"2 values", "[0, 3]", "20", false, false},
	"synthetic_mixture":  {"2 values (θ₁, θ₂)", "[0, 1]", "20", false, false},
}

func syntheticEntries() []Field {
	var out []Field
	for _, kind := range []string{"synthetic_banana", "synthetic_gauss", "synthetic_linreg", "synthetic_logistic", "synthetic_mixture"} {
		s := syntheticFields[kind]
		p := "data." + kind
		out = append(out,
			Field{Path: p + ".n", Required: "yes", Range: "[1, 1000000]", UsedBy: p, Example: s.nEx,
				Meaning: "Number of records."},
			Field{Path: p + ".theta_star", Required: "yes", Range: s.theta, UsedBy: p, Example: s.thetaEx,
				Meaning: "The parameter θ* the records are drawn at."},
			Field{Path: p + ".seed", Default: "0", Range: seedRange, UsedBy: p, Example: "3",
				Meaning: "Seed of the draw: the same seed gives the same dataset."},
		)
		beta := Field{Path: p + ".beta", UsedBy: p, Meaning: "Noise precision of the labels."}
		if s.beta {
			beta.Default, beta.DefaultNote, beta.Range, beta.Example = "0", "model.linreg.beta", posRange, "2"
		} else {
			beta.Range, beta.UsedBy = "not allowed", "none"
			beta.Meaning = "Not used by " + kind + " (only synthetic_linreg has label noise); setting it is an error."
		}
		xs := Field{Path: p + ".x_scale", UsedBy: p, Meaning: "Standard deviation of every feature: x ~ N(0, x_scale²·I)."}
		if s.xScale {
			xs.Default, xs.DefaultNote, xs.Range, xs.Example = "1", "0 also means 1", posRange, "2"
		} else {
			xs.Range, xs.UsedBy = "not allowed", "none"
			xs.Meaning = "Not used by " + kind + " (only synthetic_linreg and synthetic_logistic scale their features); setting it is an error."
		}
		out = append(out, beta, xs)
	}
	return out
}

var reference = sync.OnceValue(func() []Field {
	all := append(append([]Field(nil), referenceTable...), syntheticEntries()...)
	all = append(all, samplerDocs()...)
	all = append(all, modelDocs()...)
	all = append(all, craftingEntries(all)...)
	all = append(all, canaryCraftingEntries(all)...)
	for i := range all {
		t, ok := typeAt(all[i].Path)
		if !ok {
			// Reported by TestReferenceCoversEveryField; the entry keeps
			// an empty type meanwhile.
			continue
		}
		all[i].Type = typeText(t)
	}
	// Each entry's order key is computed once, not at every comparison.
	keyed := make([]keyedField, len(all))
	for i, f := range all {
		keyed[i] = keyedField{fieldOrder(f.Path), f}
	}
	slices.SortStableFunc(keyed, func(a, b keyedField) int { return strings.Compare(a.key, b.key) })
	for i := range keyed {
		all[i] = keyed[i].f
	}
	return all
})

// keyedField is a reference entry with its fieldOrder key.
type keyedField struct {
	key string
	f   Field
}

// fieldOrder sorts the reference in the order of the Config types (every
// field after its parent, siblings in declaration order), so that the
// document reads like a scenario.
func fieldOrder(path string) string {
	var key strings.Builder
	t := reflect.TypeOf(Config{})
	for _, seg := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(seg, "[]")
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			key.WriteString("~")
			break
		}
		idx, ok := yamlFields(t).index[name]
		if !ok {
			key.WriteString("~")
			break
		}
		// Choices keep the table's (alphabetical) order, other fields
		// the declaration order.
		if choiceSections[t] {
			fmt.Fprintf(&key, "%s/", name)
		} else {
			fmt.Fprintf(&key, "%03d/", idx)
		}
		t = t.Field(idx).Type
		if list {
			key.WriteString("[]")
		}
	}
	return key.String()
}

// Reference returns the scenario reference: one entry per field reachable
// from Config, parents before their fields.
func Reference() []Field { return append([]Field(nil), reference()...) }

// Lookup returns the reference entry of a field path (list items as
// "[]", e.g. "data.records[].x").
func Lookup(path string) (Field, bool) {
	i, ok := referenceIndex()[path]
	if !ok {
		return Field{}, false
	}
	return reference()[i], true
}

// referenceIndex maps each path of the reference to its first entry.
var referenceIndex = sync.OnceValue(func() map[string]int {
	ref := reference()
	idx := make(map[string]int, len(ref))
	for i := len(ref) - 1; i >= 0; i-- {
		idx[ref[i].Path] = i
	}
	return idx
})

// typeAt returns the Go type of the field at a reference path.
func typeAt(path string) (reflect.Type, bool) {
	t := reflect.TypeOf(Config{})
	for _, seg := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(seg, "[]")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil, false
		}
		idx, ok := yamlFields(t).index[name]
		if !ok {
			return nil, false
		}
		t = t.Field(idx).Type
		if list {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Slice {
				return nil, false
			}
			t = t.Elem()
		}
	}
	return t, true
}

// fieldPaths lists every field path reachable from Config by its Go
// types, list items as "[]".
func fieldPaths() []string {
	var out []string
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			fs := yamlFields(t)
			for _, name := range fs.names {
				p := join(path, name)
				out = append(out, p)
				walk(t.Field(fs.index[name]).Type, p)
			}
		case reflect.Slice:
			if e := t.Elem(); e.Kind() == reflect.Struct || (e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct) {
				walk(e, path+"[]")
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	return out
}
