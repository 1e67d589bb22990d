package scenario

import (
	"reflect"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// SamplerConfig chooses the sampler: exactly one field is set.
type SamplerConfig struct {
	SGLD          *mechanisms.SGLD          `yaml:"sgld,omitempty" json:"sgld,omitempty"`
	ULA           *mechanisms.ULA           `yaml:"ula,omitempty" json:"ula,omitempty"`
	DPPenalty     *mechanisms.DPPenalty     `yaml:"dp_penalty,omitempty" json:"dp_penalty,omitempty"`
	DPHMC         *mechanisms.DPHMC         `yaml:"dp_hmc,omitempty" json:"dp_hmc,omitempty"`
	DPBarker      *mechanisms.DPBarker      `yaml:"dp_barker,omitempty" json:"dp_barker,omitempty"`
	GaussianQuery *mechanisms.GaussianQuery `yaml:"gaussian_query,omitempty" json:"gaussian_query,omitempty"`
	// ExactCyclicSGLD samples cyclic batch-1 SGLD on the counterexample
	// exactly at epoch boundaries (any n, nothing materialised).
	ExactCyclicSGLD *ExactCyclicSGLD `yaml:"exact_cyclic_sgld,omitempty" json:"exact_cyclic_sgld,omitempty"`
	// Program is a sampler that is a program in any language speaking the
	// line protocol mcmcaudit/1 (docs/protocol.md).
	Program *ProgramSampler `yaml:"program,omitempty" json:"program,omitempty"`
}

// ExactCyclicSGLD configures mechanisms.ExactCounterexample: the step η
// (η = k/s² with eta_scale k, or eta directly) and the number of epochs.
type ExactCyclicSGLD struct {
	Eta      float64 `yaml:"eta,omitempty" json:"eta,omitempty"`
	EtaScale float64 `yaml:"eta_scale,omitempty" json:"eta_scale,omitempty"`
	Epochs   int     `yaml:"epochs" json:"epochs"`
}

// samplerEntry registers a sampler: its key is the YAML name of its field
// in SamplerConfig (the field's type decodes, validates — its Check — and,
// for a step-by-step sampler, is the mechanisms.Sampler that runs), and
// the entry holds the rest: what kind of sampler it is and its reference
// entries (sampler.KEY and its fields; docs/scenario.md, the JSON schema
// and "audit run --explain" are written from them). Adding a sampler is a
// field of SamplerConfig and its entry here, besides its implementation.
type samplerEntry struct {
	// Key is the sampler's YAML key.
	Key string
	// Chain reports a step-by-step sampler that starts from init and can
	// train the crafting ensemble of a DeepFool canary.
	Chain bool
	// Docs are the reference's entries of sampler.KEY and its fields.
	Docs []Field
}

// samplerRegistry lists the samplers in the order of SamplerConfig's
// fields.
var samplerRegistry = []samplerEntry{
	{Key: "sgld", Chain: true, Docs: append([]Field{
		{Path: "sampler.sgld", Example: "{step: {eta: 0.05}, batch: 1, scheme: cyclic, epochs: 2}",
			Meaning: "Stochastic gradient Langevin dynamics (Welling & Teh 2011) in the form of Heller & Fetaya eq. 3: θ ← θ + (η_t/2)(∇ln p(θ) + (n/b)Σ_batch g_i) + √η_t·ξ, with g_i the per-record gradients (clipped for DP-SGLD, Heller & Fetaya eq. 66)."},
		{Path: "sampler.sgld.step", Required: "yes", UsedBy: "sampler.sgld", Example: "{eta: 0.05}",
			Meaning: "The step schedule η_t = eta·(b/(b + t))^gamma (the polynomial decay of Welling & Teh 2011, normalised so that η₀ = eta); gamma 0 is a constant step."},
		{Path: "sampler.sgld.step.eta", Required: "yes", Range: posRange, UsedBy: "sampler.sgld", Example: "0.05",
			Meaning: "The first step size η₀."},
		{Path: "sampler.sgld.step.b", Required: "unless sampler.sgld.step.gamma = 0", Range: posRange + "; with gamma > 0", UsedBy: "sampler.sgld with gamma > 0", Example: "100",
			Meaning: "The offset b of the decay."},
		{Path: "sampler.sgld.step.gamma", Default: "0", DefaultNote: "a constant step", Range: "[0, 1]", UsedBy: "sampler.sgld", Example: "0.55",
			Meaning: "The decay exponent γ."},
		{Path: "sampler.sgld.batch", Required: "yes", Range: "[1, n]", UsedBy: "sampler.sgld", Example: "1",
			Meaning: "Minibatch size b (the expected size with poisson)."},
		{Path: "sampler.sgld.scheme", Required: "yes", Range: "with-replacement, without-replacement, poisson, reshuffle, cyclic", UsedBy: "sampler.sgld", Example: "cyclic",
			Meaning: "How minibatches are drawn: b indices i.i.d. (with-replacement, Heller & Fetaya eq. 3); b distinct indices afresh each iteration (without-replacement); each record with probability b/n (poisson); consecutive batches of a new permutation every epoch (reshuffle); or of one permutation drawn once (cyclic, Heller & Fetaya §III.B)."},
		{Path: "sampler.sgld.epochs", Group: "sgld length", Range: "[1, ∞), epochs·⌈n/b⌉ ≤ 2^40", UsedBy: "sampler.sgld", Example: "2",
			Meaning: "Run length in epochs of ⌈n/b⌉ iterations. Exactly one of epochs and iterations."},
		{Path: "sampler.sgld.iterations", Group: "sgld length", Range: iterRange, UsedBy: "sampler.sgld", Example: "100",
			Meaning: "Run length in iterations. Exactly one of epochs and iterations."},
		{Path: "sampler.sgld.clip", Default: "0", DefaultNote: "no clipping", Range: nonNegRange, UsedBy: "sampler.sgld", Example: "1",
			Meaning: "Per-record gradient clipping norm C: g_i/max(1, ‖g_i‖/C), the DP-SGLD step of Heller & Fetaya eq. 66."},
		{Path: "sampler.sgld.n", DefaultNote: "the dataset's size", Range: "[batch, 2^40]; scheme poisson only", UsedBy: "sampler.sgld", Example: "1438",
			Meaning: "The public dataset size: the Poisson rate b/n and the gradient scale n/b use it whatever the size of the dataset a run is given, so that add/remove neighbours (neighbour.adjacency add-one) share them, as the add/remove accountants of the Poisson subsampled Gaussian need; claim.theorems then tests those accountants (without it they do not apply to add-one pairs)."},
		{Path: "sampler.sgld.noise_variance", Default: "1", DefaultNote: "the algorithm; 0 also means 1", Range: nonNegRange, UsedBy: "sampler.sgld", Example: "0.5",
			Meaning: "Scales the injected noise variance (noise √(noise_variance·η_t)·ξ). Values other than 1 deviate from SGLD on purpose, to plant a bug an audit must find. With sampler.sgld.plant.noise = f as well the factors combine: the noise is f·√(noise_variance·η_t)·ξ, of variance f²·noise_variance·η_t."},
	}, plantDocs("sgld", plantDoc{
		noise: "the standard deviation √(noise_variance·η_t) of the injected noise (f multiplies it on top of noise_variance: variance f²·noise_variance·η_t)",
		clip:  "the gradient clip bound C (only when sampler.sgld.clip > 0)", clipUsedBy: "sampler.sgld with clip > 0",
		rate: "the Poisson inclusion probability b/n (only with scheme poisson; the gradient sum keeps its declared scale n/b, and b/n × f must stay ≤ 1)", rateUsedBy: "sampler.sgld with scheme poisson",
	})...)},
	{Key: "ula", Chain: true, Docs: append([]Field{
		{Path: "sampler.ula", Example: "{gamma: 0.01, iterations: 20}",
			Meaning: "The unadjusted Langevin algorithm of Bertazzi et al. eq. 12 with the full gradient, x ← x − γ∇U(x) + √(2γ)·z, optionally projected onto a ball (noisy projected gradient descent, Balle et al. Thm 5)."},
		{Path: "sampler.ula.gamma", Required: "yes", Range: posRange, UsedBy: "sampler.ula", Example: "0.01",
			Meaning: "The step size γ."},
		{Path: "sampler.ula.iterations", Required: "yes", Range: iterRange, UsedBy: "sampler.ula", Example: "20",
			Meaning: "Number of iterations."},
		{Path: "sampler.ula.radius", Default: "0", DefaultNote: "no projection", Range: nonNegRange, UsedBy: "sampler.ula", Example: "5",
			Meaning: "Radius of the ball every state is projected onto."},
		{Path: "sampler.ula.center", Default: "[]", DefaultNote: "the origin", Range: "d finite numbers (d = the model's dimension)", UsedBy: "sampler.ula with radius > 0", Example: "[0]",
			Meaning: "Centre of the projection ball."},
	}, plantDocs("ula", plantDoc{
		noise: "the standard deviation √(2γ) of the injected noise",
		clip:  "", rate: "",
		noClip: "ULA does not clip", noRate: "ULA uses the full gradient and does not subsample",
	})...)},
	{Key: "dp_penalty", Chain: true, Docs: append([]Field{
		{Path: "sampler.dp_penalty", Example: "{iterations: 10, proposal_sd: [0.2], clip_llr: 3, tau: 3}",
			Meaning: "The DP penalty algorithm (Yildirim & Ermis 2019) as Räisä et al. (2021) §3 state it: random-walk Metropolis–Hastings whose acceptance test uses clipped log-likelihood ratios plus Gaussian noise; each iteration is a Gaussian mechanism (their Thm 2.4)."},
		{Path: "sampler.dp_penalty.iterations", Required: "yes", Range: iterRange, UsedBy: "sampler.dp_penalty", Example: "10",
			Meaning: "Number of iterations k."},
		{Path: "sampler.dp_penalty.proposal_sd", Required: "yes", Range: "1 or d positive finite numbers (d = the model's dimension)", UsedBy: "sampler.dp_penalty", Example: "[0.2]",
			Meaning: "Random-walk standard deviation: one value for every coordinate, or one per coordinate."},
		{Path: "sampler.dp_penalty.clip_llr", Required: "yes", Range: posRange + "; .inf allowed with no_noise", UsedBy: "sampler.dp_penalty", Example: "3",
			Meaning: "b_l: per-record log-likelihood ratios are clipped to ±b_l‖θ′ − θ‖."},
		{Path: "sampler.dp_penalty.tau", Required: "unless sampler.dp_penalty.no_noise = true", Range: posRange + "; 0 with no_noise", UsedBy: "sampler.dp_penalty", Example: "3",
			Meaning: "τ_l, the noise level: σ_l = 2τ_l·b_l‖θ′ − θ‖."},
		{Path: "sampler.dp_penalty.tau_scale", Default: "paper", Range: "paper, sqrt-n", UsedBy: "sampler.dp_penalty", Example: "sqrt-n",
			Meaning: "paper: tau is the paper's τ; sqrt-n: the authors' code convention, τ = tau·√n."},
		{Path: "sampler.dp_penalty.no_noise", Default: "false", Range: "true, false", UsedBy: "sampler.dp_penalty", Example: "true",
			Meaning: "Switch the noise off: random-walk MH with clipped ratios, not private (tau must be 0)."},
	}, plantDocs("dp_penalty", plantDoc{
		noise: "the acceptance noise σ_l = 2τ_l·b_l‖θ′ − θ‖, in the noise and in its σ_l²/2 correction (not with no_noise)", noiseUsedBy: "sampler.dp_penalty without no_noise",
		clip: "the ratio clip bound b_l; σ_l keeps the declared b_l", clipUsedBy: "sampler.dp_penalty with a finite clip_llr",
		noRate: "DP-penalty uses the full data in every iteration",
	})...)},
	{Key: "dp_hmc", Chain: true, Docs: append([]Field{
		{Path: "sampler.dp_hmc", Example: "{iterations: 5, step: 0.05, leapfrog_steps: 3, clip_llr: 3, clip_grad: 3, tau_l: 4, tau_g: 15}",
			Meaning: "DP-HMC, Algorithm 1 of Räisä et al. (2021): Hamiltonian Monte Carlo with clipped, noisy gradients and a penalty acceptance test; a run of k iterations is μ-GDP with μ² = k/τ_l² + k(L+1)/τ_g² (their Thm 3.5)."},
		{Path: "sampler.dp_hmc.iterations", Required: "yes", Range: iterRange, UsedBy: "sampler.dp_hmc", Example: "5",
			Meaning: "Number of iterations k."},
		{Path: "sampler.dp_hmc.step", Required: "yes", Range: posRange, UsedBy: "sampler.dp_hmc", Example: "0.05",
			Meaning: "Leapfrog step size η."},
		{Path: "sampler.dp_hmc.leapfrog_steps", Required: "yes", Range: "[1, 100000]", UsedBy: "sampler.dp_hmc", Example: "3",
			Meaning: "Leapfrog steps L per iteration."},
		{Path: "sampler.dp_hmc.mass", Default: "[1]", DefaultNote: "the identity; [] also means it", Range: "1 or d positive finite numbers (d = the model's dimension)", UsedBy: "sampler.dp_hmc", Example: "[1]",
			Meaning: "Diagonal of the mass matrix M: one value for every coordinate, or one per coordinate."},
		{Path: "sampler.dp_hmc.step_jitter", Default: "none", Range: "none, halton", UsedBy: "sampler.dp_hmc", Example: "halton",
			Meaning: "none: a constant η; halton: η times the i-th point of a randomised Halton sequence, as in the authors' experiments."},
		{Path: "sampler.dp_hmc.clip_llr", Required: "yes", Range: posRange + "; .inf allowed with no_noise", UsedBy: "sampler.dp_hmc", Example: "3",
			Meaning: "b_l: per-record log-likelihood ratios are clipped to ±b_l‖θ′ − θ‖."},
		{Path: "sampler.dp_hmc.clip_grad", Required: "yes", Range: posRange + "; .inf allowed with no_noise", UsedBy: "sampler.dp_hmc", Example: "3",
			Meaning: "b_g: the norm bound of every per-record gradient."},
		{Path: "sampler.dp_hmc.tau_l", Required: "unless sampler.dp_hmc.no_noise = true", Range: posRange + "; 0 with no_noise", UsedBy: "sampler.dp_hmc", Example: "4",
			Meaning: "τ_l, the noise level of the acceptance test."},
		{Path: "sampler.dp_hmc.tau_g", Required: "unless sampler.dp_hmc.no_noise = true", Range: posRange + "; 0 with no_noise", UsedBy: "sampler.dp_hmc", Example: "15",
			Meaning: "τ_g, the noise level of the gradients: σ_g = 2·b_g·τ_g."},
		{Path: "sampler.dp_hmc.tau_scale", Default: "paper", Range: "paper, sqrt-n", UsedBy: "sampler.dp_hmc", Example: "sqrt-n",
			Meaning: "paper: tau_l and tau_g are the paper's τ; sqrt-n: the authors' code convention, τ = tau·√n."},
		{Path: "sampler.dp_hmc.no_noise", Default: "false", Range: "true, false", UsedBy: "sampler.dp_hmc", Example: "true",
			Meaning: "Switch all noise off: plain HMC with clipping, not private (tau_l and tau_g must be 0)."},
	}, plantDocs("dp_hmc", plantDoc{
		noise: "both noise standard deviations, σ_g = 2b_g·τ_g of the gradients and σ_l = 2τ_l·b_l‖θ′ − θ‖ of the acceptance test (with its σ_l²/2 correction; not with no_noise)", noiseUsedBy: "sampler.dp_hmc without no_noise",
		clip: "both clip bounds, b_g and b_l; σ_g and σ_l keep the declared bounds", clipUsedBy: "sampler.dp_hmc with finite clip bounds",
		noRate: "DP-HMC uses the full data in every iteration",
	})...)},
	{Key: "dp_barker", Chain: true, Docs: append([]Field{
		{Path: "sampler.dp_barker", Example: "{step: 0.05, iterations: 50, batch: 2}",
			Meaning: "DP MCMC with the Barker acceptance test of Heikkilä et al. (2019) §3: random-walk proposals accepted by a noisy Barker test on the full data (batch: 0, Thm 1) or on minibatches (Thm 2), with clipped log-likelihood ratios; exact: true gives the non-private exact test of eq. 5."},
		{Path: "sampler.dp_barker.step", Required: "yes", Range: posRange, UsedBy: "sampler.dp_barker", Example: "0.05",
			Meaning: "Standard deviation of the Gaussian random-walk proposal in each coordinate."},
		{Path: "sampler.dp_barker.iterations", Required: "yes", Range: iterRange, UsedBy: "sampler.dp_barker", Example: "50",
			Meaning: "Number of proposals in a run."},
		{Path: "sampler.dp_barker.batch", Default: "0", DefaultNote: "the full-data test", Range: "0, or [2, n]", UsedBy: "sampler.dp_barker", Example: "2",
			Meaning: "Minibatch size b of the subsampled test."},
		{Path: "sampler.dp_barker.n0", Default: "0", DefaultNote: "n, the size of the dataset run on (D′ has n + 1 records under add-one): no tempering", Range: "(0, n]", UsedBy: "sampler.dp_barker", Example: "20",
			Meaning: "Tempered effective sample size: the log-likelihood is scaled by τ = n0/n (eq. 23)."},
		{Path: "sampler.dp_barker.c", Default: "2", DefaultNote: "the paper's value (§3.3); must stay unset with exact", Range: "(0, π²/3); unset with exact", UsedBy: "sampler.dp_barker", Example: "2",
			Meaning: "Variance C of the Gaussian part of the test."},
		{Path: "sampler.dp_barker.clip", Default: "0", DefaultNote: "√b/n0 for the subsampled test (eqs. 19, 23, with n0's default for the dataset run on), none for the full-data test", Range: posRange, UsedBy: "sampler.dp_barker", Example: "0.5",
			Meaning: "Every per-record log-likelihood ratio is clipped to [−clip, clip] before scaling."},
		{Path: "sampler.dp_barker.no_clip", Default: "false", Range: "true, false; not with clip", UsedBy: "sampler.dp_barker", Example: "true",
			Meaning: "Disable clipping (a non-private baseline, or a planted bug)."},
		{Path: "sampler.dp_barker.variance_limit", Default: "0", DefaultNote: "c", Range: "(0, c]; only with batch ≥ 2", UsedBy: "sampler.dp_barker with batch ≥ 2", Example: "1",
			Meaning: "Largest minibatch variance estimate s²_Δ* the subsampled test accepts (eq. 15)."},
		{Path: "sampler.dp_barker.on_variance_failure", Default: "reject", Range: "reject, error", UsedBy: "sampler.dp_barker with batch ≥ 2", Example: "error",
			Meaning: "What an iteration whose variance estimate exceeds the limit does: reject its proposal, or end the run with an error."},
		{Path: "sampler.dp_barker.exact", Default: "false", Range: "true, false; batch 0 and c unset", UsedBy: "sampler.dp_barker", Example: "true",
			Meaning: "Use the non-private exact Barker test of eq. 5 (full data only)."},
	}, plantDocs("dp_barker", plantDoc{
		noise: "the test noise N(0, C − s²) + V_cor, which is multiplied by f (not with exact)", noiseUsedBy: "sampler.dp_barker without exact",
		clip: "the resolved clip bound of the log-likelihood ratios (the scaling and the variance limit keep their declared values)", clipUsedBy: "sampler.dp_barker with clipped ratios (batch ≥ 2 or clip set, and no no_clip)",
		noRate: "the subsampled test's batch size b sets its scaling N0/b and its variance check; a planted rate is not supported",
	})...)},
	{Key: "gaussian_query", Chain: false, Docs: []Field{
		{Path: "sampler.gaussian_query", Models: []string{"linreg", "logistic", "gauss", "banana", "inert"}, OtherModels: "the Gaussian query releases a record-sized sum",
			Example: "{sigma: 1}",
			Meaning: "Not a sampler: the Gaussian mechanism on the sum of the records, Σ clip(x_i) + N(0, sigma²·I), of known privacy — exactly μ-GDP with μ = ‖Δ‖/σ for sums differing by Δ (Dong, Roth & Su 2019, Thm 2.7) — to check the audit itself. The model only sets the dimension, which must equal the records'."},
		{Path: "sampler.gaussian_query.sigma", Required: "yes", Range: posRange, UsedBy: "sampler.gaussian_query", Example: "1",
			Meaning: "Standard deviation σ of the noise."},
		{Path: "sampler.gaussian_query.clip", Default: "0", DefaultNote: "no clipping", Range: nonNegRange, UsedBy: "sampler.gaussian_query", Example: "1",
			Meaning: "Each record's x is scaled to norm at most clip before summing."},
	}},
	{Key: "exact_cyclic_sgld", Chain: false, Docs: []Field{
		{Path: "sampler.exact_cyclic_sgld", Models: []string{"linreg"}, OtherModels: "needs data.counterexample and a one-dimensional model.linreg",
			ExampleData: "data.counterexample", ExampleExtra: "init: {from_prior: true}", Example: "{eta_scale: 1, epochs: 5}",
			Meaning: "Cyclic batch-1 SGLD on the counterexample of Heller & Fetaya §IV.B, sampled exactly at epoch boundaries from its closed form (any n, nothing materialised). Needs model.linreg with dim 1, data.counterexample, init.from_prior: true and epoch releases (or final)."},
		{Path: "sampler.exact_cyclic_sgld.eta", Group: "exact step", Range: "(0, 2/s), s = alpha + n·xh²·beta", UsedBy: "sampler.exact_cyclic_sgld", Example: "0.001",
			Meaning: "The step size η. Exactly one of eta and eta_scale."},
		{Path: "sampler.exact_cyclic_sgld.eta_scale", Group: "exact step", Range: "(0, 2s), s = alpha + n·xh²·beta", UsedBy: "sampler.exact_cyclic_sgld", Example: "1",
			Meaning: "The step as η = eta_scale/s², s = alpha + n·xh²·beta (2 in Heller & Fetaya §IV.B, 1 in their Claim IV.9). Exactly one of eta and eta_scale."},
		{Path: "sampler.exact_cyclic_sgld.epochs", Required: "yes", Range: "[1, 1000000]", UsedBy: "sampler.exact_cyclic_sgld", Example: "5",
			Meaning: "Number of epochs of the run."},
	}},
	{Key: "program", Chain: false, Docs: []Field{
		{Path: "sampler.program", Example: "{command: [python3, my_sampler.py], timeout: 120s}",
			Meaning: "A sampler that is a program in any language, speaking the line protocol mcmcaudit/1 (docs/protocol.md): it prints a handshake (dimension, release labels), then answers one JSON line per trial {\"trial\", \"side\", \"seed\"} with its releases. With data and neighbour sections the tool writes D, D′ (and the test set, and a DeepFool canary) to files named in MCMCAUDIT_D, MCMCAUDIT_DPRIME, MCMCAUDIT_TEST and MCMCAUDIT_CANARY; without them the program owns its data and the model section may be left out. Features other than theta, norm and coord:K read a release as the model's parameters and need a model of the program's dimension. The example of command is a POSIX shell one-liner that releases the trial's seed whatever the dataset (ε = 0)."},
		{Path: "sampler.program.command", Required: "yes", Range: "a program and its arguments; a relative path is relative to dir", UsedBy: "sampler.program", Example: `[sh, -c, 'echo "{\"mcmcaudit\": 1, \"dim\": 1, \"releases\": [\"final\"]}"; while read -r l; do t=${l#*\"trial\": }; s=${l##*\"seed\": }; echo "{\"trial\": ${t%%,*}, \"releases\": [[${s%\}}]]}"; done']`,
			Meaning: "The command that starts the program; long-lived processes serve many trials each (one per worker)."},
		{Path: "sampler.program.dir", Default: "\"\"", DefaultNote: "the scenario file's directory", Range: "a directory, relative to the scenario file's", UsedBy: "sampler.program", Example: "examples/python",
			Meaning: "The program's working directory."},
		{Path: "sampler.program.env", Default: "{}", Range: "variable names without '=' and not starting MCMCAUDIT_", UsedBy: "sampler.program", Example: "{OMP_NUM_THREADS: \"1\"}",
			Meaning: "Environment variables added to the program's."},
		{Path: "sampler.program.timeout", Default: "60s", Range: "a duration in (0, 24h], e.g. 90s, 5m", UsedBy: "sampler.program", Example: "120s",
			Meaning: "The longest a trial (or the handshake) may take; a program past it has its process group killed and the trial is retried."},
		{Path: "sampler.program.retries", Default: "2", DefaultNote: "omitted means 2; 0 for none, a single attempt", Range: "[0, 100]", UsedBy: "sampler.program", Example: "1",
			Meaning: "Further attempts of a trial after a crash or a timeout, each in another process; then the audit stops with the trial, side, seed and the program's last stderr lines."},
		{Path: "sampler.program.determinism_checks", Default: "4", DefaultNote: "omitted means 4; 0 disables", Range: "[0, 1000]", UsedBy: "sampler.program", Example: "2",
			Meaning: "Trials, spread over the audit, also run in a fresh process: their releases must be identical bit for bit, or the program is refused (results must not depend on the worker count or shard layout)."},
		{Path: "sampler.program.allow_repeated_releases", Default: "false", Range: "true or false", UsedBy: "sampler.program", Example: "true",
			Meaning: "Accept trials on one dataset whose releases (every coordinate of every release point) repeat another trial's bit for bit more often than independent runs would at the values' resolution (float32 values repeat by chance; the limit is stated at level 10⁻⁶). Every trial gets its own seed, so by default such repeats refuse the audit (exit 2) as the sign of a program that ignores its seed; set it for a program whose output is discrete or coarser than its values show, and the report then counts the repeats. Repeats within the limit never refuse; the report counts them."},
		{Path: "sampler.program.test_size", Default: "0", DefaultNote: "the program holds no test set", Range: "[0, 1000000000]; omitted when data.csv.test_fraction splits one off", UsedBy: "sampler.program with audit.metrics: [accuracy]", Example: "10000",
			Meaning: "The size of a test set the program loads itself (MNIST's 10,000 test images, say): with audit.metrics: [accuracy], the program answers each trial with info.correct, per release point the number of those records its release classifies correctly, and the report shows correct / test_size as the test accuracy."},
		{Path: "sampler.program.datasets", Range: "only without a data section", UsedBy: "sampler.program", Example: "{d: {name: D, records: 3}, d_prime: {name: D′, records: 3}, adjacency: replace-one, note: record 2 differs}",
			Meaning: "For the reports only: the datasets the program gets from elsewhere than the scenario (the Python package's audit(d=..., d_prime=...) writes it), by name and number of records, and how they differ as the caller states it. The audit neither reads nor checks them; without this section the report says the program owns its data."},
		{Path: "sampler.program.datasets.d", Required: "yes", UsedBy: "sampler.program.datasets", Example: "{name: D, records: 3}",
			Meaning: "D: its name and number of records."},
		{Path: "sampler.program.datasets.d.name", Required: "yes", Range: "1 to 200 printable characters", UsedBy: "sampler.program.datasets", Example: "D",
			Meaning: "The dataset's name in the reports."},
		{Path: "sampler.program.datasets.d.records", Required: "yes", Range: "[0, ∞)", UsedBy: "sampler.program.datasets", Example: "3",
			Meaning: "The dataset's number of records."},
		{Path: "sampler.program.datasets.d_prime", Required: "yes", UsedBy: "sampler.program.datasets", Example: "{name: D′, records: 3}",
			Meaning: "D′: its name and number of records."},
		{Path: "sampler.program.datasets.d_prime.name", Required: "yes", Range: "1 to 200 printable characters", UsedBy: "sampler.program.datasets", Example: "D′",
			Meaning: "The dataset's name in the reports."},
		{Path: "sampler.program.datasets.d_prime.records", Required: "yes", Range: "[0, ∞)", UsedBy: "sampler.program.datasets", Example: "3",
			Meaning: "The dataset's number of records."},
		{Path: "sampler.program.datasets.adjacency", Range: "replace-one, remove-one, add-one (omitted: not stated)", UsedBy: "sampler.program.datasets", Example: "replace-one",
			Meaning: "How D′ differs from D, as the caller states it."},
		{Path: "sampler.program.datasets.note", Range: "at most 200 printable characters", UsedBy: "sampler.program.datasets", Example: "record 2 differs",
			Meaning: "More on how they differ, shown after the adjacency."},
	}},
}

// plantDoc holds what a sampler's planted factors multiply (empty: the
// field never applies, for the reason in noClip or noRate) and which
// configurations they apply to (empty: every one).
type plantDoc struct {
	noise, clip, rate                   string
	noiseUsedBy, clipUsedBy, rateUsedBy string
	noClip, noRate                      string
}

// plantDocs returns the reference entries of sampler.KEY.plant and its
// fields (mechanisms.Plant).
func plantDocs(key string, d plantDoc) []Field {
	base := "sampler." + key
	used := func(u string) string {
		if u == "" {
			return base
		}
		return u
	}
	factor := func(name, what, usedBy, why string) Field {
		f := Field{Path: base + ".plant." + name, Default: "1", DefaultNote: "as declared"}
		if what == "" {
			f.Range, f.UsedBy = "not allowed: "+why+" (only 1, the declared value, is accepted)", "none"
			f.Meaning = "Refused for this sampler (other than 1): " + why + "."
			return f
		}
		f.Range, f.UsedBy, f.Example = posRange, used(usedBy), "0.5"
		f.Meaning = "The run multiplies " + what + " by this factor f; the guarantees, claims and audit bounds keep the declared value. Where it does not apply only 1 is accepted."
		return f
	}
	return []Field{
		{Path: base + ".plant", Default: "{}", DefaultNote: "no planted bug", UsedBy: base, Example: "{noise: 0.5}",
			Meaning: "A deliberately planted bug, to measure an audit's power: the sampler runs with the deviations set here while everything that declares its privacy — the theorem bounds, the claims and audit bounds — keeps the declared configuration. The sampler's name in the report ends with [planted: …] and a note states the declared and the run values. Fields that do not apply to the configuration are refused unless they are 1."},
		factor("noise", d.noise, d.noiseUsedBy, ""),
		factor("clip", d.clip, d.clipUsedBy, d.noClip),
		factor("rate", d.rate, d.rateUsedBy, d.noRate),
		{Path: base + ".plant.steps", Default: "0", Range: "[0, 2^40]", UsedBy: base, Example: "3",
			Meaning: "Extra iterations k, run before the declared ones: a release the schedule places after t iterations is made after t + k, while its guarantee still counts t."},
	}
}

// samplerByKey returns the entry of a sampler key (the zero entry for an
// unknown key).
func samplerByKey(key string) samplerEntry {
	for _, e := range samplerRegistry {
		if e.Key == key {
			return e
		}
	}
	return samplerEntry{}
}

// samplerDocs returns every sampler's reference entries.
func samplerDocs() []Field {
	var out []Field
	for _, e := range samplerRegistry {
		out = append(out, e.Docs...)
	}
	return out
}

// chainSamplers lists the keys of the step-by-step samplers ("sgld, ula,
// …"), for the reference.
var chainSamplers = func() string {
	var keys []string
	for _, e := range samplerRegistry {
		if e.Chain {
			keys = append(keys, e.Key)
		}
	}
	return strings.Join(keys, ", ")
}()

// sampler returns the chosen step-by-step sampler: the value of the set
// field when it is a mechanisms.Sampler (nil for the exact sampler, a
// program, or none).
func (s SamplerConfig) sampler() mechanisms.Sampler {
	v := reflect.ValueOf(s)
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		if ms, ok := f.Interface().(mechanisms.Sampler); ok {
			return ms
		}
	}
	return nil
}
