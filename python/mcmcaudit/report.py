"""Reports of `audit run` and `audit analyze`, and ε from counts, as Python objects."""

import html as _html
import json
from typing import Any, Dict, List, Optional


def _get(d, *keys, default=None):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


class Release:
    """One release point of a report: its label and the numbers of its row.

    epsilon_lb: the Clopper-Pearson region bound (Heller-Fetaya eq. 12) on
    the evaluation runs, at the report's test confidence; mu_lb: the
    rigorous lower bound on the GDP parameter μ; epsilon_if_gaussian: the
    ε(δ) that mu_lb implies, valid only if the trade-off curve is Gaussian
    (not a lower bound on ε); ceiling: the largest ε_lb these run counts
    allow; fp, negatives, fn, positives: the error counts behind epsilon_lb;
    attack: the attack chosen on the training runs; claims: one dict per
    claim (name, covered, epsilon_at_delta; in a canary report also
    rejected and test, the claim's test on this release's guesses) as in
    the JSON. A multi-run report tests each claim once: Report.claim_tests.
    In a canary (one-run) report the same attributes hold its bounds:
    epsilon_lb the one-run bound of Steinke, Nasr & Jagielski 2023, mu_lb
    the f-DP bound of Mahloujifar, Melis & Chaudhuri 2024, and guesses
    (canaries, guesses, correct) the guesses behind epsilon_lb (None in a
    multi-run report, whose fp, negatives, fn, positives are None here).
    """

    raw: Dict[str, Any]
    label: Optional[str]
    iteration: Optional[int]
    guesses: Optional[Dict[str, int]]
    epsilon_lb: Optional[float]
    estimator: Optional[str]
    confidence: Optional[float]
    delta: Optional[float]
    fp: Optional[int]
    negatives: Optional[int]
    fn: Optional[int]
    positives: Optional[int]
    mu_lb: Optional[float]
    epsilon_if_gaussian: Optional[float]
    ceiling: Optional[float]
    attack: Optional[str]
    claims: List[Dict[str, Any]]
    utility: Dict[str, Any]

    def __init__(self, point: Dict[str, Any]) -> None:
        self.raw = point
        self.label = _get(point, "point", "label")
        self.iteration = _get(point, "point", "iteration")
        # Either design: the multi-run bounds (region, gdp) or the one-run
        # bounds (one_run, one_run_fdp), of one shape; an audit that leaves
        # the region bound out rests on its first estimator.
        head, best = _headline_bound(point)
        region = head or {}
        gdp = point.get("gdp") or point.get("one_run_fdp") or {}
        self.guesses = region.get("guesses")
        self.epsilon_lb = _float(region.get("epsilon"))
        self.estimator = region.get("estimator")
        self.confidence = region.get("confidence")
        self.delta = region.get("delta")
        counts = region.get("counts") or {}
        self.fp, self.negatives = counts.get("fp"), counts.get("negatives")
        self.fn, self.positives = counts.get("fn"), counts.get("positives")
        # The JSON leaves out a μ of 0.
        self.mu_lb = _mu(gdp)
        self.epsilon_if_gaussian = _float(gdp.get("epsilon"))
        self.ceiling = _float(_get(point, "ceiling", "epsilon"))
        attacks = point.get("attacks") or []
        self.attack = attacks[best].get("attack") if isinstance(best, int) and 0 <= best < len(attacks) else None
        self.claims = point.get("claims") or []
        self.utility = point.get("utility") or {}

    def __repr__(self):
        return "Release(%r, epsilon_lb=%s, mu_lb=%s, FP %s/%s, FN %s/%s)" % (
            self.label, _num(self.epsilon_lb), _num(self.mu_lb), self.fp, self.negatives, self.fn, self.positives)


def _headline_bound(point):
    """The bound the headline rests on at a point, and the index of its attack.

    The JSON writes each estimator's best attack first, in the audit's order
    ("best" for the region bound, "best_NAME" for estimator NAME, whose bound
    is under NAME); the headline's estimator is the region bound or the
    one-run bound when listed, else the first (as the tool chooses it).
    """
    names = []
    for k in point:
        if k == "best":
            names.append(("region", point[k]))
        elif k.startswith("best_"):
            names.append((k[len("best_"):], point[k]))
    for name, best in names:
        if name in ("region", "one_run"):
            return point.get(name), best
    if names:
        return point.get(names[0][0]), names[0][1]
    return None, None


def _float(x):
    """A number of the JSON: the tool writes infinities as the strings "+Inf" and "-Inf"."""
    if isinstance(x, str):
        return float(x.replace("Inf", "inf"))
    return x


def _mu(gdp):
    """μ of a GDP estimate (the JSON leaves out a μ of 0), or None without one."""
    if not gdp:
        return None
    return float(gdp.get("mu", 0.0))


def _num(x):
    return "None" if x is None else "%.4f" % x


class Report:
    """The report of an audit (`audit run`) or of precomputed samples (`audit analyze`).

    The numbers are attributes: `epsilon_lb` (the headline ε lower bound,
    at the release point chosen on the training runs), `mu_lb` (that
    release's lower bound on the GDP μ), `epsilon_if_gaussian`, `ceiling`,
    `headline` (its label), `estimator`, `confidence` (of each bound),
    `delta`, `runs` (all runs), `train_runs`, `eval_runs`, `verdict` ("no
    claim", "not refuted" or "VIOLATION"), `claims`, `claim_tests` (the
    one test of each claim in a multi-run report: the release, attack and
    rule chosen for it on the selection runs, and its `refutation`), and
    per release point
    `releases` (a list of Release) and the dicts `epsilon_lb_per_release`
    and `mu_lb_per_release`, by label. `tightness` says how much of the
    tightest claim covering the headline's release the audit proves: a
    dict with `epsilon` (ε_lb over that claim's ε at δ; 0 when that ε is
    infinite) and `epsilon_claim` (its name), and where a claim is μ-GDP
    `mu` (μ_lb / μ) and `mu_claim`, and `exact` (ε_lb over the exact ε)
    where the report has it; None when no claim covers the headline. `to_dict()` is the tool's JSON
    report, `text` its text table, `html` its HTML page (shown inline in a
    notebook by `_repr_html_`), `exit_code` 0 or 1 (VIOLATION).
    """

    text: str
    html: Optional[str]
    exit_code: int
    name: Optional[str]
    verdict: Optional[str]
    confidence: Optional[float]
    test_confidence: Optional[float]
    delta: Optional[float]
    runs: Optional[int]
    train_runs: Optional[int]
    eval_runs: Optional[int]
    claims: List[Any]
    claim_tests: List[Dict[str, Any]]
    seed: Optional[int]
    releases: List[Release]
    epsilon_lb_per_release: Dict[Optional[str], Optional[float]]
    mu_lb_per_release: Dict[Optional[str], Optional[float]]
    headline_release: Optional[Release]
    headline: Optional[str]
    epsilon_lb: Optional[float]
    estimator: Optional[str]
    fp: Optional[int]
    negatives: Optional[int]
    fn: Optional[int]
    positives: Optional[int]
    guesses: Optional[Dict[str, int]]
    mu_lb: Optional[float]
    epsilon_if_gaussian: Optional[float]
    ceiling: Optional[float]
    tightness: Optional[Dict[str, Any]]

    def __init__(self, doc: Dict[str, Any], text: str = "", html: Optional[str] = None, exit_code: int = 0) -> None:
        self._doc = doc
        self.text = text
        self.html = html
        self.exit_code = exit_code
        r = doc.get("report", doc)
        self.name = r.get("name")
        self.verdict = r.get("verdict")
        self.confidence = r.get("confidence")
        self.test_confidence = r.get("test_confidence")
        self.delta = r.get("delta")
        self.runs = r.get("trials")
        self.train_runs = r.get("train_runs")
        self.eval_runs = r.get("eval_runs")
        self.claims = r.get("claims") or []
        self.claim_tests = r.get("claim_tests") or []
        self.seed = r.get("seed")
        self.releases = [Release(p) for p in r.get("points") or []]
        self.epsilon_lb_per_release = {p.label: p.epsilon_lb for p in self.releases}
        self.mu_lb_per_release = {p.label: p.mu_lb for p in self.releases}
        head = r.get("headline")
        self.headline_release = self.releases[head] if isinstance(head, int) and 0 <= head < len(self.releases) else None
        self.headline = self.headline_release.label if self.headline_release else None
        est = r.get("epsilon") or {}
        self.epsilon_lb = _float(est.get("epsilon"))
        self.estimator = est.get("estimator")
        self.fp, self.negatives = _get(est, "counts", "fp"), _get(est, "counts", "negatives")
        self.fn, self.positives = _get(est, "counts", "fn"), _get(est, "counts", "positives")
        # A canary (one-run) report: the headline's guesses instead of counts.
        self.guesses = est.get("guesses")
        h = self.headline_release
        self.mu_lb = h.mu_lb if h else None
        self.epsilon_if_gaussian = h.epsilon_if_gaussian if h else None
        self.ceiling = h.ceiling if h else None
        t = r.get("tightness")
        self.tightness = {k: (_float(v) if k in ("epsilon", "mu", "exact") else v) for k, v in t.items()} if t else None

    @property
    def violation(self) -> bool:
        """True when a claim was refuted (verdict "VIOLATION")."""
        return self.verdict == "VIOLATION"

    def to_dict(self) -> Dict[str, Any]:
        """The tool's JSON report, as a dict (a copy)."""
        return json.loads(json.dumps(self._doc))

    def _repr_html_(self) -> Optional[str]:
        if not self.html:
            return None
        # An iframe keeps the report's styles out of the notebook's page.
        return ('<iframe srcdoc="%s" style="width: 100%%; height: 720px; border: 1px solid #ccc" '
                'sandbox=""></iframe>' % _html.escape(self.html, quote=True))

    def __str__(self):
        return self.text or repr(self)

    def __repr__(self):
        if self.epsilon_lb is None:
            return "Report(%r, verdict=%r)" % (self.name, self.verdict)
        if self.guesses:
            g = self.guesses
            return ("Report(%r: epsilon_lb=%.4f at %r [%s; confidence %g; delta = %g; %s/%s guesses correct, %s canaries], "
                    "mu_lb=%s, verdict=%r)" % (self.name, self.epsilon_lb, self.headline, self.estimator, self.confidence,
                                              self.delta, g.get("correct"), g.get("guesses"), g.get("canaries"),
                                              _num(self.mu_lb), self.verdict))
        return ("Report(%r: epsilon_lb=%.4f at %r [%s; confidence %g; delta = %g; %s evaluation runs: FP %s/%s, FN %s/%s], "
                "mu_lb=%s, verdict=%r)" % (self.name, self.epsilon_lb, self.headline, self.estimator, self.confidence,
                                          self.delta, self.eval_runs, self.fp, self.negatives, self.fn, self.positives,
                                          _num(self.mu_lb), self.verdict))


class EpsilonResult:
    """ε from error counts (`audit epsilon`), or from a one-run canary audit (`--one-run`).

    epsilon_lb: the rigorous lower bound (the region bound, or the one-run
    bound of Steinke, Nasr & Jagielski 2023); mu_lb: the rigorous lower
    bound on the GDP μ; epsilon_if_gaussian: the ε(δ) that mu_lb implies,
    valid only for a Gaussian trade-off curve; ceiling: the largest bound
    these counts allow; point: the plug-in point estimate (no guarantee;
    None for one-run); estimator, confidence, delta, counts; one_run: which
    mode. `to_dict()` is the tool's JSON.
    """

    one_run: bool
    epsilon_lb: Optional[float]
    estimator: Optional[str]
    confidence: Optional[float]
    delta: Optional[float]
    counts: Optional[Dict[str, int]]
    mu_lb: Optional[float]
    epsilon_if_gaussian: Optional[float]
    ceiling: Optional[float]
    point: Optional[float]

    def __init__(self, doc: Dict[str, Any]) -> None:
        self._doc = doc
        self.one_run = "one_run" in doc
        main = doc.get("one_run" if self.one_run else "region") or {}
        gdp = doc.get("fdp" if self.one_run else "gdp") or {}
        self.epsilon_lb = _float(main.get("epsilon"))
        self.estimator = main.get("estimator")
        self.confidence = doc.get("confidence")
        self.delta = doc.get("delta")
        self.counts = doc.get("counts")
        self.mu_lb = _mu(gdp)
        self.epsilon_if_gaussian = _float(gdp.get("epsilon"))
        self.ceiling = _float(doc.get("ceiling"))
        self.point = _float(_get(doc, "point", "epsilon"))

    def to_dict(self) -> Dict[str, Any]:
        """The tool's JSON output, as a dict (a copy)."""
        return json.loads(json.dumps(self._doc))

    def __repr__(self):
        return "EpsilonResult(epsilon_lb=%s [%s; confidence %g; delta = %g; counts %s], mu_lb=%s, ceiling=%s)" % (
            _num(self.epsilon_lb), self.estimator, self.confidence, self.delta, self.counts, _num(self.mu_lb),
            _num(self.ceiling))
