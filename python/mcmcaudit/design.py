"""The audit's design and claims as small values: Canaries (the one-run design), EpsilonDelta, GDP, Theorems.

Each turns into the scenario section the tool reads (docs/scenario.md):
Canaries into audit.canaries, a claim into the claim section. The dicts
that audit() and analyze() took before ({"gdp": 1.0}, {"epsilon": 1,
"delta": 1e-5}, {"count": 200, "kind": "random", "guesses": 40}) are still
accepted and mean the same.
"""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Mapping, Optional, Union


@dataclass(frozen=True)
class Canaries:
    """The one-run (canary) design of Steinke, Nasr & Jagielski 2023: audit.canaries of the scenario.

    count: m, the number of canaries, each in the run's training data with
    probability 1/2 (from the audit seed); kind: how the tool makes them
    from D ("random", "mislabel", "deepfool"; "gradient" needs a built-in
    sampler); guesses: r, the number of guesses fixed in advance ("in" for
    the ceil(r/2) highest scores, "out" for the floor(r/2) lowest; None:
    the tool's default, count/10); runs: the number of pooled runs (None:
    one). `extra` holds any other field of audit.canaries (e.g. {"range":
    [-1, 1]}), written as it is.
    """

    count: int
    kind: str = "random"
    guesses: Optional[int] = None
    runs: Optional[int] = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def section(self) -> Dict[str, Any]:
        """The audit.canaries mapping of the scenario."""
        s: Dict[str, Any] = {"count": self.count, "kind": self.kind}
        if self.guesses is not None:
            s["guesses"] = self.guesses
        if self.runs is not None:
            s["runs"] = self.runs
        s.update(self.extra)
        return s

    @classmethod
    def from_value(cls, value: Union["Canaries", Mapping[str, Any]]) -> "Canaries":
        """A Canaries from itself or from a dict of audit.canaries' fields."""
        if isinstance(value, Canaries):
            return value
        if not isinstance(value, Mapping):
            raise TypeError("canaries must be mcmcaudit.Canaries or a dict of audit.canaries' fields, got %s"
                            % type(value).__name__)
        d = dict(value)
        if "count" not in d:
            raise ValueError("canaries: count (the number of canaries) is required, got %r" % (value,))
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        return cls(**{k: d.pop(k) for k in list(d) if k in known}, extra=d)


@dataclass(frozen=True)
class EpsilonDelta:
    """The claim that the sampler is (epsilon, delta)-DP: claim.epsilon and claim.delta."""

    epsilon: float
    delta: float

    def section(self) -> Dict[str, Any]:
        """The claim mapping of the scenario."""
        return {"epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class GDP:
    """The claim that the sampler is mu-GDP (Dong, Roth & Su 2019): claim.gdp."""

    mu: float

    def section(self) -> Dict[str, Any]:
        """The claim mapping of the scenario."""
        return {"gdp": self.mu}


@dataclass(frozen=True)
class Theorems:
    """Test every applicable theoretical upper bound of the papers (claim.theorems; see `audit bounds`)."""

    def section(self) -> Dict[str, Any]:
        """The claim mapping of the scenario."""
        return {"theorems": True}


Claim = Union[EpsilonDelta, GDP, Theorems]
"""One claimed upper bound."""

ClaimArg = Union[Claim, Iterable[Claim], Mapping[str, Any]]
"""What audit() and analyze() take as `claim`: a claim, several, or the claim section as a dict."""


def claim_section(claim: ClaimArg) -> Dict[str, Any]:
    """The scenario's claim section for `claim`: one claim, a list of claims, or that section as a dict."""
    if isinstance(claim, Mapping):
        return dict(claim)
    if isinstance(claim, (EpsilonDelta, GDP, Theorems)):
        return claim.section()
    if isinstance(claim, (str, bytes)) or not isinstance(claim, Iterable):
        raise TypeError("claim must be EpsilonDelta, GDP, Theorems, a list of them or a dict, got %r" % (claim,))
    out: Dict[str, Any] = {}
    for c in claim:
        if not isinstance(c, (EpsilonDelta, GDP, Theorems)):
            raise TypeError("claim: each claim must be EpsilonDelta, GDP or Theorems, got %r" % (c,))
        s = c.section()
        if set(s) & set(out):
            raise ValueError("claim: at most one claim of each kind, got %r" % (claim,))
        out.update(s)
    return out
