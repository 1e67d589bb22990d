"""mcmcaudit from Python: audit a sampler written in Python, precomputed samples, or error counts.

    import mcmcaudit as ma

    report = ma.audit(my_sampler.run, dim=1, releases=["final"], d=D, d_prime=D_prime,
                      trials=2000, claim=ma.GDP(1.0))
    ma.audit(my_sampler.run, dim=5, releases=["final"], model=MODEL, data=DATA,   # one run
             canaries=ma.Canaries(count=200, kind="random", guesses=40))
    report.epsilon_lb, report.mu_lb, report.verdict      # numbers as attributes
    report                                               # the HTML report, in a notebook

    ma.analyze(samples_d, samples_d_prime)              # NumPy arrays of runs
    ma.epsilon(fp=3, negatives=500, fn=7, positives=500) # ε from counts

The work is done by mcmcaudit's `audit` binary (found by find_binary).
`serve` (the mcmcaudit/1 protocol, for a sampler run as a program) and the
seed helpers are in mcmcaudit.protocol, standard library only.
"""

from ._binary import cache_dir, find_binary
from ._version import __version__
from .api import analyze, audit, epsilon, epsilon_one_run
from .design import GDP, Canaries, EpsilonDelta, Theorems
from .errors import AuditError
from .protocol import (Result, jax_key, legacy_seed_words, numpy_generator, numpy_random_state, seed32, serve,
                       standalone, torch_generator)
from .report import EpsilonResult, Release, Report

# Tracebacks name the classes where users import them from. (The annotations of these classes are
# evaluated where they are defined, so typing.get_type_hints still resolves them.)
for _cls in (AuditError, Canaries, EpsilonDelta, EpsilonResult, GDP, Release, Report, Theorems):
    _cls.__module__ = __name__
del _cls

__all__ = [
    "GDP", "AuditError", "Canaries", "EpsilonDelta", "EpsilonResult", "Release", "Report", "Result", "Theorems",
    "__version__", "analyze", "audit", "cache_dir", "epsilon",
    "epsilon_one_run", "find_binary", "jax_key", "legacy_seed_words", "numpy_generator", "numpy_random_state",
    "seed32", "serve", "standalone", "torch_generator",
]
